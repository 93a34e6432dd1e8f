// Invalidate Extended Transport Header (IBA 9.3.7), 4 bytes, in SEND with
// Invalidate: the R_Key the responder invalidates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"

namespace rdmasim {

template <class B>
class IethViewT {
  template <class>
  friend class IethViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit IethViewT(std::span<B> b) : b_(b) {}

 public:
  static constexpr size_t kLen = 4;

  static std::optional<IethViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return IethViewT(b);
  }
  operator IethViewT<const std::byte>() const requires kMut { return IethViewT<const std::byte>(b_); }

  uint32_t rkey() const { return load_be32(b_.first(4)); }
  std::span<B> header() const { return b_.first(kLen); }
  std::span<B> payload() const { return b_.subspan(kLen); }

  void set_rkey(uint32_t v) requires kMut { store_be32(b_.first(4), v); }
};

using IethView = IethViewT<std::byte>;
using ConstIethView = IethViewT<const std::byte>;

struct Ieth {
  static constexpr size_t kLen = IethView::kLen;

  uint32_t rkey = 0;

  static Ieth parse(ConstIethView v) { return {v.rkey()}; }
  void emit(IethView v) const { v.set_rkey(rkey); }
  bool operator==(const Ieth&) const = default;
};

}  // namespace rdmasim
