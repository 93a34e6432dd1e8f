// fio.json against fio's stat.c: the latency buckets as io_u_mark_latency
// (ns below 1 us, us below 1 ms, else ms; a bucket holds what is below its
// key and at or above the key before it), the bandwidth and IOPS samples
// as __add_samples takes them, the depth distributions as io_u_mark_depth
// and stat_calc_dist, bw_agg as convert_agg_kbytes_percent.
#include "workloads/nvme/fio_json.hpp"

#include <doctest/doctest.h>

using namespace rdmasim::nvme;
using nlohmann::json;

TEST_CASE("fio json: latency buckets split at fio's bounds, in percent of the I/Os") {
  constexpr int64_t kNs = 1000, kUs = 1000 * kNs, kMs = 1000 * kUs;  // in ps
  const auto b = latency_buckets_json(
      {1999, 2 * kNs, 999 * kNs, kUs, 999 * kUs + 999 * kNs, kMs, 1999 * kMs, 2000 * kMs});
  CHECK(b["latency_ns"]["2"] == 12.5);     // 1.999 ns counts as 1
  CHECK(b["latency_ns"]["4"] == 12.5);     // 2 ns
  CHECK(b["latency_ns"]["1000"] == 12.5);  // 999 ns
  CHECK(b["latency_us"]["2"] == 12.5);     // 1 us
  CHECK(b["latency_us"]["1000"] == 12.5);  // 999.999 us
  CHECK(b["latency_ms"]["2"] == 12.5);     // 1 ms
  CHECK(b["latency_ms"]["2000"] == 12.5);  // 1999 ms
  CHECK(b["latency_ms"][">=2000"] == 12.5);
  CHECK(b["latency_ns"].size() == 10);
  CHECK(b["latency_us"].size() == 10);
  CHECK(b["latency_ms"].size() == 12);
  double total = 0;
  for (const char* unit : {"latency_ns", "latency_us", "latency_ms"})
    for (const auto& [key, percent] : b[unit].items()) total += percent.get<double>();
  CHECK(total == 100.0);
}

TEST_CASE("fio json: no I/O: every bucket 0") {
  const auto b = latency_buckets_json({});
  for (const char* unit : {"latency_ns", "latency_us", "latency_ms"})
    for (const auto& [key, percent] : b[unit].items()) CHECK(percent == 0.0);
}

// ---- bandwidth and IOPS samples (fio's stat.c: __add_samples, add_stat_sample, calc_lat)

namespace {
constexpr int64_t kMs = 1'000'000'000;  // ps
using rdmasim::Time;
}  // namespace

TEST_CASE("fio json: io_stat keeps fio's running mean and sample deviation") {
  IoStat s;
  for (uint64_t v : {10, 20, 30, 40}) s.add(v);
  CHECK(s.samples == 4);
  CHECK(s.min == 10);
  CHECK(s.max == 40);
  CHECK(s.mean == doctest::Approx(25.0));
  CHECK(s.dev() == doctest::Approx(12.909944487));  // sqrt(500 / 3): N - 1, as calc_lat
  IoStat one;
  one.add(7);
  CHECK(one.dev() == 0.0);
  CHECK(IoStat{}.dev() == 0.0);
}

TEST_CASE("fio json: group_reporting sums the jobs' sample figures, as sum_stat's pure sum") {
  IoStat a, b, none;
  for (uint64_t v : {100, 300}) a.add(v);
  b.add(50);
  a.sum(none);  // a job without samples adds nothing
  CHECK(a.samples == 2);
  a.sum(b);
  CHECK(a.samples == 3);
  CHECK(a.min == 150);
  CHECK(a.max == 350);
  CHECK(a.mean == doctest::Approx(250.0));
  IoStat first;
  first.sum(b);
  CHECK(first.samples == 1);
  CHECK(first.min == 50);
}

