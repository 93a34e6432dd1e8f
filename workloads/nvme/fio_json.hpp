// An nvme workload's numbers in fio's terms: its results.json entry
// (iops, bw_bytes, slat_ns, clat_ns, lat_ns with fio's default percentile
// list, data_verified) and its job in fio's --output-format=json layout
// (DIR/fio.json: jobs[].jobname, jobs[].read.iops, jobs[].read.clat_ns
// .percentile["99.000000"], ...), with fio's bandwidth and IOPS samples
// and queue depth distributions (fio_stats.hpp). Percentiles are of the
// samples themselves (nearest rank), not of fio's log-linear histogram.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "topologies/config.hpp"
#include "workloads/nvme/initiator.hpp"

namespace rdmasim::nvme {

// fio's default percentile_list.
inline constexpr double kFioPercentiles[] = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                             80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};

// {min, max, mean, stddev, N, percentile{...}} in ns, as fio writes a latency object.
nlohmann::json latency_json_ns(const std::vector<int64_t>& samples_ps, bool percentiles);
// fio's latency_ns, latency_us and latency_ms objects of these completion latencies.
nlohmann::json latency_buckets_json(const std::vector<int64_t>& samples_ps);
// A direction's object (fio's "read" or "write"), with its bandwidth (KiB/s)
// and IOPS samples' figures (bw_min ... iops_samples; bw_agg is the group's:
// add_bw_agg).
nlohmann::json direction_json(const DirStats& d, Time window, const IoStat& bw = {}, const IoStat& iops = {});
// fio's iodepth_level, iodepth_submit and iodepth_complete, in percent.
nlohmann::json depth_json(const DepthCounts& d);
// The workload's entry in results.json (name, kind and hosts added by the caller).
nlohmann::json nvme_results_json(const NvmeResult& r, const NvmeJobConfig& c);
// Its job in fio.json, from its results.json entry (a run split over ranks
// has every entry on rank 0 only after the merge).
nlohmann::json fio_job_json(const nlohmann::json& entry);
// Its jobs in fio.json: one, or with numjobs above 1 and no group_reporting
// one per job, as fio writes them (the same jobname, each job's own I/O).
nlohmann::json fio_jobs_json(const nlohmann::json& entry);
// Each direction's bw_agg: its bw_mean in percent of the aggregate
// bandwidth of the jobs' group (fio.json's jobs are one group, groupid 0).
void add_bw_agg(nlohmann::json& jobs);
// The whole fio.json around the jobs.
nlohmann::json fio_document(nlohmann::json jobs, uint64_t seed, Time end);

}  // namespace rdmasim::nvme
