// The perftest kinds' report, against perftest 4.5's definitions
// (perftest_parameters.c: print_report_lat, print_report_bw).
#include "workloads/verbs/perftest_report.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace rdmasim;

namespace {

constexpr int64_t kUs = 1000000;  // picoseconds

// Posts at 0 and then after each of `gaps` (picoseconds).
std::vector<int64_t> posts(const std::vector<int64_t>& gaps) {
  std::vector<int64_t> p{0};
  for (int64_t g : gaps) p.push_back(p.back() + g);
  return p;
}

// perftest's peak, as its loops compute it: over every posted i and every
// signalled j >= i, the least whole (completed[j] - posted[i]) / (j - i + 1).
int64_t naive_peak_delta(const std::vector<int64_t>& posted,
                         const std::vector<std::pair<uint64_t, int64_t>>& done) {
  int64_t best = std::numeric_limits<int64_t>::max();
  for (uint64_t i = 0; i < posted.size(); ++i)
    for (const auto& [j, t] : done)
      if (j >= i) best = std::min<int64_t>(best, (t - posted[i]) / static_cast<int64_t>(j - i + 1));
  return best;
}

}  // namespace

TEST_CASE(
    "perftest latency report: samples between posts, the two largest dropped, perftest's median and stdev") {
  // Seven samples; sorted 1 2 3 4 5 | 8 9 (the two largest are the tail).
  const auto p = posts({5 * kUs, 1 * kUs, 3 * kUs, 9 * kUs, 2 * kUs, 8 * kUs, 4 * kUs});
  const auto r = perftest_lat(p, 1);
  REQUIRE(r);
  CHECK(r->t_min_us == 1);
  CHECK(r->t_max_us == 8);                                  // sample m = 5: the second largest of all
  CHECK(r->t_typical_us == 3);                              // odd m: the middle one
  CHECK(r->t_avg_us == 3);                                  // of the five kept
  CHECK(r->t_stdev_us == doctest::Approx(std::sqrt(2.0)));  // deviations 2 1 0 -1 -2
  CHECK(r->p99_us == 8);                                    // sample ceil(5 x 0.99) = 5
  CHECK(r->p999_us == 8);

  // A round trip halved (SEND, WRITE): every figure halves, but the stdev
  // truncates each deviation to whole microseconds first, as perftest's int does:
  // 1.5 - 0.5 = 1, 1.5 - 1 = 0.5 -> 0, 0, -0.5 -> 0, -1.
  const auto h = perftest_lat(p, 2);
  REQUIRE(h);
  CHECK(h->t_min_us == 0.5);
  CHECK(h->t_typical_us == 1.5);
  CHECK(h->t_avg_us == 1.5);
  CHECK(h->t_stdev_us == doctest::Approx(std::sqrt(2.0 / 5)));
  CHECK(h->t_max_us == 4);
}

TEST_CASE("perftest latency report: an even count's median is the two middle samples' mean, in whole units") {
  // Eight samples; the tail 100 and 200 dropped; m = 6: 3 4 5 6 7 8 ps.
  const auto r = perftest_lat(posts({8, 3, 200, 5, 4, 100, 7, 6}), 1);
  REQUIRE(r);
  CHECK(r->t_typical_us * kUs == doctest::Approx(5));  // (5 + 6) / 2 = 5 in whole picoseconds, not 5.5
  CHECK(r->t_min_us * kUs == doctest::Approx(3));
  CHECK(r->t_max_us * kUs == doctest::Approx(100));  // sample 6
  CHECK(r->p99_us * kUs == doctest::Approx(100));    // sample ceil(6 x 0.99) = 6
  // Too few posts for perftest's arrays.
  CHECK_FALSE(perftest_lat(posts({1, 2}), 1));
}

TEST_CASE(
    "perftest bandwidth report: average over first post to last completion, peak over every run of "
    "messages") {
  // Four 1 MiB messages posted 1 us apart, each signalled; completions 10, 12, 14, 20 us.
  const std::vector<int64_t> posted{0, 1 * kUs, 2 * kUs, 3 * kUs};
  const std::vector<std::pair<uint64_t, int64_t>> done{
      {0, 10 * kUs}, {1, 12 * kUs}, {2, 14 * kUs}, {3, 20 * kUs}};
  const uint64_t size = 1 << 20;
  const auto r = perftest_bw(size, posted, done);
  REQUIRE(r);
  CHECK(r->bw_average_mb_s == doctest::Approx(4.0 / 20e-6));  // 4 MiB in 20 us
  CHECK(r->bw_average_gbps == doctest::Approx(4.0 * size * 8 / 20e-6 / 1e9));
  CHECK(r->msg_rate_mpps == doctest::Approx(4 / 20e-6 / 1e6));
  // The fastest run of messages is 0..2: 14 us for three (0..1: 6 us each, 0..3: 5, 1..2: 6.5,
  // 1..3: 6.33, 2..3: 9, one alone at least 10): 14/3 us, in whole picoseconds.
  CHECK(r->bw_peak_mb_s == doctest::Approx(1.0 / ((14 * kUs / 3) * 1e-12)));
  // No completion of the last message: no report.
  CHECK_FALSE(
      perftest_bw(size, posted, std::vector<std::pair<uint64_t, int64_t>>(done.begin(), done.end() - 1)));
}

TEST_CASE("perftest bandwidth report: the peak equals perftest's double loop, with CQ moderation") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    const uint64_t n = 1 + rng() % 300, mod = 1 + rng() % 20;
    std::vector<int64_t> posted;
    int64_t t = static_cast<int64_t>(rng() % 1000);
    for (uint64_t k = 0; k < n; ++k) posted.push_back(t += static_cast<int64_t>(rng() % 5000));
    std::vector<std::pair<uint64_t, int64_t>> done;
    int64_t c = posted.front();
    for (uint64_t k = 0; k < n; ++k)
      if (k % mod == mod - 1 || k == n - 1) {
        c = std::max(c, posted[k]) + 1 + static_cast<int64_t>(rng() % 20000);
        done.emplace_back(k, c);
      }
    const auto r = perftest_bw(65536, posted, done);
    REQUIRE(r);
    const int64_t delta = naive_peak_delta(posted, done);
    CHECK(r->bw_peak_mb_s == doctest::Approx(65536.0 / (static_cast<double>(delta) * 1e-12) / (1 << 20)));
  }
}