TEST_CASE("fio json: a sample each full interval of the job's time, none for the last partial one") {
  // I/Os of 4096 bytes done at 1, 2, 3 ms (interval 1: [0, 10 ms]), 15 ms
  // (interval 2), none in interval 3, 35 ms (interval 4), 41 ms (in the
  // partial interval after 40 ms: the job ends at 41 ms).
  const std::vector<int64_t> done = {3 * kMs, kMs, 2 * kMs, 15 * kMs, 35 * kMs, 41 * kMs};
  const IoStat bw = interval_rates(done, 4096, Time{}, Time::ps(41 * kMs), Time::ms(10), 1024);
  CHECK(bw.samples == 3);  // intervals 1, 2, 4; the empty one adds no sample
  CHECK(bw.max == 1200);   // 3 x 4096 B in 10 ms: 1 228 800 B/s = 1200 KiB/s
  CHECK(bw.min == 400);    // one I/O in 10 ms
  CHECK(bw.mean == doctest::Approx((1200.0 + 400 + 400) / 3));
  const IoStat iops = interval_rates(done, 1, Time{}, Time::ps(41 * kMs), Time::ms(10), 1);
  CHECK(iops.samples == 3);
  CHECK(iops.max == 300);
  CHECK(iops.min == 100);
  // The epoch is the end of ramp_time: intervals count from there.
  const IoStat shifted = interval_rates({6 * kMs, 7 * kMs}, 1, Time::ms(5), Time::ms(15), Time::ms(10), 1);
  CHECK(shifted.samples == 1);
  CHECK(shifted.max == 200);
  // An I/O done exactly at an interval's end is in it.
  CHECK(interval_rates({10 * kMs}, 1, Time{}, Time::ms(10), Time::ms(10), 1).samples == 1);
}

TEST_CASE("fio json: a job shorter than the interval has no samples, as fio's") {
  const std::vector<int64_t> done = {kMs, 2 * kMs, 499 * kMs};
  CHECK(interval_rates(done, 4096, Time{}, Time::ms(499), Time::ms(500), 1024).samples == 0);
  DirStats d;
  d.ios = 3;
  d.bytes = 3 * 4096;
  const json j = direction_json(d, Time::ms(499), IoStat{}, IoStat{});
  for (const char* key : {"bw_min", "bw_max", "bw_samples", "iops_min", "iops_max", "iops_samples"})
    CHECK(j[key] == 0);
  for (const char* key : {"bw_mean", "bw_dev", "iops_mean", "iops_stddev"}) CHECK(j[key] == 0.0);
}

TEST_CASE("fio json: rates use fio's integer arithmetic") {
  // 3 I/Os of 1000 bytes in 7 ms: 3000 x 1000 / 7 = 428571 B/s, / 1024 = 418 KiB/s.
  const IoStat bw = interval_rates({kMs, 2 * kMs, 3 * kMs}, 1000, Time{}, Time::ms(7), Time::ms(7), 1024);
  CHECK(bw.max == 418);
  const IoStat iops = interval_rates({kMs, 2 * kMs, 3 * kMs}, 1, Time{}, Time::ms(7), Time::ms(7), 1);
  CHECK(iops.max == 428);  // 3000 / 7
}

// ---- queue depths (io_u_mark_depth, __io_u_mark_map, stat_calc_dist)

TEST_CASE("fio json: depth buckets as io_u_mark_depth, batch buckets as __io_u_mark_map") {
  CHECK(depth_bucket(1) == 0);
  CHECK(depth_bucket(2) == 1);
  CHECK(depth_bucket(3) == 1);
  CHECK(depth_bucket(4) == 2);
  CHECK(depth_bucket(15) == 3);
  CHECK(depth_bucket(16) == 4);
  CHECK(depth_bucket(31) == 4);
  CHECK(depth_bucket(32) == 5);
  CHECK(depth_bucket(63) == 5);
  CHECK(depth_bucket(64) == 6);
  CHECK(depth_bucket(1024) == 6);
  CHECK(batch_bucket(0) == 0);
  CHECK(batch_bucket(1) == 1);
  CHECK(batch_bucket(4) == 1);
  CHECK(batch_bucket(5) == 2);
  CHECK(batch_bucket(16) == 3);
  CHECK(batch_bucket(17) == 4);
  CHECK(batch_bucket(32) == 4);
  CHECK(batch_bucket(33) == 5);
  CHECK(batch_bucket(64) == 5);
  CHECK(batch_bucket(65) == 6);
}

