// Atomic Acknowledge Extended Transport Header (IBA 9.5.3), 8 bytes, after
// the AETH of an Atomic Acknowledge: the remote value before the operation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"

namespace rdmasim {

template <class B>
class AtomicAckEthViewT {
  template <class>
  friend class AtomicAckEthViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit AtomicAckEthViewT(std::span<B> b) : b_(b) {}

 public:
  static constexpr size_t kLen = 8;

  static std::optional<AtomicAckEthViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return AtomicAckEthViewT(b);
  }
  operator AtomicAckEthViewT<const std::byte>() const requires kMut {
    return AtomicAckEthViewT<const std::byte>(b_);
  }

  uint64_t original() const { return load_be64(b_.first(8)); }
  std::span<B> header() const { return b_.first(kLen); }
  std::span<B> payload() const { return b_.subspan(kLen); }

  void set_original(uint64_t v) requires kMut { store_be64(b_.first(8), v); }
};

using AtomicAckEthView = AtomicAckEthViewT<std::byte>;
using ConstAtomicAckEthView = AtomicAckEthViewT<const std::byte>;

struct AtomicAckEth {
  static constexpr size_t kLen = AtomicAckEthView::kLen;

  uint64_t original = 0;  // OrigRemDt

  static AtomicAckEth parse(ConstAtomicAckEthView v) { return {v.original()}; }
  void emit(AtomicAckEthView v) const { v.set_original(original); }
  bool operator==(const AtomicAckEth&) const = default;
};

}  // namespace rdmasim
