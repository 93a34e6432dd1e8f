// The Internet checksum (RFC 1071): the ones' complement of the ones'
// complement sum of big-endian 16-bit words. IPv4, UDP and TCP use it.
//
//   uint32_t s = pseudo_header_sum(src, dst, kIpProtoUdp, len);
//   s = checksum_add(s, udp_bytes);          // checksum field zero
//   uint16_t c = checksum_fold(s);
//
// checksum_add pads an odd final byte with zero, so every chunk but the last
// must have an even length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/bytes.hpp"
#include "fabrics/ip/wire/address.hpp"

namespace rdmasim {

inline constexpr uint8_t kIpProtoTcp = 6;
inline constexpr uint8_t kIpProtoUdp = 17;

// Ones' complement partial sum of `bytes` added to `sum`. The result is a
// partial sum again (not complemented), at most 0xFFFF.
inline uint32_t checksum_add(uint32_t sum, std::span<const std::byte> bytes) {
  // A big-endian 32-bit word hi:lo is congruent to hi + lo modulo 0xFFFF, so
  // summing 32-bit words into 64 bits and folding at the end gives the same
  // ones' complement sum with half the loads.
  uint64_t acc = sum;
  size_t i = 0;
  const size_t n = bytes.size();
  for (; i + 4 <= n; i += 4) acc += load_be32(bytes.subspan(i, 4));
  if (i + 2 <= n) {
    acc += load_be16(bytes.subspan(i, 2));
    i += 2;
  }
  if (i < n) acc += uint32_t{u8(bytes[i])} << 8;
  while (acc >> 16) acc = (acc & 0xFFFF) + (acc >> 16);
  return static_cast<uint32_t>(acc);
}

inline uint32_t checksum_add16(uint32_t sum, uint16_t word) {
  sum += word;
  return (sum & 0xFFFF) + (sum >> 16);
}

// Folds the carries and complements: the value that goes in the header.
inline uint16_t checksum_fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// RFC 768 / RFC 9293 3.1: source, destination, zero, protocol, length.
inline uint32_t pseudo_header_sum(const Ipv4Address& src, const Ipv4Address& dst, uint8_t protocol,
                                  uint16_t length) {
  uint32_t s = checksum_add(0, src.bytes());
  s = checksum_add(s, dst.bytes());
  s = checksum_add16(s, protocol);
  return checksum_add16(s, length);
}

// RFC 8200 8.1: source, destination, 32-bit upper-layer length, three zero
// bytes, next header.
inline uint32_t pseudo_header_sum(const Ipv6Address& src, const Ipv6Address& dst, uint8_t next_header,
                                  uint32_t length) {
  uint32_t s = checksum_add(0, src.bytes());
  s = checksum_add(s, dst.bytes());
  s = checksum_add16(s, static_cast<uint16_t>(length >> 16));
  s = checksum_add16(s, static_cast<uint16_t>(length));
  return checksum_add16(s, next_header);
}

// RFC 1624 eqn. 3: the checksum after one 16-bit word of the covered data
// changed from `old_word` to `new_word`, without summing the rest again:
// HC' = ~(~HC + ~m + m').
inline uint16_t checksum_update(uint16_t checksum, uint16_t old_word, uint16_t new_word) {
  uint32_t s = static_cast<uint16_t>(~checksum);
  s += static_cast<uint16_t>(~old_word);
  s += new_word;
  return checksum_fold(s);
}

}  // namespace rdmasim
