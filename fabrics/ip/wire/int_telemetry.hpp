// HPCC's in-band network telemetry (Li et al., SIGCOMM 2019, section 3.1):
// what each switch on the path records for a data packet as it leaves the
// egress port, and the receiver copies into the ACK. The fields have the
// widths of their wire encoding (docs/fabrics/roce_v2.md, "HPCC
// telemetry"): a timestamp in ns and a transmitted-byte counter, both
// wrapping, so only differences between two samples of one hop mean
// anything; a queue length that saturates; the link rate as an index into
// a table of standard Ethernet rates.
//
// Units as HPCC's simulator's IntHop (int-header.h: byteUnit 128 and
// qlenUnit 80 bytes, times INT_MULTI, which run.py sets to the NIC rate /
// 25 Gb/s): here the multiplier is the hop's own rate / 25 Gb/s rounded up
// (at least 1), read back from the sample's rate index, so the queue field
// (17 bits, the simulator's width) reaches 80 B x 2^17 x m: 10.5 MB at
// 25 Gb/s, 42 MB at 100 Gb/s (the simulator's ~42 MB), 168 MB at 400 Gb/s.
// The 40-byte IPv4 option leaves 60 bits a sample for five hops (the
// simulator's header has 64), so the time keeps 22 bits (4.19 ms, the
// simulator 24) and the byte counter 17 (the simulator 20): 2^17 x 128 x m
// bytes wrap after at least 5.37 ms at the hop's rate, longer than the
// time field, so two samples a time difference apart are never ambiguous.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "core/units.hpp"

namespace rdmasim {

struct IntHop {
  static constexpr int kTsBits = 22, kTxBits = 17, kQlenBits = 17, kRateBits = 4;
  static constexpr int kBits = kTsBits + kTxBits + kQlenBits + kRateBits;  // 60
  static constexpr uint64_t kTxUnit = 128;                                 // bytes per count of tx, x multi
  static constexpr uint64_t kQlenUnit = 80;                                // bytes per count of qlen, x multi
  static constexpr uint64_t kMultiRate = 25'000'000'000;                   // INT_MULTI's 25 Gb/s

  uint32_t ts = 0;    // ns, modulo 2^22 (4.19 ms)
  uint32_t tx = 0;    // bytes sent by the port / (128 x multi), modulo 2^17
  uint32_t qlen = 0;  // bytes queued / (80 x multi), saturating at 2^17 - 1
  uint8_t rate = 0;   // index into kRates; 0: no such rate

  // The link rates a hop can report (index 1..). A link of another rate
  // cannot run HPCC (the validate pass says so).
  static constexpr std::array<uint64_t, 14> kRates = {0,
                                                      1'000'000'000,
                                                      2'500'000'000,
                                                      5'000'000'000,
                                                      10'000'000'000,
                                                      25'000'000'000,
                                                      40'000'000'000,
                                                      50'000'000'000,
                                                      56'000'000'000,
                                                      100'000'000'000,
                                                      200'000'000'000,
                                                      400'000'000'000,
                                                      800'000'000'000,
                                                      1'600'000'000'000};
  static std::optional<uint8_t> rate_index(DataRate r) {
    for (uint8_t i = 1; i < kRates.size(); ++i)
      if (kRates[i] == r.bps()) return i;
    return std::nullopt;
  }

  // The sample a port takes at `now` with `tx_bytes` sent so far and `queued` bytes behind.
  static IntHop sample(Time now, uint64_t tx_bytes, uint64_t queued, DataRate r) {
    IntHop h;
    h.rate = rate_index(r).value_or(0);
    const uint64_t m = h.multi();
    h.ts = static_cast<uint32_t>(static_cast<uint64_t>(now.count() / 1000) & mask(kTsBits));
    h.tx = static_cast<uint32_t>((tx_bytes / (kTxUnit * m)) & mask(kTxBits));
    h.qlen = static_cast<uint32_t>(std::min<uint64_t>(queued / (kQlenUnit * m), mask(kQlenBits)));
    return h;
  }

  DataRate line_rate() const { return DataRate(rate < kRates.size() ? kRates[rate] : 0); }
  // INT_MULTI for this hop: its rate / 25 Gb/s, rounded up, at least 1.
  uint64_t multi() const { return std::max<uint64_t>(1, (line_rate().bps() + kMultiRate - 1) / kMultiRate); }
  uint64_t qlen_bytes() const { return uint64_t{qlen} * kQlenUnit * multi(); }
  // Differences to an earlier sample of the same hop, modulo the widths.
  Time since(const IntHop& before) const {
    return Time::ns(static_cast<int64_t>((ts - before.ts) & mask(kTsBits)));
  }
  uint64_t bytes_since(const IntHop& before) const {
    return ((tx - before.tx) & mask(kTxBits)) * kTxUnit * multi();
  }

  static constexpr uint64_t mask(int bits) { return (uint64_t{1} << bits) - 1; }
  bool operator==(const IntHop&) const = default;
};

// A packet's telemetry: one sample per switch, in path order.
struct IntStack {
  static constexpr size_t kMaxHops = 5;  // a 3-tier fat tree's longest path
  uint8_t hops = 0;
  std::array<IntHop, kMaxHops> hop{};
  bool operator==(const IntStack&) const = default;
};

}  // namespace rdmasim
