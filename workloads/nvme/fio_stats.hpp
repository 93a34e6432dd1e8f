// fio's own statistics of a job, as its stat.c keeps them, for fio.json:
// the running figures of a sampled rate (struct io_stat: bandwidth and
// IOPS sampled every bw_avg_time / iops_avg_time of the job's time, from
// the end of ramp_time), and the distributions of queue depth (io_u_map,
// io_u_submit, io_u_complete behind iodepth_level, iodepth_submit,
// iodepth_complete).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/units.hpp"

namespace rdmasim::nvme {

// fio's struct io_stat and add_stat_sample: min, max, and the mean and the
// sum of squared deviations updated one sample at a time (Welford).
struct IoStat {
  uint64_t min = UINT64_MAX, max = 0, samples = 0;
  double mean = 0, squares = 0;  // fio's mean and S: the sum of squared deviations from the mean
  void add(uint64_t value);
  // group_reporting's sum_stat with pure_sum: every figure added (a group's
  // bw_mean is its jobs' bandwidths together).
  void sum(const IoStat& other);
  // calc_lat's deviation: sqrt(squares / (N - 1)), 0 with one sample.
  double dev() const;
};

// fio's __add_samples on the simulation's time axis: from `from` (the job's
// epoch, reset when ramp_time ends), at the end of each `interval` (whole
// ms) that ends by `until` (the job's end: no sample for its last, partial
// interval), the units completed in that interval (`per_io` each: bytes or
// 1) as (units x 1000 / interval_ms) / `divisor` (1024: KiB/s), integer
// arithmetic as fio's; an interval that completed none adds no sample.
// `done_ps`: when each I/O completed, every one at or after `from`.
IoStat interval_rates(std::vector<int64_t> done_ps, uint64_t per_io, Time from, Time until, Time interval,
                      uint64_t divisor);

// fio's I/O depth maps: 7 buckets each, as its JSON keys name them.
inline constexpr int kDepthBuckets = 7;
using DepthMap = std::array<uint64_t, kDepthBuckets>;

// What a job's submissions and reaps were (counted from the end of ramp_time).
struct DepthCounts {
  DepthMap level{};     // io_u_mark_depth: I/Os by the depth they were submitted at
  DepthMap submit{};    // io_u_mark_submit: submit calls by the I/Os each carried
  DepthMap complete{};  // io_u_mark_complete: reaps by the I/Os each returned
  uint64_t submits = 0, reaps = 0;
  // An I/O handed over alone (the job's submit calls carry one each) with
  // `depth` outstanding, itself included.
  void submitted(uint32_t depth);
  void reaped(uint32_t ios);
  void add(const DepthCounts& other);  // group_reporting: the maps added
};

// io_u_mark_depth's bucket of a depth: 1, 2-3, 4-7, 8-15, 16-31, 32-63, 64 and more.
int depth_bucket(uint32_t depth);
// __io_u_mark_map's bucket of a count: 0, 1-4, 5-8, 9-16, 17-32, 33-64, above 64.
int batch_bucket(uint32_t ios);
// stat_calc_dist: each bucket in percent of `total`; a bucket with any
// count shows at least 0.1.
std::array<double, kDepthBuckets> depth_percents(const DepthMap& map, uint64_t total);

}  // namespace rdmasim::nvme
