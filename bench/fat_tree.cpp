// A datacenter-scale run: a k-ary fat tree (k^3/4 hosts), 100 Gb/s links with
// 1 us delay, MTU 1024, RoCE v2 with PFC, a `flows` workload drawing
// web-search flow sizes at a load, capture off. Prints how long set-up and
// the run took in wall seconds, the peak resident memory, events and frames
// delivered to hosts per wall second, and how many flows completed.
//
//   bench_fat_tree [--k 8] [--load 0.3] [--time 1ms] [--cdf websearch] [--payload pattern|memory]
//                  [--partition pods|spread|graph]
//
// --payload memory stores the flows' bytes in host memory instead of
// computing them from the pattern (docs/yaml.md, flows `payload`).
//
// Under mpirun with --partition, the run is split over the ranks
// (docs/parallel.md): rank 0 prints the figures, then one line per rank
// with its windows, frames and bytes sent, events, time running events and
// waiting in the exchange, and peak memory.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "apps/runner.hpp"
#include "experiment/loader.hpp"
#include "parallel/cluster.hpp"

using namespace rdmasim;

namespace {

std::string experiment(int k, const std::string& load, const std::string& time, const std::string& cdf,
                       const std::string& payload) {
  return "name: fat_tree\nfabric: roce_v2\nseed: 1\nstop: " + time +
         "\nlink: {bandwidth: 100Gbps, delay: 1us, mtu: 1024}\nflow_control: pfc\n"
         "topology: {generate: {kind: fat_tree, k: " +
         std::to_string(k) + "}}\nworkloads:\n  - {kind: flows, cdf: " + cdf + ", load: " + load +
         ", duration: " + time + ", payload: " + payload + "}\ncapture: {pcap: none}\n";
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024;  // ru_maxrss is in KiB on Linux
}

}  // namespace

int main(int argc, char** argv) {
  Cluster& cluster = Cluster::init(argc, argv);
  int k = 8;
  std::string load = "0.3", time = "1ms", cdf = "websearch", payload = "pattern";
  std::optional<PartitionMode> split;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--k"))
      k = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--load"))
      load = argv[i + 1];
    else if (!std::strcmp(argv[i], "--time"))
      time = argv[i + 1];
    else if (!std::strcmp(argv[i], "--cdf"))
      cdf = argv[i + 1];
    else if (!std::strcmp(argv[i], "--payload"))
      payload = argv[i + 1];
    else if (!std::strcmp(argv[i], "--partition"))
      split = partition_mode(argv[i + 1]);
    else {
      std::fprintf(
          stderr,
          "usage: %s [--k K] [--load L] [--time T] [--cdf websearch|hadoop] [--payload pattern|memory]\n",
          argv[0]);
      return 2;
    }
  }
  LoadResult r = load_experiment_text(experiment(k, load, time, cdf, payload), "fat_tree.yaml");
  if (!r.config) {
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.format().c_str());
    return 2;
  }
  // Rank 0's own directory (its process id: benchmarks run side by side
  // must not remove each other's output), made before any rank writes.
  std::string name = "rdmasim-bench-fat-tree-" + std::to_string(getpid());
  if (cluster.rank() == 0) {
    std::filesystem::remove_all(std::filesystem::temp_directory_path() / name);
    std::filesystem::create_directories(std::filesystem::temp_directory_path() / name);
  }
  name = cluster.broadcast(name);
  const auto dir = std::filesystem::temp_directory_path() / name;
  const auto t0 = std::chrono::steady_clock::now();
  Run run(*r.config, dir, {{}, split});
  const nlohmann::json res = run.execute();
  const nlohmann::json stats = run.parallel_stats() ? *run.parallel_stats() : nlohmann::json();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (cluster.rank() != 0) return 0;
  std::filesystem::remove_all(dir);

  uint64_t delivered = 0;
  for (const auto& h : res["hosts"]) delivered += h["nic_frames_received"].get<uint64_t>();
  const auto& fct = res["workloads"][0]["fct"];
  const auto events = res["events"].get<uint64_t>();
  std::printf(
      "k=%d hosts=%d load=%s simulated=%s wall_s=%.2f peak_rss_mib=%.0f events=%llu events_per_s=%.0f "
      "frames_delivered=%llu frames_per_s=%.0f flows_started=%llu flows_completed=%llu\n",
      k, k * k * k / 4, load.c_str(), time.c_str(), secs, peak_rss_mib(),
      static_cast<unsigned long long>(events), static_cast<double>(events) / secs,
      static_cast<unsigned long long>(delivered), static_cast<double>(delivered) / secs,
      static_cast<unsigned long long>(fct["started"].get<uint64_t>()),
      static_cast<unsigned long long>(fct["completed"].get<uint64_t>()));
  if (!stats.is_null()) {
    std::printf("ranks=%d lookahead_ps=%lld cut_links=%llu\n", stats["ranks"].get<int>(),
                static_cast<long long>(stats["lookahead_ps"].get<int64_t>()),
                static_cast<unsigned long long>(stats["cut_links"].get<uint64_t>()));
    int i = 0;
    for (const auto& s : stats["per_rank"])
      std::printf(
          "rank=%d hosts=%llu nodes=%llu windows=%llu frames_sent=%llu bytes_sent=%llu notes_sent=%llu "
          "events=%llu run_s=%.2f wait_s=%.2f pack_s=%.2f peak_rss_mib=%.0f\n",
          i++, static_cast<unsigned long long>(s["hosts"].get<uint64_t>()),
          static_cast<unsigned long long>(s["nodes"].get<uint64_t>()),
          static_cast<unsigned long long>(s["windows"].get<uint64_t>()),
          static_cast<unsigned long long>(s["frames_sent"].get<uint64_t>()),
          static_cast<unsigned long long>(s["bytes_sent"].get<uint64_t>()),
          static_cast<unsigned long long>(s["notes_sent"].get<uint64_t>()),
          static_cast<unsigned long long>(s["events"].get<uint64_t>()), s["run_s"].get<double>(),
          s["wait_s"].get<double>(), s["pack_s"].get<double>(),
          static_cast<double>(s["max_rss_kib"].get<uint64_t>()) / 1024);
  }
  return 0;
}
