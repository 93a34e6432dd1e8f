// ERF (Endace Extensible Record Format) record header, 16 bytes. Native IB
// frames are written as ERF records of type INFINIBAND inside a pcap file of
// linktype 197 (LINKTYPE_ERF): Wireshark 4.0 dissects these, while it refuses
// linktype 247 (LINKTYPE_INFINIBAND).
//
// Layout (Endace ERF types reference; Wireshark wiretap/pcap-common.c reads
// it the same way for LINKTYPE_ERF):
//   0  ts     8  little-endian 32.32 fixed point: seconds, binary fraction
//   8  type   1  bit 7: extension headers follow; bits 0..6: record type
//   9  flags  1  bits 0..1: capture interface (bit 0 is also the direction
//                Wireshark shows: set = received), bit 2: varying record
//                length, bit 3: truncated, bit 4: rx error, bit 5: DS error
//  10  rlen   2  big-endian: record length, this header included
//  12  lctr   2  big-endian: loss counter
//  14  wlen   2  big-endian: length of the frame on the wire
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "core/bytes.hpp"

namespace rdmasim::erf {

inline constexpr size_t kHeaderLen = 16;

inline constexpr uint8_t kTypeInfiniband = 21;  // ERF_TYPE_INFINIBAND: LRH onwards

inline constexpr uint8_t kFlagInterfaceMask = 0x03;
inline constexpr uint8_t kFlagVaryingLength = 0x04;  // records are not padded to 8 bytes
inline constexpr uint8_t kFlagTruncated = 0x08;

// Seconds since the epoch in ERF's 32.32 fixed point, from nanoseconds. The
// fraction is rounded to nearest so that a reader converting it back to
// nanoseconds (as Wireshark does, rounding) recovers `ns` exactly.
constexpr uint64_t timestamp_from_ns(uint64_t ns) {
  const uint64_t secs = ns / 1'000'000'000;
  const uint64_t rem = ns % 1'000'000'000;
  const uint64_t frac = ((rem << 32) + 500'000'000) / 1'000'000'000;  // rem < 2^30: no overflow
  return secs << 32 | frac;  // rem <= 1e9 - 1 keeps frac below 2^32 - 0.5 + 0.5
}

class HeaderView {
  std::span<std::byte> b_;
  explicit HeaderView(std::span<std::byte> b) : b_(b) {}

 public:
  static std::optional<HeaderView> check(std::span<std::byte> b) {
    if (b.size() < kHeaderLen) return std::nullopt;
    return HeaderView(b.first(kHeaderLen));
  }

  uint64_t timestamp() const {
    return uint64_t{load_le32(b_.subspan(4, 4))} << 32 | load_le32(b_.subspan(0, 4));
  }
  uint8_t type() const { return u8(b_[8]); }
  uint8_t flags() const { return u8(b_[9]); }
  uint16_t rlen() const { return load_be16(b_.subspan(10, 2)); }
  uint16_t lctr() const { return load_be16(b_.subspan(12, 2)); }
  uint16_t wlen() const { return load_be16(b_.subspan(14, 2)); }

  void set_timestamp(uint64_t v) {
    store_le32(b_.subspan(0, 4), static_cast<uint32_t>(v));
    store_le32(b_.subspan(4, 4), static_cast<uint32_t>(v >> 32));
  }
  void set_type(uint8_t v) { store_u8(b_.subspan(8, 1), v); }
  void set_flags(uint8_t v) { store_u8(b_.subspan(9, 1), v); }
  void set_rlen(uint16_t v) { store_be16(b_.subspan(10, 2), v); }
  void set_lctr(uint16_t v) { store_be16(b_.subspan(12, 2), v); }
  void set_wlen(uint16_t v) { store_be16(b_.subspan(14, 2), v); }
};

}  // namespace rdmasim::erf
