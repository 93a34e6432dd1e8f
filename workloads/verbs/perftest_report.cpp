#include "workloads/verbs/perftest_report.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace rdmasim {

namespace {

constexpr double kPsPerUs = 1e6;
constexpr double kMiB = 1024.0 * 1024.0;  // perftest's MB (format_factor 0x100000)

// Whether some run of messages i..j (j signalled) took less than
// (t + 1) x (j - i + 1): then the peak's whole time per message is at most t.
// completed[j] - posted[i] < (t + 1)(j - i + 1) is
// completed[j] - (t + 1)(j + 1) < posted[i] - (t + 1) i, so one pass keeps the
// largest right side over i <= j.
bool faster_than(int64_t t, std::span<const int64_t> posted,
                 std::span<const std::pair<uint64_t, int64_t>> completed) {
  const __int128 step = static_cast<__int128>(t) + 1;
  __int128 best = 0;
  size_t c = 0;
  for (uint64_t k = 0; k < posted.size() && c < completed.size(); ++k) {
    const __int128 right = posted[k] - step * static_cast<__int128>(k);
    best = k == 0 ? right : std::max(best, right);
    for (; c < completed.size() && completed[c].first == k; ++c)
      if (completed[c].second - step * static_cast<__int128>(k + 1) < best) return true;
  }
  return false;
}

}  // namespace

std::optional<PerftestBw> perftest_bw(uint64_t size, std::span<const int64_t> posted,
                                      std::span<const std::pair<uint64_t, int64_t>> completed) {
  const uint64_t n = posted.size();
  if (n == 0 || completed.empty() || completed.back().first != n - 1) return std::nullopt;
  const int64_t total = completed.back().second - posted.front();
  if (total <= 0) return std::nullopt;
  // The smallest whole t that some run reaches: the peak's time per message.
  int64_t lo = 0, hi = total;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (faster_than(mid, posted, completed))
      hi = mid;
    else
      lo = mid + 1;
  }
  const double secs = static_cast<double>(total) * 1e-12;
  const double bytes = static_cast<double>(size) * static_cast<double>(n);
  PerftestBw r;
  r.bw_peak_mb_s = lo > 0 ? static_cast<double>(size) / (static_cast<double>(lo) * 1e-12) / kMiB : 0;
  r.bw_average_mb_s = bytes / secs / kMiB;
  r.bw_average_gbps = bytes * 8 / secs / 1e9;
  r.msg_rate_mpps = static_cast<double>(n) / secs / 1e6;
  return r;
}

std::optional<PerftestLat> perftest_lat(std::span<const int64_t> posted, int rtt_factor) {
  if (posted.size() < 4) return std::nullopt;
  std::vector<int64_t> d(posted.size() - 1);
  for (size_t i = 0; i + 1 < posted.size(); ++i) d[i] = posted[i + 1] - posted[i];
  std::sort(d.begin(), d.end());
  const size_t m = d.size() - 2;  // LAT_MEASURE_TAIL
  const double q = kPsPerUs * rtt_factor;
  // get_median(m, d): whole cycles there, whole picoseconds here.
  const int64_t median = (m - 1) % 2 ? (d[m / 2] + d[m / 2 - 1]) / 2 : d[m / 2];
  double sum = 0;
  for (size_t i = 0; i < m; ++i) sum += static_cast<double>(d[i]) / q;
  const double avg = sum / static_cast<double>(m);
  double var_sum = 0;
  for (size_t i = 0; i < m; ++i) {
    const auto dev = static_cast<int>(avg - static_cast<double>(d[i]) / q);  // perftest's int
    var_sum += static_cast<double>(dev * dev);
  }
  auto at = [&](double share) {
    return static_cast<double>(d[static_cast<size_t>(std::ceil(static_cast<double>(m) * share))]) / q;
  };
  PerftestLat r;
  r.t_min_us = static_cast<double>(d[0]) / q;
  r.t_max_us = static_cast<double>(d[m]) / q;
  r.t_typical_us = static_cast<double>(median) / q;
  r.t_avg_us = avg;
  r.t_stdev_us = std::sqrt(var_sum / static_cast<double>(m));
  r.p99_us = at(0.99);
  r.p999_us = at(0.999);
  return r;
}

}  // namespace rdmasim
