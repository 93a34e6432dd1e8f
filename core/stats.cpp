#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace rdmasim {

LatencyHistogram::LatencyHistogram() : counts_(new uint64_t[kBuckets]()) {}

LatencyHistogram::LatencyHistogram(const LatencyHistogram& o)
    : counts_(new uint64_t[kBuckets]), count_(o.count_), sum_(o.sum_), min_(o.min_), max_(o.max_) {
  std::memcpy(counts_.get(), o.counts_.get(), kBuckets * sizeof(uint64_t));
}

LatencyHistogram& LatencyHistogram::operator=(const LatencyHistogram& o) {
  if (this != &o) {
    if (!counts_) counts_.reset(new uint64_t[kBuckets]);
    std::memcpy(counts_.get(), o.counts_.get(), kBuckets * sizeof(uint64_t));
    count_ = o.count_;
    sum_ = o.sum_;
    min_ = o.min_;
    max_ = o.max_;
  }
  return *this;
}

int64_t LatencyHistogram::bucket_low(size_t b) {
  if (b < static_cast<size_t>(kSub)) return static_cast<int64_t>(b);
  const int shift = static_cast<int>(b / kSub) - 1;
  return (static_cast<int64_t>(b % kSub) + kSub) << shift;
}

int64_t LatencyHistogram::bucket_width(size_t b) {
  if (b < static_cast<size_t>(kSub)) return 1;
  return int64_t{1} << (b / kSub - 1);
}

double LatencyHistogram::mean_ps() const {
  return empty() ? 0.0 : static_cast<double>(sum_) / static_cast<double>(count_);
}

Time LatencyHistogram::mean() const {
  if (empty()) return Time();
  // Round half away from zero, in integers: the sum may exceed 64 bits.
  const __int128 n = count_;
  const __int128 q = (sum_ >= 0 ? sum_ + n / 2 : sum_ - n / 2) / n;
  return Time::ps(static_cast<int64_t>(q));
}

Time LatencyHistogram::percentile(double q) const {
  if (empty()) return Time();
  q = std::clamp(q, 0.0, 1.0);
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  if (rank == count_) return Time::ps(max_);
  if (rank == 1) return Time::ps(min_);
  uint64_t seen = 0;
  for (size_t b = 0; b < kBuckets; ++b) {
    seen += counts_[b];
    if (seen >= rank) {
      const int64_t mid = bucket_low(b) + (bucket_width(b) - 1) / 2;
      return Time::ps(std::clamp(mid, min_, max_));
    }
  }
  return Time::ps(max_);  // not reached: the counts add up to count_
}

void LatencyHistogram::merge(const LatencyHistogram& o) {
  for (size_t b = 0; b < kBuckets; ++b) counts_[b] += o.counts_[b];
  count_ += o.count_;
  sum_ += o.sum_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

void LatencyHistogram::reset() {
  std::memset(counts_.get(), 0, kBuckets * sizeof(uint64_t));
  count_ = 0;
  sum_ = 0;
  min_ = INT64_MAX;
  max_ = INT64_MIN;
}

}  // namespace rdmasim
