// Datagram Extended Transport Header (IBA 9.3.3), 8 bytes, in UD packets.
//
//  0  Q_Key(32)
//  4  Reserved(8) | SrcQP(24)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"

namespace rdmasim {

template <class B>
class DethViewT {
  template <class>
  friend class DethViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit DethViewT(std::span<B> b) : b_(b) {}

 public:
  static constexpr size_t kLen = 8;

  static std::optional<DethViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return DethViewT(b);
  }
  operator DethViewT<const std::byte>() const requires kMut { return DethViewT<const std::byte>(b_); }

  uint32_t qkey() const { return load_be32(b_.first(4)); }
  uint32_t src_qp() const { return load_be24(b_.subspan(5, 3)); }
  std::span<B> header() const { return b_.first(kLen); }
  std::span<B> payload() const { return b_.subspan(kLen); }

  void set_qkey(uint32_t v) requires kMut { store_be32(b_.first(4), v); }
  void set_src_qp(uint32_t v) requires kMut {
    store_u8(b_.subspan(4), 0);
    store_be24(b_.subspan(5, 3), v);
  }
};

using DethView = DethViewT<std::byte>;
using ConstDethView = DethViewT<const std::byte>;

struct Deth {
  static constexpr size_t kLen = DethView::kLen;

  uint32_t qkey = 0;
  uint32_t src_qp = 0;  // 24 bits

  static Deth parse(ConstDethView v) { return {v.qkey(), v.src_qp()}; }
  void emit(DethView v) const {
    v.set_qkey(qkey);
    v.set_src_qp(src_qp);
  }
  bool operator==(const Deth&) const = default;
};

}  // namespace rdmasim
