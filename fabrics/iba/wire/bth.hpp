// Base Transport Header (IBA 9.2), 12 bytes, in every IBA transport packet.
//
//  0  OpCode(8) | SE(1) M(1) PadCnt(2) TVer(4) | P_Key(16)
//  4  F(1) B(1) Resv6(6) | DestQP(24)
//  8  A(1) Resv7(7)      | PSN(24)
//
// Byte 4 is "Resv8a" in the base spec (variant: masked to ones in the ICRC);
// RoCE v2 (annex A17.9) and IBA 1.3 give its top bits to FECN and BECN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"
#include "fabrics/iba/opcodes.hpp"

namespace rdmasim {

inline constexpr uint16_t kDefaultPKey = 0xFFFF;  // full-member default partition

// PadCnt (9.2.4): bytes that bring the payload to a multiple of 4.
constexpr uint8_t iba_pad_count(size_t payload_len) {
  return static_cast<uint8_t>((4 - payload_len % 4) % 4);
}

template <class B>
class BthViewT {
  template <class>
  friend class BthViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit BthViewT(std::span<B> b) : b_(b) {}

  void set_bits(size_t byte, uint8_t mask, uint8_t v) requires kMut {
    b_[byte] = std::byte(static_cast<uint8_t>((u8(b_[byte]) & ~mask) | (v & mask)));
  }

 public:
  static constexpr size_t kLen = 12;

  static std::optional<BthViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return BthViewT(b);
  }
  operator BthViewT<const std::byte>() const requires kMut { return BthViewT<const std::byte>(b_); }

  IbaOpcode opcode() const { return IbaOpcode(u8(b_[0])); }
  bool solicited() const { return u8(b_[1]) & 0x80; }
  bool mig_req() const { return u8(b_[1]) & 0x40; }
  uint8_t pad_count() const { return (u8(b_[1]) >> 4) & 0x3; }
  uint8_t tver() const { return u8(b_[1]) & 0x0F; }
  uint16_t pkey() const { return load_be16(b_.subspan(2, 2)); }
  bool fecn() const { return u8(b_[4]) & 0x80; }
  bool becn() const { return u8(b_[4]) & 0x40; }
  uint32_t dest_qp() const { return load_be24(b_.subspan(5, 3)); }
  bool ack_req() const { return u8(b_[8]) & 0x80; }
  uint32_t psn() const { return load_be24(b_.subspan(9, 3)); }

  std::span<B> header() const { return b_.first(kLen); }
  std::span<B> payload() const { return b_.subspan(kLen); }  // extension headers onwards

  void set_opcode(uint8_t v) requires kMut { store_u8(b_, v); }
  void set_solicited(bool v) requires kMut { set_bits(1, 0x80, v ? 0x80 : 0); }
  void set_mig_req(bool v) requires kMut { set_bits(1, 0x40, v ? 0x40 : 0); }
  void set_pad_count(uint8_t v) requires kMut { set_bits(1, 0x30, static_cast<uint8_t>(v << 4)); }
  void set_tver(uint8_t v) requires kMut { set_bits(1, 0x0F, v); }
  void set_pkey(uint16_t v) requires kMut { store_be16(b_.subspan(2, 2), v); }
  void set_fecn(bool v) requires kMut { set_bits(4, 0x80, v ? 0x80 : 0); }
  void set_becn(bool v) requires kMut { set_bits(4, 0x40, v ? 0x40 : 0); }
  void set_dest_qp(uint32_t v) requires kMut { store_be24(b_.subspan(5, 3), v); }
  // Resv7 is zero on send (9.2.9).
  void set_ack_req(bool v) requires kMut { store_u8(b_.subspan(8), v ? 0x80 : 0); }
  void set_psn(uint32_t v) requires kMut { store_be24(b_.subspan(9, 3), v); }
};

using BthView = BthViewT<std::byte>;
using ConstBthView = BthViewT<const std::byte>;

struct Bth {
  static constexpr size_t kLen = BthView::kLen;

  IbaOpcode opcode = RC_SEND_ONLY;
  bool solicited = false;
  bool mig_req = false;
  uint8_t pad_count = 0;
  uint8_t tver = 0;  // 9.2.5: transport header version 0
  uint16_t pkey = kDefaultPKey;
  bool fecn = false;
  bool becn = false;
  uint32_t dest_qp = 0;  // 24 bits
  bool ack_req = false;
  uint32_t psn = 0;  // 24 bits

  static Bth parse(ConstBthView v) {
    return {v.opcode(), v.solicited(), v.mig_req(), v.pad_count(), v.tver(), v.pkey(),
            v.fecn(),   v.becn(),      v.dest_qp(), v.ack_req(),   v.psn()};
  }
  // Writes every bit of the 12 bytes; the reserved bits become zero.
  void emit(BthView v) const {
    v.set_opcode(opcode);
    store_u8(v.header().subspan(1), static_cast<uint8_t>((solicited ? 0x80 : 0) | (mig_req ? 0x40 : 0) |
                                                         (pad_count & 0x3) << 4 | (tver & 0x0F)));
    v.set_pkey(pkey);
    store_u8(v.header().subspan(4), static_cast<uint8_t>((fecn ? 0x80 : 0) | (becn ? 0x40 : 0)));
    v.set_dest_qp(dest_qp);
    v.set_ack_req(ack_req);
    v.set_psn(psn);
  }
  bool operator==(const Bth&) const = default;
};

}  // namespace rdmasim
