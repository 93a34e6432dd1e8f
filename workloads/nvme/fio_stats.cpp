#include "workloads/nvme/fio_stats.hpp"

#include <algorithm>
#include <cmath>

namespace rdmasim::nvme {

void IoStat::add(uint64_t value) {
  const auto v = static_cast<double>(value);
  max = std::max(max, value);
  min = std::min(min, value);
  const double delta = v - mean;
  if (delta != 0) {
    mean += delta / (static_cast<double>(samples) + 1.0);
    squares += delta * (v - mean);
  }
  ++samples;
}

void IoStat::sum(const IoStat& other) {
  if (other.samples == 0) return;
  if (samples == 0) {
    *this = other;
    return;
  }
  min += other.min;
  max += other.max;
  samples += other.samples;
  mean += other.mean;
  squares += other.squares;
}

double IoStat::dev() const {
  return samples > 1 ? std::sqrt(squares / (static_cast<double>(samples) - 1.0)) : 0.0;
}

IoStat interval_rates(std::vector<int64_t> done_ps, uint64_t per_io, Time from, Time until, Time interval,
                      uint64_t divisor) {
  IoStat s;
  std::sort(done_ps.begin(), done_ps.end());
  const auto spent_ms = static_cast<uint64_t>(interval / Time::ms(1));
  if (spent_ms == 0) return s;
  auto first = done_ps.begin();
  for (Time end = from + interval; end <= until; end = end + interval) {
    const auto last = std::upper_bound(first, done_ps.end(), end.count());
    const uint64_t delta = static_cast<uint64_t>(last - first) * per_io;
    first = last;
    if (delta == 0) continue;  // "No entries for interval"
    s.add(delta * 1000 / spent_ms / divisor);
  }
  return s;
}

int depth_bucket(uint32_t depth) {
  int bucket = 0;
  while (bucket < kDepthBuckets - 1 && depth >= (2u << bucket)) ++bucket;
  return bucket;
}

int batch_bucket(uint32_t ios) {
  if (ios == 0) return 0;
  int bucket = 1;
  while (bucket < kDepthBuckets - 1 && ios > (2u << bucket)) ++bucket;
  return bucket;
}

void DepthCounts::submitted(uint32_t depth) {
  ++level[static_cast<size_t>(depth_bucket(depth))];
  ++submit[static_cast<size_t>(batch_bucket(1))];
  ++submits;
}

void DepthCounts::reaped(uint32_t ios) {
  ++complete[static_cast<size_t>(batch_bucket(ios))];
  ++reaps;
}

void DepthCounts::add(const DepthCounts& other) {
  for (size_t i = 0; i < kDepthBuckets; ++i) {
    level[i] += other.level[i];
    submit[i] += other.submit[i];
    complete[i] += other.complete[i];
  }
  submits += other.submits;
  reaps += other.reaps;
}

std::array<double, kDepthBuckets> depth_percents(const DepthMap& map, uint64_t total) {
  std::array<double, kDepthBuckets> out{};
  if (total == 0) return out;
  for (size_t i = 0; i < kDepthBuckets; ++i) {
    out[i] = static_cast<double>(map[i]) / static_cast<double>(total) * 100.0;
    if (out[i] < 0.1 && map[i]) out[i] = 0.1;
  }
  return out;
}

}  // namespace rdmasim::nvme
