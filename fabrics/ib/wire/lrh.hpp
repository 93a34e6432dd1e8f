// Local Route Header (IBA 7.7), 8 bytes, first in every native IB packet.
//
//  0  VL(4) LVer(4) | SL(4) Rsv(2) LNH(2) | DLID(16)
//  4  Rsv(5) PktLen(11)                   | SLID(16)
//
// PktLen (7.7.8) counts 4-byte words from the first byte of the LRH to the
// last byte before the VCRC, so it includes the ICRC. LNH (7.7.5) says what
// follows: 0 raw, 1 IP non-IBA transport, 2 IBA local (BTH), 3 IBA global (GRH).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"

namespace rdmasim {

enum class Lnh : uint8_t { Raw = 0, IpNonIba = 1, IbaLocal = 2, IbaGlobal = 3 };

inline constexpr uint16_t kPermissiveLid = 0xFFFF;
inline constexpr uint16_t kMulticastLidBase = 0xC000;  // 0xC000..0xFFFE (IBA 4.1.2)
inline constexpr uint8_t kVl15 = 15;                   // subnet management VL

// PktLen for a packet of `bytes` from the LRH through the ICRC (a multiple of 4).
constexpr uint16_t lrh_pkt_len(size_t bytes) { return static_cast<uint16_t>(bytes / 4); }

template <class B>
class LrhViewT {
  template <class>
  friend class LrhViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit LrhViewT(std::span<B> b) : b_(b) {}

 public:
  static constexpr size_t kLen = 8;
  static constexpr size_t kVcrcLen = 2;

  static std::optional<LrhViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return LrhViewT(b);
  }
  operator LrhViewT<const std::byte>() const requires kMut { return LrhViewT<const std::byte>(b_); }

  uint8_t vl() const { return u8(b_[0]) >> 4; }
  uint8_t lver() const { return u8(b_[0]) & 0x0F; }
  uint8_t sl() const { return u8(b_[1]) >> 4; }
  Lnh lnh() const { return Lnh(u8(b_[1]) & 0x3); }
  uint16_t dlid() const { return load_be16(b_.subspan(2, 2)); }
  uint16_t pkt_len() const { return load_be16(b_.subspan(4, 2)) & 0x07FF; }
  uint16_t slid() const { return load_be16(b_.subspan(6, 2)); }
  std::span<B> header() const { return b_.first(kLen); }
  std::span<B> payload() const { return b_.subspan(kLen); }

  void set_vl_lver(uint8_t vl, uint8_t lver) requires kMut {
    store_u8(b_, static_cast<uint8_t>(vl << 4 | (lver & 0xF)));
  }
  // A switch moves a packet to another VL (IBA 7.6.5); VL is outside the ICRC.
  void set_vl(uint8_t vl) requires kMut { set_vl_lver(vl, lver()); }
  void set_sl_lnh(uint8_t sl, Lnh lnh) requires kMut {
    store_u8(b_.subspan(1), static_cast<uint8_t>(sl << 4 | static_cast<uint8_t>(lnh)));
  }
  void set_dlid(uint16_t v) requires kMut { store_be16(b_.subspan(2, 2), v); }
  void set_pkt_len(uint16_t v) requires kMut { store_be16(b_.subspan(4, 2), v & 0x07FF); }
  void set_slid(uint16_t v) requires kMut { store_be16(b_.subspan(6, 2), v); }
};

using LrhView = LrhViewT<std::byte>;
using ConstLrhView = LrhViewT<const std::byte>;

struct Lrh {
  static constexpr size_t kLen = LrhView::kLen;

  uint8_t vl = 0;
  uint8_t lver = 0;  // link version 0 (7.7.2)
  uint8_t sl = 0;
  Lnh lnh = Lnh::IbaLocal;
  uint16_t dlid = 0;
  uint16_t pkt_len = 0;  // 4-byte words, LRH through ICRC
  uint16_t slid = 0;

  static Lrh parse(ConstLrhView v) {
    return {v.vl(), v.lver(), v.sl(), v.lnh(), v.dlid(), v.pkt_len(), v.slid()};
  }
  void emit(LrhView v) const {
    v.set_vl_lver(vl, lver);
    v.set_sl_lnh(sl, lnh);
    v.set_dlid(dlid);
    v.set_pkt_len(pkt_len);
    v.set_slid(slid);
  }
  bool operator==(const Lrh&) const = default;
};

}  // namespace rdmasim
