#include "core/stats.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/random.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

// Nearest rank: the smallest value with at least ceil(q * n) samples at or below it.
int64_t exact_percentile(std::vector<int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

}  // namespace

TEST_CASE("Counter counts and merges") {
  Counter a, b;
  ++a;
  a += 4;
  b += 10;
  a.merge(b);
  CHECK(a.value() == 15);
  a.reset();
  CHECK(a.value() == 0);
}

TEST_CASE("an empty histogram reports zeros") {
  LatencyHistogram h;
  CHECK(h.empty());
  CHECK(h.count() == 0);
  CHECK(h.min() == Time());
  CHECK(h.max() == Time());
  CHECK(h.mean() == Time());
  CHECK(h.p50() == Time());
  CHECK(h.p999() == Time());
}

TEST_CASE("buckets tile the values: each value lies in its bucket, buckets grow in order") {
  Rng rng(5);
  size_t prev_b = 0;
  for (int64_t v = 0; v < 5000; ++v) {
    const size_t b = LatencyHistogram::bucket_of(v);
    CHECK(b >= prev_b);
    prev_b = b;
    REQUIRE(LatencyHistogram::bucket_low(b) <= v);
    REQUIRE(v < LatencyHistogram::bucket_low(b) + LatencyHistogram::bucket_width(b));
  }
  for (int i = 0; i < 10000; ++i) {
    const int64_t v = static_cast<int64_t>(rng.next() >> rng.between(1, 62));
    const size_t b = LatencyHistogram::bucket_of(v);
    REQUIRE(b < LatencyHistogram::kBuckets);
    REQUIRE(LatencyHistogram::bucket_low(b) <= v);
    REQUIRE(v - LatencyHistogram::bucket_low(b) < LatencyHistogram::bucket_width(b));
    // A bucket is at most 1/128 of its values wide.
    REQUIRE(LatencyHistogram::bucket_width(b) * 128 <=
            std::max<int64_t>(128, LatencyHistogram::bucket_low(b)));
  }
  CHECK(LatencyHistogram::bucket_of(INT64_MAX) == LatencyHistogram::kBuckets - 1);
}

TEST_CASE("small values are exact; min, max, count and mean are exact") {
  LatencyHistogram h;
  for (int64_t v : {5, 1, 3, 3, 100}) h.record(Time::ps(v));
  CHECK(h.count() == 5);
  CHECK(h.min() == 1_ps);
  CHECK(h.max() == 100_ps);
  CHECK(h.p50() == 3_ps);
  CHECK(h.percentile(0.8) == 5_ps);
  CHECK(h.percentile(0.0) == 1_ps);
  CHECK(h.percentile(1.0) == 100_ps);
  CHECK(h.mean_ps() == doctest::Approx(22.4));
  CHECK(h.mean() == 22_ps);
}

TEST_CASE("percentiles of wide-ranging samples are within 1% of the exact ones") {
  Rng rng(11);
  LatencyHistogram h;
  std::vector<int64_t> v;
  for (int i = 0; i < 200000; ++i) {
    // Log-uniform from 100 ps to 10 ms.
    const double x = std::exp(std::log(100.0) + rng.uniform() * (std::log(1e10) - std::log(100.0)));
    v.push_back(static_cast<int64_t>(x));
    h.record(Time::ps(v.back()));
  }
  for (double q : {0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999}) {
    CAPTURE(q);
    const double exact = static_cast<double>(exact_percentile(v, q));
    const double got = static_cast<double>(h.percentile(q).count());
    CHECK(std::fabs(got - exact) <= 0.01 * exact);
  }
  CHECK(h.min().count() == *std::min_element(v.begin(), v.end()));
  CHECK(h.max().count() == *std::max_element(v.begin(), v.end()));
  long double sum = 0;
  for (int64_t x : v) sum += static_cast<long double>(x);
  CHECK(h.mean_ps() == doctest::Approx(static_cast<double>(sum / v.size())));
}

TEST_CASE("merge equals recording everything in one histogram") {
  Rng rng(2);
  LatencyHistogram a, b, all;
  for (int i = 0; i < 10000; ++i) {
    const Time t = Time::ns(static_cast<int64_t>(rng.between(1, 1'000'000)));
    (i % 3 ? a : b).record(t);
    all.record(t);
  }
  LatencyHistogram c = a;  // copies are deep
  c.merge(b);
  CHECK(c.count() == all.count());
  CHECK(c.min() == all.min());
  CHECK(c.max() == all.max());
  CHECK(c.mean() == all.mean());
  for (double q : {0.5, 0.99, 0.999}) CHECK(c.percentile(q) == all.percentile(q));
  CHECK(a.count() + b.count() == c.count());
  c.reset();
  CHECK(c.empty());
  CHECK(all.count() == 10000);
}
