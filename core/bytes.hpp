// Big-endian loads and stores over byte spans: the one way wire formats touch bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace rdmasim {

inline uint8_t u8(std::byte b) { return static_cast<uint8_t>(b); }

inline uint16_t load_be16(std::span<const std::byte> b) {
  return static_cast<uint16_t>(u8(b[0]) << 8 | u8(b[1]));
}
inline uint32_t load_be24(std::span<const std::byte> b) {
  return uint32_t{u8(b[0])} << 16 | uint32_t{u8(b[1])} << 8 | u8(b[2]);
}
inline uint32_t load_be32(std::span<const std::byte> b) {
  return uint32_t{u8(b[0])} << 24 | uint32_t{u8(b[1])} << 16 | uint32_t{u8(b[2])} << 8 | u8(b[3]);
}
inline uint64_t load_be64(std::span<const std::byte> b) {
  return uint64_t{load_be32(b)} << 32 | load_be32(b.subspan(4));
}
inline void store_u8(std::span<std::byte> b, uint8_t v) { b[0] = std::byte{v}; }
inline void store_be16(std::span<std::byte> b, uint16_t v) {
  b[0] = std::byte(v >> 8);
  b[1] = std::byte(v);
}
inline void store_be24(std::span<std::byte> b, uint32_t v) {
  b[0] = std::byte(v >> 16);
  b[1] = std::byte(v >> 8);
  b[2] = std::byte(v);
}
inline void store_be32(std::span<std::byte> b, uint32_t v) {
  b[0] = std::byte(v >> 24);
  b[1] = std::byte(v >> 16);
  b[2] = std::byte(v >> 8);
  b[3] = std::byte(v);
}
inline void store_be64(std::span<std::byte> b, uint64_t v) {
  store_be32(b, static_cast<uint32_t>(v >> 32));
  store_be32(b.subspan(4), static_cast<uint32_t>(v));
}
// CRCs go on the wire least significant byte first.
inline void store_le32(std::span<std::byte> b, uint32_t v) {
  b[0] = std::byte(v);
  b[1] = std::byte(v >> 8);
  b[2] = std::byte(v >> 16);
  b[3] = std::byte(v >> 24);
}
inline uint32_t load_le32(std::span<const std::byte> b) {
  return uint32_t{u8(b[3])} << 24 | uint32_t{u8(b[2])} << 16 | uint32_t{u8(b[1])} << 8 | u8(b[0]);
}
// NVMe structures are little-endian throughout.
inline uint16_t load_le16(std::span<const std::byte> b) {
  return static_cast<uint16_t>(u8(b[1]) << 8 | u8(b[0]));
}
inline uint32_t load_le24(std::span<const std::byte> b) {
  return uint32_t{u8(b[2])} << 16 | uint32_t{u8(b[1])} << 8 | u8(b[0]);
}
inline uint64_t load_le64(std::span<const std::byte> b) {
  return uint64_t{load_le32(b.subspan(4))} << 32 | load_le32(b);
}
inline void store_le16(std::span<std::byte> b, uint16_t v) {
  b[0] = std::byte(v);
  b[1] = std::byte(v >> 8);
}
inline void store_le24(std::span<std::byte> b, uint32_t v) {
  b[0] = std::byte(v);
  b[1] = std::byte(v >> 8);
  b[2] = std::byte(v >> 16);
}
inline void store_le64(std::span<std::byte> b, uint64_t v) {
  store_le32(b, static_cast<uint32_t>(v));
  store_le32(b.subspan(4), static_cast<uint32_t>(v >> 32));
}

}  // namespace rdmasim
