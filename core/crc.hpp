// The three CRCs that RDMA wires carry. All are reflected (least significant
// bit first), start from all ones and end with a final xor of all ones:
//
//   crc32   IEEE 802.3 polynomial 0x04C11DB7. The RoCE/IB ICRC (IBA 7.8.1)
//           and the Ethernet FCS. check("123456789") = 0xCBF43926.
//   crc32c  Castagnoli polynomial 0x1EDC6F41. The MPA FPDU CRC (RFC 5044
//           section 4.7). check("123456789") = 0xE3069283.
//   vcrc16  IBA VCRC (IBA 7.8.2): polynomial 0x100B, reflected, init 0xFFFF,
//           final xor 0xFFFF, over LRH through ICRC; recomputed on every hop.
//
// Byte order on the wire: each is stored least significant byte first
// (store_le32 of the returned value; the VCRC as two bytes, low byte first).
// For the ICRC this is what IBA Table 29 shows: for its example packet
// crc32() is 0x5AB72596 and the wire carries the bytes 96 25 B7 5A. The VCRC
// follows the same rule (IBA 7.8.2: bits leave in the order of the
// remainder's highest term first), as Mellanox's IBA packet generator (MPGA)
// stores it with cpu_to_le16. The MPA CRC too (docs/captures.md).
//
// The incremental forms let a caller feed a pseudo-header and then the rest
// of a packet without copying: state starts at kCrcInit, each update takes
// and returns the running register, finish applies the final xor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace rdmasim {

inline constexpr uint32_t kCrcInit = 0xFFFFFFFF;
inline constexpr uint16_t kVcrcInit = 0xFFFF;

// CRC-32, IEEE 802.3.
uint32_t crc32_update(uint32_t state, std::span<const std::byte> bytes);
inline uint32_t crc32_finish(uint32_t state) { return state ^ 0xFFFFFFFF; }
uint32_t crc32(std::span<const std::byte> bytes);

// CRC-32C, Castagnoli. Same conventions as crc32_update / crc32_finish.
uint32_t crc32c_update(uint32_t state, std::span<const std::byte> bytes);
inline uint32_t crc32c_finish(uint32_t state) { return state ^ 0xFFFFFFFF; }
uint32_t crc32c(std::span<const std::byte> bytes);

// IBA VCRC, CRC-16 polynomial 0x100B.
uint16_t vcrc16_update(uint16_t state, std::span<const std::byte> bytes);
inline uint16_t vcrc16_finish(uint16_t state) { return state ^ 0xFFFF; }
uint16_t vcrc16(std::span<const std::byte> bytes);

}  // namespace rdmasim