TEST_CASE("fio json: iodepth_level, iodepth_submit and iodepth_complete in percent with fio's keys") {
  DepthCounts d;
  for (uint32_t depth = 1; depth <= 32; ++depth) d.submitted(depth);  // ramping up to 32
  for (int i = 0; i < 968; ++i) d.submitted(32);
  for (int i = 0; i < 998; ++i) d.reaped(1);
  d.reaped(2);
  const json j = depth_json(d);
  const json& level = j["iodepth_level"];
  CHECK(level.size() == 7);
  CHECK(level["1"] == doctest::Approx(0.1));
  CHECK(level["2"] == doctest::Approx(0.2));
  CHECK(level["16"] == doctest::Approx(1.6));
  CHECK(level["32"] == doctest::Approx(96.9));
  CHECK(level[">=64"] == 0.0);
  double total = 0;
  for (const auto& [key, percent] : level.items()) total += percent.get<double>();
  CHECK(total == doctest::Approx(100.0));
  CHECK(j["iodepth_submit"]["4"] == 100.0);  // every I/O submitted alone
  CHECK(j["iodepth_submit"]["0"] == 0.0);
  CHECK(j["iodepth_complete"]["4"] == 100.0);
  const std::vector<std::string> keys = {"0", "4", "8", "16", "32", "64", ">=64"};
  for (const std::string& k : keys) CHECK(j["iodepth_complete"].contains(k));
  // Below 0.1 % but not empty shows as 0.1 (stat_calc_dist).
  DepthMap map{};
  map[0] = 1;
  map[1] = 9999;
  CHECK(depth_percents(map, 10000)[0] == 0.1);
  CHECK(depth_percents(map, 0)[1] == 0.0);
}

TEST_CASE("fio json: bw_agg is bw_mean in percent of the group's aggregate bandwidth") {
  auto job = [](uint64_t io_bytes, uint64_t runtime_ms, double bw_mean, uint64_t samples) {
    json dir = direction_json(DirStats{}, Time{});
    dir["io_bytes"] = io_bytes;
    dir["runtime"] = runtime_ms;
    dir["bw_mean"] = bw_mean;
    dir["bw_samples"] = samples;
    return json{{"read", dir}, {"write", direction_json(DirStats{}, Time{})}, {"trim", dir}};
  };
  // Two jobs: 3 MiB and 1 MiB in 1 s (the longer runtime): 4 MiB/s = 4096 KiB/s together.
  json jobs = json::array({job(3 << 20, 1000, 3072.9, 2), job(1 << 20, 500, 1024.0, 1)});
  jobs[1]["trim"]["bw_samples"] = 0;
  add_bw_agg(jobs);
  CHECK(jobs[0]["read"]["bw_agg"] == doctest::Approx(75.0));  // 3072 (the mean as an int) of 4096
  CHECK(jobs[1]["read"]["bw_agg"] == doctest::Approx(25.0));
  CHECK(jobs[0]["write"]["bw_agg"] == 0.0);  // no samples
  CHECK(jobs[1]["trim"]["bw_agg"] == 0.0);
}

TEST_CASE("fio json: a direction that moved no bytes has no runtime, as fio's update_runtime") {
  DirStats reads;
  reads.ios = 2;
  reads.bytes = 8192;
  CHECK(direction_json(reads, Time::ms(40), IoStat{}, IoStat{})["runtime"] == 40);
  CHECK(direction_json(DirStats{}, Time::ms(40), IoStat{}, IoStat{})["runtime"] == 0);
}
