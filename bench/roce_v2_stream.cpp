// One RC RDMA WRITE stream at 100 Gb/s between two hosts through a switch,
// 64 KiB messages, MTU 4096: how many simulated frames the whole model
// (NIC, transport, ports, switch, capture) delivers per wall-clock second,
// with capture off and with full-frame capture on. Each measurement runs
// `repeat` times (default 3) and reports the median, because the machine's
// other tenants move a single run by tens of percent.
//
//   bench_roce_v2_stream [--messages N] [--capture off|on|both] [--repeat R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/runner.hpp"
#include "experiment/loader.hpp"

using namespace rdmasim;

namespace {

std::string experiment(uint64_t messages, bool capture) {
  return "name: stream\nfabric: roce_v2\nseed: 1\n"
         "link: {bandwidth: 100Gbps, delay: 1us, mtu: 4096, buffer: 1MiB}\n"
         "topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}\n"
         "workloads:\n  - {kind: rdma_write, from: a, to: b, qp: rc, size: 64KiB, count: " +
         std::to_string(messages) + ", outstanding: 4}\ncapture: {pcap: " + (capture ? "hosts" : "none") +
         "}\n";
}

// One run: prints its figures, returns frames delivered to hosts per wall second.
double measure(uint64_t messages, bool capture) {
  LoadResult r = load_experiment_text(experiment(messages, capture), "stream.yaml");
  if (!r.config) {
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.format().c_str());
    std::exit(1);
  }
  const auto dir = std::filesystem::temp_directory_path() / "rdmasim-bench-stream";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto t0 = std::chrono::steady_clock::now();
  Run run(*r.config, dir);
  const nlohmann::json res = run.execute();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The port table went to results.json (two hosts and a switch: small to read back).
  std::ifstream file(dir / "results.json");
  const nlohmann::json written = nlohmann::json::parse(file);
  uint64_t delivered = 0, hops = 0;
  for (const auto& p : written["ports"]) {
    hops += p["rx_frames"].get<uint64_t>();
    if (p["node"] == "a" || p["node"] == "b") delivered += p["rx_frames"].get<uint64_t>();
  }
  const auto& w = res["workloads"][0];
  std::printf(
      "capture=%s messages=%llu frames_delivered=%llu hop_deliveries=%llu events=%llu wall_s=%.3f "
      "simulated_gbps=%.2f\n",
      capture ? "on" : "off", static_cast<unsigned long long>(messages),
      static_cast<unsigned long long>(delivered), static_cast<unsigned long long>(hops),
      static_cast<unsigned long long>(res["events"].get<uint64_t>()), secs,
      w["throughput_gbps"].get<double>());
  std::filesystem::remove_all(dir);
  return static_cast<double>(delivered) / secs;
}

void report(uint64_t messages, bool capture, int repeat) {
  std::vector<double> rates;
  for (int i = 0; i < repeat; ++i) rates.push_back(measure(messages, capture));
  std::sort(rates.begin(), rates.end());
  std::printf("runs=%d min_packets_per_s=%.0f max_packets_per_s=%.0f\n", repeat, rates.front(), rates.back());
  std::printf("packets_per_s=%.0f\n", rates[rates.size() / 2]);  // the median
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t messages = 20000;
  std::string capture = "both";
  int repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--messages"))
      messages = std::stoull(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--capture"))
      capture = argv[i + 1];
    else if (!std::strcmp(argv[i], "--repeat"))
      repeat = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: %s [--messages N] [--capture off|on|both] [--repeat R]\n", argv[0]);
      return 2;
    }
  }
  if (capture == "off" || capture == "both") report(messages, false, repeat);
  if (capture == "on" || capture == "both") report(messages, true, repeat);
  return 0;
}
