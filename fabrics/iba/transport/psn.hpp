// Packet sequence numbers: 24-bit, compared modulo 2^24 (IBA 9.7.1).
#pragma once

#include <cstdint>

namespace rdmasim {

constexpr uint32_t kPsnMask = 0xFFFFFF;

constexpr uint32_t psn_add(uint32_t psn, int64_t n) { return static_cast<uint32_t>(psn + n) & kPsnMask; }
// Signed distance a - b in the 24-bit circle: negative when a is before b.
constexpr int32_t psn_diff(uint32_t a, uint32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>((a - b) << 8)) >> 8;
}
constexpr bool psn_before(uint32_t a, uint32_t b) { return psn_diff(a, b) < 0; }

static_assert(psn_diff(0, 0xFFFFFF) == 1);
static_assert(psn_before(0xFFFFFE, 1));

}  // namespace rdmasim
