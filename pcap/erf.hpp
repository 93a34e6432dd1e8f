// ERF (Endace Extensible Record Format) record header, 16 bytes, for native
// IB frames in pcap files of linktype 197 (LINKTYPE_ERF) with records of
// type 21 (INFINIBAND): Wireshark 4.0 dissects those, while it refuses
// linktype 247. The IB frame (LRH through VCRC) follows the header directly.
//
//  0  ts    8  little-endian 32.32 fixed point: seconds, binary fraction
//  8  type  1  bit 7: extension headers follow; bits 0-6: record type
//  9  flags 1  bits 0-1 capture interface, bit 2 varying record length,
//              bit 3 truncated, bit 4 rx error, bit 5 DS error
// 10  rlen  2  big-endian: record length, this header included
// 12  lctr  2  big-endian: loss counter
// 14  wlen  2  big-endian: frame length on the wire
//
// (Wireshark wiretap/erf_record.h and erf.c; libpcap pcap-common.c.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"

namespace rdmasim {

inline constexpr uint8_t kErfTypeInfiniband = 21;
inline constexpr uint8_t kErfFlagVaryingLength = 0x04;
inline constexpr uint8_t kErfFlagTruncated = 0x08;

// Nanoseconds since the epoch to ERF's 32.32 fixed point, rounded to nearest
// so that converting back (as Wireshark does, rounding) gives `ns` again.
constexpr uint64_t erf_timestamp_from_ns(uint64_t ns) {
  const uint64_t secs = ns / 1'000'000'000;
  const uint64_t rem = ns % 1'000'000'000;
  return (secs << 32) + ((rem << 32) + 500'000'000) / 1'000'000'000;  // a fraction of 2^32 carries
}
constexpr uint64_t erf_timestamp_to_ns(uint64_t ts) {
  return (ts >> 32) * 1'000'000'000 + (((ts & 0xFFFFFFFF) * 1'000'000'000 + (uint64_t{1} << 31)) >> 32);
}

template <class B>
class ErfViewT {
  template <class>
  friend class ErfViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit ErfViewT(std::span<B> b) : b_(b) {}

 public:
  static constexpr size_t kLen = 16;

  static std::optional<ErfViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return ErfViewT(b);
  }
  operator ErfViewT<const std::byte>() const requires kMut { return ErfViewT<const std::byte>(b_); }

  uint64_t timestamp() const { return uint64_t{load_le32(b_.subspan(4, 4))} << 32 | load_le32(b_.first(4)); }
  uint8_t type() const { return u8(b_[8]) & 0x7F; }
  bool has_extension() const { return u8(b_[8]) & 0x80; }
  uint8_t flags() const { return u8(b_[9]); }
  uint16_t rlen() const { return load_be16(b_.subspan(10, 2)); }
  uint16_t lctr() const { return load_be16(b_.subspan(12, 2)); }
  uint16_t wlen() const { return load_be16(b_.subspan(14, 2)); }
  std::span<B> header() const { return b_.first(kLen); }
  std::span<B> payload() const { return b_.subspan(kLen); }  // the frame

  void set_timestamp(uint64_t v) requires kMut {
    store_le32(b_.first(4), static_cast<uint32_t>(v));
    store_le32(b_.subspan(4, 4), static_cast<uint32_t>(v >> 32));
  }
  void set_type(uint8_t v) requires kMut { store_u8(b_.subspan(8), v); }
  void set_flags(uint8_t v) requires kMut { store_u8(b_.subspan(9), v); }
  void set_rlen(uint16_t v) requires kMut { store_be16(b_.subspan(10, 2), v); }
  void set_lctr(uint16_t v) requires kMut { store_be16(b_.subspan(12, 2), v); }
  void set_wlen(uint16_t v) requires kMut { store_be16(b_.subspan(14, 2), v); }
};

using ErfView = ErfViewT<std::byte>;
using ConstErfView = ErfViewT<const std::byte>;

struct ErfHeader {
  static constexpr size_t kLen = ErfView::kLen;

  uint64_t timestamp = 0;                 // erf_timestamp_from_ns
  uint8_t type = kErfTypeInfiniband;      // the whole byte: bit 7 flags extension headers
  uint8_t flags = kErfFlagVaryingLength;  // no padding to 8 bytes after the frame
  uint16_t rlen = kLen;                   // header and frame
  uint16_t lctr = 0;
  uint16_t wlen = 0;  // frame length

  // The header of a record holding a whole IB frame of `frame_len` bytes.
  static ErfHeader infiniband(uint64_t ns, uint16_t frame_len) {
    return {erf_timestamp_from_ns(ns),
            kErfTypeInfiniband,
            kErfFlagVaryingLength,
            static_cast<uint16_t>(kLen + frame_len),
            0,
            frame_len};
  }

  static ErfHeader parse(ConstErfView v) {
    return {v.timestamp(), static_cast<uint8_t>(u8(v.header()[8])), v.flags(), v.rlen(), v.lctr(), v.wlen()};
  }
  void emit(ErfView v) const {
    v.set_timestamp(timestamp);
    v.set_type(type);
    v.set_flags(flags);
    v.set_rlen(rlen);
    v.set_lctr(lctr);
    v.set_wlen(wlen);
  }
  bool operator==(const ErfHeader&) const = default;
};

}  // namespace rdmasim
