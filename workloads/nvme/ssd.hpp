// An NVMe SSD as a target's namespace sees it: commands start no faster
// than the drive's IOPS ceiling for their direction allows, each occupies
// one of channels x dies parallel units for a service time drawn from a
// lognormal distribution (mean read_latency or write_latency, sigma
// latency_spread), and its data crosses the drive's bandwidth ceiling for
// its direction. A RAM-backed namespace (null_blk-like) takes a fixed
// latency and no ceiling.
#pragma once

#include <cmath>
#include <cstdint>
#include <queue>
#include <vector>

#include "core/random.hpp"
#include "core/units.hpp"
#include "topologies/storage_config.hpp"

namespace rdmasim::nvme {

class Ssd {
 public:
  Ssd(const SsdConfig& c, uint64_t seed) : c_(c), rng_(seed) {
    const uint32_t units = std::max<uint32_t>(1, c.channels * c.dies);
    for (uint32_t i = 0; i < units; ++i) free_.push(Time{});
  }

  // When a command of `bytes` arriving at `now` completes.
  Time submit(bool write, uint64_t bytes, Time now) {
    Time& next = write ? next_write_ : next_read_;
    const uint64_t iops = write ? c_.write_iops : c_.read_iops;
    Time start = std::max(now, next);
    if (iops) next = start + Time::ps(static_cast<int64_t>(1'000'000'000'000 / iops));
    const Time unit = free_.top();
    free_.pop();
    start = std::max(start, unit);
    const Time mean = write ? c_.write_latency : c_.read_latency;
    const Time busy_until = start + service(mean);
    free_.push(busy_until);
    Time& bus = write ? write_bus_ : read_bus_;
    const DataRate bw = write ? c_.write_bandwidth : c_.read_bandwidth;
    const Time xfer = bw.bps() ? bw.tx_time(bytes) : Time{};
    bus = std::max(bus, busy_until - xfer) + xfer;
    return std::max(busy_until, bus);
  }

 private:
  // Lognormal with mean `mean`: exp(mu + sigma Z), mu = ln(mean) - sigma^2 / 2.
  Time service(Time mean) {
    const double sigma = c_.latency_spread;
    if (sigma <= 0) return mean;
    double u1 = rng_.uniform(), u2 = rng_.uniform();
    if (u1 <= 0) u1 = 0x1.0p-53;
    const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
    const double f = std::exp(sigma * z - sigma * sigma / 2);
    return Time::ps(static_cast<int64_t>(static_cast<double>(mean.count()) * f));
  }

  SsdConfig c_;
  Rng rng_;
  Time next_read_, next_write_, read_bus_, write_bus_;
  std::priority_queue<Time, std::vector<Time>, std::greater<>> free_;  // when each unit is free
};

}  // namespace rdmasim::nvme
