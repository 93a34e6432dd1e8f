// What perftest 4.5 prints at the end of a test, computed from the times a
// perftest-style workload kept, with perftest's own definitions
// (perftest_parameters.c: print_report_bw, print_report_lat). perftest counts
// TSC cycles; these count simulated picoseconds, so they carry no cycle
// rounding and no clock-rate estimate.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>

namespace rdmasim {

// print_report_bw: iterations `n` of `size` bytes, posted at posted[k];
// completed holds (k, time) for every signalled work request k (every
// cq_moderation-th and the last), in order.
struct PerftestBw {
  double bw_peak_mb_s = 0;     // MB/sec as perftest prints it (MB = 2^20 bytes)
  double bw_average_mb_s = 0;  // size x n / (last completion - first post)
  double bw_average_gbps = 0;  // the same in Gb/s (perftest's --report_gbits)
  double msg_rate_mpps = 0;    // n / (last completion - first post), in millions per second
};
// Peak: the shortest time per message over every run of messages i..j whose
// last one, j, was signalled: min over i <= j of (completed[j] - posted[i]) /
// (j - i + 1), in whole picoseconds as perftest divides whole cycles.
// Nullopt without a completion of the last message.
std::optional<PerftestBw> perftest_bw(uint64_t size, std::span<const int64_t> posted,
                                      std::span<const std::pair<uint64_t, int64_t>> completed);

// print_report_lat: the samples are the times between consecutive posts
// (posted[k + 1] - posted[k], so a loop's own overhead is in them), divided
// by rtt_factor (2 for SEND and WRITE, which measure a round trip; 1 for
// READ and atomics). Sorted, the two largest dropped (LAT_MEASURE_TAIL);
// of the m that remain:
struct PerftestLat {
  double t_min_us = 0;      // the smallest
  double t_max_us = 0;      // sample m: the largest kept is m - 1, so this is the second largest of all
  double t_typical_us = 0;  // the median (get_median: of an even m, the two middle ones' mean in whole ps)
  double t_avg_us = 0;      // the mean of the m
  double t_stdev_us = 0;    // perftest's: each deviation from the mean truncated to whole us before squaring
  double p99_us = 0;        // sample ceil(m x 0.99)
  double p999_us = 0;       // sample ceil(m x 0.999)
};
// Nullopt below 4 posts (perftest's arrays would be empty).
std::optional<PerftestLat> perftest_lat(std::span<const int64_t> posted, int rtt_factor);

}  // namespace rdmasim
