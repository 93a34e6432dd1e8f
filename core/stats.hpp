// Statistics that components keep while the simulation runs: counters and
// latency histograms. Recording a sample is a few integer operations and
// never allocates; results are read once, at the end.
#pragma once

#include <cstdint>
#include <memory>

#include "core/units.hpp"

namespace rdmasim {

class Counter {
  uint64_t v_ = 0;

 public:
  Counter& operator++() {
    ++v_;
    return *this;
  }
  Counter& operator+=(uint64_t n) {
    v_ += n;
    return *this;
  }
  uint64_t value() const { return v_; }
  void merge(const Counter& o) { v_ += o.v_; }
  void reset() { v_ = 0; }
};

// A log-linear histogram of durations (HDR-style): values below 128 ps have
// a bucket each; above, every power of two is split into 128 equal buckets,
// so a bucket is at most 1/128 of the values in it wide. Percentiles report
// the middle of their bucket, clamped to [min, max]: within 0.4% of the
// exact nearest-rank value, and exact below 128 ps. min, max, count and
// mean are exact. Negative samples count as 0 in the buckets (min keeps
// them). The 57 KiB of buckets are allocated once, by the constructor.
class LatencyHistogram {
 public:
  static constexpr int kSubBits = 7;
  static constexpr int64_t kSub = int64_t{1} << kSubBits;             // 128
  static constexpr size_t kBuckets = static_cast<size_t>(kSub) * 57;  // exact range + 56 powers of two

  LatencyHistogram();
  LatencyHistogram(const LatencyHistogram& o);
  LatencyHistogram& operator=(const LatencyHistogram& o);
  LatencyHistogram(LatencyHistogram&&) noexcept = default;
  LatencyHistogram& operator=(LatencyHistogram&&) noexcept = default;

  void record(Time t) {
    const int64_t v = t.count();
    ++counts_[bucket_of(v < 0 ? 0 : v)];
    ++count_;
    sum_ += v;
    if (v < min_) min_ = v;
    if (v > max_) max_ = v;
  }

  uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  // The following are Time() (zero) for an empty histogram.
  Time min() const { return empty() ? Time() : Time::ps(min_); }
  Time max() const { return empty() ? Time() : Time::ps(max_); }
  Time mean() const;  // rounded to the nearest picosecond
  double mean_ps() const;
  // The nearest-rank q-quantile, q in [0, 1]: the smallest recorded value
  // with at least ceil(q * count) samples at or below it.
  Time percentile(double q) const;
  Time p50() const { return percentile(0.50); }
  Time p99() const { return percentile(0.99); }
  Time p999() const { return percentile(0.999); }

  // Adds the samples of o, as if they had been recorded here.
  void merge(const LatencyHistogram& o);
  void reset();

  // Bucket arithmetic, public for tests.
  static size_t bucket_of(int64_t v) {
    if (v < kSub) return static_cast<size_t>(v);
    const int e = 63 - __builtin_clzll(static_cast<uint64_t>(v));  // 7 .. 62
    const int shift = e - kSubBits;
    return static_cast<size_t>(kSub) * static_cast<size_t>(shift + 1) +
           static_cast<size_t>((v >> shift) - kSub);
  }
  static int64_t bucket_low(size_t b);    // smallest value in bucket b
  static int64_t bucket_width(size_t b);  // number of values in bucket b

 private:
  std::unique_ptr<uint64_t[]> counts_;
  uint64_t count_ = 0;
  __int128 sum_ = 0;
  int64_t min_ = INT64_MAX;
  int64_t max_ = INT64_MIN;
};

}  // namespace rdmasim
