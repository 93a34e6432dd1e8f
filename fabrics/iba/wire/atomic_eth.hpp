// Atomic Extended Transport Header (IBA 9.3.4), 28 bytes, in CmpSwap and
// FetchAdd requests.
//
//  0  VA(64)           8-byte aligned remote address
//  8  R_Key(32)
// 12  Swap (or Add) Data(64)
// 20  Compare Data(64)  used by CmpSwap only
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"

namespace rdmasim {

template <class B>
class AtomicEthViewT {
  template <class>
  friend class AtomicEthViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit AtomicEthViewT(std::span<B> b) : b_(b) {}

 public:
  static constexpr size_t kLen = 28;

  static std::optional<AtomicEthViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return AtomicEthViewT(b);
  }
  operator AtomicEthViewT<const std::byte>() const requires kMut {
    return AtomicEthViewT<const std::byte>(b_);
  }

  uint64_t va() const { return load_be64(b_.first(8)); }
  uint32_t rkey() const { return load_be32(b_.subspan(8, 4)); }
  uint64_t swap_add() const { return load_be64(b_.subspan(12, 8)); }
  uint64_t compare() const { return load_be64(b_.subspan(20, 8)); }
  std::span<B> header() const { return b_.first(kLen); }
  std::span<B> payload() const { return b_.subspan(kLen); }

  void set_va(uint64_t v) requires kMut { store_be64(b_.first(8), v); }
  void set_rkey(uint32_t v) requires kMut { store_be32(b_.subspan(8, 4), v); }
  void set_swap_add(uint64_t v) requires kMut { store_be64(b_.subspan(12, 8), v); }
  void set_compare(uint64_t v) requires kMut { store_be64(b_.subspan(20, 8), v); }
};

using AtomicEthView = AtomicEthViewT<std::byte>;
using ConstAtomicEthView = AtomicEthViewT<const std::byte>;

struct AtomicEth {
  static constexpr size_t kLen = AtomicEthView::kLen;

  uint64_t va = 0;
  uint32_t rkey = 0;
  uint64_t swap_add = 0;
  uint64_t compare = 0;

  static AtomicEth parse(ConstAtomicEthView v) { return {v.va(), v.rkey(), v.swap_add(), v.compare()}; }
  void emit(AtomicEthView v) const {
    v.set_va(va);
    v.set_rkey(rkey);
    v.set_swap_add(swap_add);
    v.set_compare(compare);
  }
  bool operator==(const AtomicEth&) const = default;
};

}  // namespace rdmasim
