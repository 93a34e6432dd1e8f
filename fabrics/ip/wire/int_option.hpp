// HPCC's telemetry on the wire (docs/fabrics/roce_v2.md, "HPCC telemetry"):
// an IPv4 option (RFC 791 section 3.1) of type 0x5E -- copy 0, class 2
// (debugging and measurement), number 30, the experimental number of
// RFC 4727 -- 40 bytes long, the most an IPv4 header holds. Its 38 data
// bytes are a bit string, most significant bit first:
//   echo (1): 0 on a data packet (switches append), 1 on an ACK (an echo, left alone)
//   hops (3): samples written, 0..5
//   5 samples of 60 bits: rate index (4), timestamp ns (22), tx bytes/(128 m) (17),
//   queue bytes/(80 m) (17), m = the rate / 25 Gb/s rounded up, at least 1 (telemetry.hpp)
// The sender reserves the whole option, so a switch writes its sample in
// place and the frame keeps its length. tshark shows it as "Unknown (0x5e)
// (40 bytes)", which is not an error.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/bytes.hpp"
#include "fabrics/ip/wire/int_telemetry.hpp"

namespace rdmasim {

class IntOption {
 public:
  static constexpr uint8_t kType = 0x5E;
  static constexpr size_t kLen = 40;
  static constexpr size_t kDataBits = (kLen - 2) * 8;
  static_assert(1 + 3 + IntStack::kMaxHops * IntHop::kBits <= kDataBits);

  // The option at the start of `b` (an IPv4 header's options), if it is ours.
  static std::optional<IntOption> find(std::span<std::byte> options) {
    if (options.size() < kLen || u8(options[0]) != kType || u8(options[1]) != kLen) return std::nullopt;
    return IntOption(options.first(kLen));
  }
  // Writes the option into `b` (kLen bytes).
  static IntOption emit(std::span<std::byte> b, const IntStack& s, bool echo) {
    b[0] = std::byte{kType};
    b[1] = std::byte{kLen};
    for (size_t i = 2; i < kLen; ++i) b[i] = std::byte{0};
    IntOption o(b.first(kLen));
    o.put(0, 1, echo);
    o.put(1, 3, s.hops);
    for (size_t i = 0; i < s.hops && i < IntStack::kMaxHops; ++i) o.put_hop(i, s.hop[i]);
    return o;
  }

  bool echo() const { return get(0, 1); }
  uint8_t hops() const { return static_cast<uint8_t>(get(1, 3)); }
  IntStack stack() const {
    IntStack s;
    s.hops = std::min<uint8_t>(hops(), IntStack::kMaxHops);
    for (size_t i = 0; i < s.hops; ++i) s.hop[i] = get_hop(i);
    return s;
  }
  // A switch's sample, after the others; false when the option is full or an echo.
  bool push(const IntHop& h) {
    const uint8_t n = hops();
    if (echo() || n >= IntStack::kMaxHops) return false;
    put_hop(n, h);
    put(1, 3, n + 1u);
    return true;
  }

 private:
  explicit IntOption(std::span<std::byte> b) : b_(b) {}
  static size_t hop_bit(size_t i) { return 4 + i * IntHop::kBits; }
  void put_hop(size_t i, const IntHop& h) {
    size_t at = hop_bit(i);
    put(at, IntHop::kRateBits, h.rate);
    put(at += IntHop::kRateBits, IntHop::kTsBits, h.ts);
    put(at += IntHop::kTsBits, IntHop::kTxBits, h.tx);
    put(at += IntHop::kTxBits, IntHop::kQlenBits, h.qlen);
  }
  IntHop get_hop(size_t i) const {
    IntHop h;
    size_t at = hop_bit(i);
    h.rate = static_cast<uint8_t>(get(at, IntHop::kRateBits));
    h.ts = static_cast<uint32_t>(get(at += IntHop::kRateBits, IntHop::kTsBits));
    h.tx = static_cast<uint32_t>(get(at += IntHop::kTsBits, IntHop::kTxBits));
    h.qlen = static_cast<uint32_t>(get(at += IntHop::kTxBits, IntHop::kQlenBits));
    return h;
  }
  // Bits [bit, bit + n) of the data bytes, most significant first. A field
  // is at most 22 bits, so it spans at most 4 bytes: read or write those
  // bytes as one big-endian word (switches stamp every data packet).
  static_assert(IntHop::kTsBits <= 25 && IntHop::kTxBits <= 25 && IntHop::kQlenBits <= 25);
  uint64_t get(size_t bit, int n) const {
    const size_t first = 2 + bit / 8, last = 2 + (bit + static_cast<size_t>(n) - 1) / 8;
    uint64_t w = 0;
    for (size_t i = first; i <= last; ++i) w = w << 8 | u8(b_[i]);
    const size_t tail = (last - first + 1) * 8 - bit % 8 - static_cast<size_t>(n);  // bits after the field
    return (w >> tail) & ((uint64_t{1} << n) - 1);
  }
  void put(size_t bit, int n, uint64_t v) {
    const size_t first = 2 + bit / 8, last = 2 + (bit + static_cast<size_t>(n) - 1) / 8;
    uint64_t w = 0;
    for (size_t i = first; i <= last; ++i) w = w << 8 | u8(b_[i]);
    const size_t tail = (last - first + 1) * 8 - bit % 8 - static_cast<size_t>(n);
    const uint64_t m = ((uint64_t{1} << n) - 1) << tail;
    w = (w & ~m) | ((v << tail) & m);
    for (size_t i = last + 1; i-- > first; w >>= 8) b_[i] = std::byte{static_cast<uint8_t>(w)};
  }
  std::span<std::byte> b_;
};

}  // namespace rdmasim
