#include "workloads/nvme/fio_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace rdmasim::nvme {

using nlohmann::json;

namespace {

std::string percentile_key(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%f", p);
  return buf;
}

std::string rw_name(NvmeRw rw) { return std::string(to_string(rw)); }

}  // namespace

json latency_json_ns(const std::vector<int64_t>& samples_ps, bool percentiles) {
  json j = {{"min", 0}, {"max", 0}, {"mean", 0.0}, {"stddev", 0.0}, {"N", samples_ps.size()}};
  if (samples_ps.empty()) return j;
  std::vector<int64_t> s = samples_ps;
  std::sort(s.begin(), s.end());
  long double sum = 0, sq = 0;
  for (int64_t v : s) sum += v;
  const long double mean = sum / s.size();
  for (int64_t v : s) sq += (v - mean) * (v - mean);
  j["min"] = s.front() / 1000;
  j["max"] = s.back() / 1000;
  j["mean"] = static_cast<double>(mean / 1000);
  j["stddev"] = static_cast<double>(std::sqrt(sq / s.size()) / 1000);
  if (percentiles) {
    json p = json::object();
    for (double q : kFioPercentiles) {
      // Nearest rank: the smallest sample with at least q % of the samples at or below it.
      const auto rank = static_cast<size_t>(std::ceil(q / 100.0 * static_cast<double>(s.size())));
      p[percentile_key(q)] = s[std::clamp<size_t>(rank, 1, s.size()) - 1] / 1000;
    }
    j["percentile"] = std::move(p);
  }
  return j;
}

