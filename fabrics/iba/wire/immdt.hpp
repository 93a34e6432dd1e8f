// Immediate Data Extended Transport Header (IBA 9.3.6), 4 bytes, in the last
// (or only) packet of SEND / RDMA WRITE with immediate.
//
// The value is the field read big-endian, as Wireshark shows
// infiniband.immdt; verbs' imm_data (__be32) holds the same four bytes, so
// imm() == ntohl(wr.imm_data).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"

namespace rdmasim {

template <class B>
class ImmDtViewT {
  template <class>
  friend class ImmDtViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit ImmDtViewT(std::span<B> b) : b_(b) {}

 public:
  static constexpr size_t kLen = 4;

  static std::optional<ImmDtViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return ImmDtViewT(b);
  }
  operator ImmDtViewT<const std::byte>() const requires kMut { return ImmDtViewT<const std::byte>(b_); }

  uint32_t imm() const { return load_be32(b_.first(4)); }
  std::span<B> header() const { return b_.first(kLen); }
  std::span<B> payload() const { return b_.subspan(kLen); }

  void set_imm(uint32_t v) requires kMut { store_be32(b_.first(4), v); }
};

using ImmDtView = ImmDtViewT<std::byte>;
using ConstImmDtView = ImmDtViewT<const std::byte>;

struct ImmDt {
  static constexpr size_t kLen = ImmDtView::kLen;

  uint32_t imm = 0;

  static ImmDt parse(ConstImmDtView v) { return {v.imm()}; }
  void emit(ImmDtView v) const { v.set_imm(imm); }
  bool operator==(const ImmDt&) const = default;
};

}  // namespace rdmasim
