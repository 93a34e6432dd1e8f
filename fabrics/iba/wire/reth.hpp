// RDMA Extended Transport Header (IBA 9.3.2), 16 bytes: in the first (or
// only) packet of an RDMA WRITE and in an RDMA READ request.
//
//  0  VA(64)  virtual address of the remote buffer
//  8  R_Key(32)
// 12  DMA Length(32)  of the whole message, not of this packet
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"

namespace rdmasim {

template <class B>
class RethViewT {
  template <class>
  friend class RethViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit RethViewT(std::span<B> b) : b_(b) {}

 public:
  static constexpr size_t kLen = 16;

  static std::optional<RethViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return RethViewT(b);
  }
  operator RethViewT<const std::byte>() const requires kMut { return RethViewT<const std::byte>(b_); }

  uint64_t va() const { return load_be64(b_.first(8)); }
  uint32_t rkey() const { return load_be32(b_.subspan(8, 4)); }
  uint32_t dma_len() const { return load_be32(b_.subspan(12, 4)); }
  std::span<B> header() const { return b_.first(kLen); }
  std::span<B> payload() const { return b_.subspan(kLen); }

  void set_va(uint64_t v) requires kMut { store_be64(b_.first(8), v); }
  void set_rkey(uint32_t v) requires kMut { store_be32(b_.subspan(8, 4), v); }
  void set_dma_len(uint32_t v) requires kMut { store_be32(b_.subspan(12, 4), v); }
};

using RethView = RethViewT<std::byte>;
using ConstRethView = RethViewT<const std::byte>;

struct Reth {
  static constexpr size_t kLen = RethView::kLen;

  uint64_t va = 0;
  uint32_t rkey = 0;
  uint32_t dma_len = 0;

  static Reth parse(ConstRethView v) { return {v.va(), v.rkey(), v.dma_len()}; }
  void emit(RethView v) const {
    v.set_va(va);
    v.set_rkey(rkey);
    v.set_dma_len(dma_len);
  }
  bool operator==(const Reth&) const = default;
};

}  // namespace rdmasim