json direction_json(const DirStats& d, Time window, const IoStat& bw, const IoStat& iops) {
  const double secs = window.to_s();
  json j;
  j["io_bytes"] = d.bytes;
  j["io_kbytes"] = d.bytes / 1024;
  j["bw_bytes"] = secs > 0 ? static_cast<uint64_t>(static_cast<double>(d.bytes) / secs) : 0;
  j["bw"] = secs > 0 ? static_cast<uint64_t>(static_cast<double>(d.bytes) / secs / 1024) : 0;  // KiB/s
  j["iops"] = secs > 0 ? static_cast<double>(d.ios) / secs : 0.0;
  // ms; fio's update_runtime counts a direction only if it moved bytes (a
  // read-only job's write runtime is 0).
  j["runtime"] = d.bytes ? static_cast<uint64_t>(window.count() / 1'000'000'000) : 0;
  j["total_ios"] = d.ios;
  // fio's short_io_u (an I/O that moved less than it asked, the rest
  // retried) and drop_io_u (dropped by rate limiting): an NVMe command
  // moves its whole length or fails, and no job here is rate limited.
  j["short_ios"] = 0;
  j["drop_ios"] = 0;
  j["slat_ns"] = latency_json_ns(d.slat, false);
  j["clat_ns"] = latency_json_ns(d.clat, true);
  j["lat_ns"] = latency_json_ns(d.lat, true);
  // add_ddir_status_json: without samples every figure is 0.
  auto figures = [](const IoStat& s) {
    return std::tuple{s.samples ? s.min : 0, s.samples ? s.max : 0, s.samples ? s.mean : 0.0, s.dev()};
  };
  std::tie(j["bw_min"], j["bw_max"], j["bw_mean"], j["bw_dev"]) = figures(bw);
  j["bw_samples"] = bw.samples;
  std::tie(j["iops_min"], j["iops_max"], j["iops_mean"], j["iops_stddev"]) = figures(iops);
  j["iops_samples"] = iops.samples;
  return j;
}

json depth_json(const DepthCounts& d) {
  uint64_t ios = 0;
  for (uint64_t n : d.level) ios += n;
  auto percents = [](const DepthMap& map, uint64_t total, auto key) {
    const auto p = depth_percents(map, total);
    json j = json::object();
    for (int i = 0; i < kDepthBuckets; ++i) j[key(i)] = p[static_cast<size_t>(i)];
    return j;
  };
  // stat.c's labels: depths 1, 2, 4, ... 32, >=64; batches 0, 4, 8, ... 64, >=64.
  auto depth_key = [](int i) { return i < 6 ? std::to_string(1 << i) : ">=64"; };
  auto batch_key = [](int i) { return i == 0 ? "0" : i < 6 ? std::to_string(1 << (i + 1)) : ">=64"; };
  return {{"iodepth_level", percents(d.level, ios, depth_key)},
          {"iodepth_submit", percents(d.submit, d.submits, batch_key)},
          {"iodepth_complete", percents(d.complete, d.reaps, batch_key)}};
}

namespace {

// One host's CPU in the window: working, polling, and each per I/O (null without I/O).
json cpu_json(const std::string& host, const CpuSpent& s, uint64_t ios) {
  auto per_io = [&](Time t) {
    return ios ? json(static_cast<double>(t.count()) / static_cast<double>(ios)) : json();
  };
  return {{"host", host},
          {"work_ps", s.work.count()},
          {"poll_ps", s.poll.count()},
          {"work_ps_per_io", per_io(s.work)},
          {"poll_ps_per_io", per_io(s.poll)},
          {"total_ps_per_io", per_io(s.work + s.poll)}};
}

// Each job's I/Os (of numjobs), each `bs` bytes.
std::vector<DirStats> by_job(const DirStats& d, uint32_t numjobs, uint64_t bs) {
  std::vector<DirStats> out(numjobs);
  for (size_t i = 0; i < d.job.size(); ++i) {
    DirStats& one = out[d.job[i]];
    ++one.ios;
    one.bytes += bs;
    one.slat.push_back(d.slat[i]);
    one.clat.push_back(d.clat[i]);
    one.lat.push_back(d.lat[i]);
    one.done.push_back(d.done[i]);
  }
  return out;
}

// A job's bandwidth (KiB/s) and IOPS samples of one direction.
struct Rates {
  IoStat bw, iops;
};

// One job's read and write samples, from the counted window's start to its
// last completion (its thread's end: fio samples no partial interval).
std::array<Rates, 2> job_rates(const DirStats& read, const DirStats& write, Time from,
                               const NvmeJobConfig& c) {
  Time until = from;
  for (const DirStats* d : {&read, &write})
    for (int64_t t : d->done) until = std::max(until, Time::ps(t));
  std::array<Rates, 2> out;
  for (size_t k = 0; k < 2; ++k) {
    const DirStats& d = k == 0 ? read : write;
    out[k] = {interval_rates(d.done, c.bs, from, until, c.bw_avg_time, 1024),
              interval_rates(d.done, 1, from, until, c.iops_avg_time, 1)};
  }
  return out;
}

// Each job's read, write, latency buckets and depths, in the counted window of them all.
json per_job_json(const std::vector<DirStats>& reads, const std::vector<DirStats>& writes,
                  const std::vector<std::array<Rates, 2>>& rates, const std::vector<DepthCounts>& depths,
                  Time window) {
  json jobs = json::array();
  for (size_t k = 0; k < reads.size(); ++k) {
    std::vector<int64_t> clat = reads[k].clat;
    clat.insert(clat.end(), writes[k].clat.begin(), writes[k].clat.end());
    json one = latency_buckets_json(clat);
    one["read"] = direction_json(reads[k], window, rates[k][0].bw, rates[k][0].iops);
    one["write"] = direction_json(writes[k], window, rates[k][1].bw, rates[k][1].iops);
    one.update(depth_json(depths[k]));
    jobs.push_back(std::move(one));
  }
  return jobs;
}

// `read`, `write`, the depths and (numjobs above 1 without group_reporting)
// `per_job`: each job's samples and depths, the workload's theirs summed as
// fio's group_reporting sums them.
void add_directions(json& out, const NvmeResult& r, const NvmeJobConfig& c, Time window) {
  const auto reads = by_job(r.read, c.numjobs, c.bs), writes = by_job(r.write, c.numjobs, c.bs);
  std::vector<DepthCounts> depths = r.depths;
  depths.resize(c.numjobs);
  std::vector<std::array<Rates, 2>> rates;
  std::array<Rates, 2> summed;
  DepthCounts all;
  for (uint32_t k = 0; k < c.numjobs; ++k) {
    rates.push_back(job_rates(reads[k], writes[k], r.measure_start, c));
    for (size_t d = 0; d < 2; ++d) {
      summed[d].bw.sum(rates.back()[d].bw);
      summed[d].iops.sum(rates.back()[d].iops);
    }
    all.add(depths[k]);
  }
  out["read"] = direction_json(r.read, window, summed[0].bw, summed[0].iops);
  out["write"] = direction_json(r.write, window, summed[1].bw, summed[1].iops);
  out.update(depth_json(all));
  if (c.numjobs > 1 && !c.group_reporting)
    out["per_job"] = per_job_json(reads, writes, rates, depths, window);  // fio.json's jobs
}

}  // namespace

json latency_buckets_json(const std::vector<int64_t>& samples_ps) {
  // fio's io_u_mark_latency: each I/O counted once, in ns below 1 us, in us
  // below 1 ms, else in ms; a bucket holds latencies below its key (the
  // last ms bucket: 2000 and above), as percentages of the I/Os.
  static constexpr int64_t kBounds[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000};
  uint64_t ns[10] = {}, us[10] = {}, ms[12] = {};
  for (int64_t ps : samples_ps) {
    const int64_t n = ps / 1000;
    auto bucket = [](int64_t v, size_t count) {
      return static_cast<size_t>(std::upper_bound(kBounds, kBounds + count, v) - kBounds);
    };
    if (n < 1000)
      ++ns[bucket(n, 10)];
    else if (n < 1'000'000)
      ++us[bucket(n / 1000, 10)];
    else
      ++ms[bucket(n / 1'000'000, 11)];
  }
  auto percents = [&](const uint64_t* counts, size_t count) {
    json j = json::object();
    for (size_t i = 0; i < count; ++i) {
      const std::string key = i < 11 ? std::to_string(kBounds[i]) : ">=2000";
      j[key] = samples_ps.empty() ? 0.0 : 100.0 * static_cast<double>(counts[i]) / samples_ps.size();
    }
    return j;
  };
  return {
      {"latency_ns", percents(ns, 10)}, {"latency_us", percents(us, 10)}, {"latency_ms", percents(ms, 12)}};
}

json nvme_results_json(const NvmeResult& r, const NvmeJobConfig& c) {
  const Time window = r.measure_end > r.measure_start ? r.measure_end - r.measure_start : Time{};
  DirStats all = r.read;
  all.ios += r.write.ios;
  all.bytes += r.write.bytes;
  for (auto [to, from] : {std::pair{&all.slat, &r.write.slat}, std::pair{&all.clat, &r.write.clat},
                          std::pair{&all.lat, &r.write.lat}})
    to->insert(to->end(), from->begin(), from->end());
  json j = direction_json(all, window);
  json out;
  out["initiator"] = c.initiator;
  out["target"] = c.target;
  out["nsid"] = c.nsid;
  out["rw"] = rw_name(c.rw);
  out["bs"] = c.bs;
  out["iodepth"] = c.iodepth;
  out["numjobs"] = c.numjobs;
  out["iops"] = j["iops"];
  out["bw_bytes"] = j["bw_bytes"];
  out["slat_ns"] = j["slat_ns"];
  out["clat_ns"] = j["clat_ns"];
  out["lat_ns"] = j["lat_ns"];
  out.update(latency_buckets_json(all.clat));
  add_directions(out, r, c, window);
  out["runtime_ps"] = window.count();
  out["ops"] = all.ios;
  out["bytes"] = all.bytes;
  out["errors"] = r.errors;
  out["bad_blocks"] = r.bad_blocks;
  out["data_verified"] = r.data_verified;
  out["finished"] = r.finished;
  if (!r.error.empty()) out["error"] = r.error;
  if (r.recovered ||
      r.timeouts) {  // error recovery ran, or a connect timed out (a loss-free run's results are unchanged)
    out["timeouts"] = r.timeouts;
    out["reconnects"] = r.reconnects;
  }
  json cpu = {{"window_ps", r.cpu_window.count()},
              {"ios", r.cpu_ios},
              {"initiator", cpu_json(c.initiator, r.initiator_cpu, r.cpu_ios)},
              {"target", cpu_json(c.target, r.target_cpu, r.cpu_ios)}};
  cpu["target"]["polling_cores"] = r.target_polling_cores;
  out["cpu"] = std::move(cpu);
  return out;
}

json fio_job_json(const json& entry) {
  json j;
  j["jobname"] = entry.at("name");
  j["groupid"] = 0;
  // EIO: I/O failed, or none could be done (a queue that did not connect).
  j["error"] = entry.at("errors").get<uint64_t>() || entry.contains("error") ? 5 : 0;
  j["job options"] = {{"rw", entry.at("rw")},
                      {"bs", std::to_string(entry.at("bs").get<uint64_t>())},
                      {"iodepth", std::to_string(entry.at("iodepth").get<uint64_t>())},
                      {"numjobs", std::to_string(entry.at("numjobs").get<uint64_t>())},
                      {"ioengine", "libaio"},
                      {"direct", "1"}};
  j["read"] = entry.at("read");
  j["write"] = entry.at("write");
  j["trim"] = direction_json(DirStats{}, Time{});                          // no trims (rw refuses them)
  j["sync"] = {{"total_ios", 0}, {"lat_ns", latency_json_ns({}, false)}};  // no fsyncs: raw namespace I/O
  j["job_runtime"] = entry.at("runtime_ps").get<uint64_t>() / 1'000'000'000;
  // The model does not split user from kernel time: the initiator host's
  // busy time (work and polling, all its cores) in the CPU window counts as
  // sys (the NVMe-oF host driver is the kernel's), in percent of the jobs'
  // time (window x numjobs), as fio's group_reporting sums both over jobs.
  const json& cpu = entry.at("cpu");
  const double jobs_ps =
      static_cast<double>(cpu.at("window_ps").get<int64_t>()) * entry.at("numjobs").get<double>();
  const auto busy =
      cpu.at("initiator").at("work_ps").get<int64_t>() + cpu.at("initiator").at("poll_ps").get<int64_t>();
  j["usr_cpu"] = 0.0;
  j["sys_cpu"] = jobs_ps > 0 ? 100.0 * static_cast<double>(busy) / jobs_ps : 0.0;
  j["ctx"] = 0;  // context switches and page faults are not modelled
  j["majf"] = 0;
  j["minf"] = 0;
  for (const char* key :
       {"latency_ns", "latency_us", "latency_ms", "iodepth_level", "iodepth_submit", "iodepth_complete"})
    j[key] = entry.at(key);
  // No latency_target (fio's lat_target_init): the depth is iodepth, the
  // percentile option's default 100, no target and no window.
  j["latency_depth"] = entry.at("iodepth");
  j["latency_target"] = 0;
  j["latency_percentile"] = 100.0;
  j["latency_window"] = 0;
  return j;
}

json fio_jobs_json(const json& entry) {
  json job = fio_job_json(entry);
  if (!entry.contains("per_job")) return json::array({std::move(job)});
  json clones = json::array();
  for (const json& one : entry.at("per_job")) {
    json clone = job;  // the same jobname, options and CPU share
    for (const auto& [key, value] : one.items()) clone[key] = value;
    clones.push_back(std::move(clone));
  }
  return clones;
}

void add_bw_agg(json& jobs) {
  // The group's aggregate bandwidth (B/s) per direction: its jobs' bytes
  // over the longest runtime (ms) of those that ran it, as show_run_stats.
  static constexpr const char* kDirections[] = {"read", "write", "trim"};
  std::array<uint64_t, 3> bytes{}, max_run{};
  for (const json& job : jobs)
    for (size_t d = 0; d < 3; ++d) {
      const json& dir = job.at(kDirections[d]);
      if (dir.at("runtime").get<uint64_t>() == 0) continue;
      max_run[d] = std::max(max_run[d], dir.at("runtime").get<uint64_t>());
      bytes[d] += dir.at("io_bytes").get<uint64_t>();
    }
  for (json& job : jobs)
    for (size_t d = 0; d < 3; ++d) {
      json& dir = job.at(kDirections[d]);
      const uint64_t agg = max_run[d] ? bytes[d] * 1000 / max_run[d] : 0;
      // convert_agg_kbytes_percent takes the mean as an int (KiB/s); no samples: 0.
      double percent = 0;
      if (dir.at("bw_samples").get<uint64_t>() > 0) {
        const auto mean = static_cast<int>(dir.at("bw_mean").get<double>());
        percent = agg > 1024 ? std::min(100.0, mean * 100.0 / (static_cast<double>(agg) / 1024.0)) : 100.0;
      }
      dir["bw_agg"] = percent;
    }
}

json fio_document(json jobs, uint64_t seed, Time end) {
  add_bw_agg(jobs);
  return {{"fio version", "fio-3.33 (rdmasim)"},
          {"timestamp", 0},
          {"timestamp_ms", 0},  // no wall clock: the same seed writes the same bytes
          {"time", "simulated"},
          {"global options", {{"randseed", std::to_string(seed)}}},
          {"end_time_ps", end.count()},
          {"jobs", std::move(jobs)}};
}

}  // namespace rdmasim::nvme
