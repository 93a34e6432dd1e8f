#include "workloads/workload_results.hpp"

#include <algorithm>

namespace rdmasim {

nlohmann::json latency_json(std::vector<int64_t> v) {
  if (v.empty())
    return {{"min", 0}, {"p50", 0}, {"p95", 0}, {"p99", 0}, {"p999", 0}, {"max", 0}, {"mean", 0}};
  std::sort(v.begin(), v.end());
  auto pct = [&](double q) {
    const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
    return static_cast<double>(v[i]) / 1e3;
  };
  double sum = 0;
  for (int64_t x : v) sum += static_cast<double>(x);
  return {{"min", static_cast<double>(v.front()) / 1e3},
          {"p50", pct(0.50)},
          {"p95", pct(0.95)},
          {"p99", pct(0.99)},
          {"p999", pct(0.999)},
          {"max", static_cast<double>(v.back()) / 1e3},
          {"mean", sum / static_cast<double>(v.size()) / 1e3}};
}

nlohmann::json hosts_json(const std::vector<std::string>& v) {
  if (v.size() == 1) return v[0];
  return v;
}

double throughput_gbps(const FlowStats& s) {
  const double secs = (s.end - s.start).to_s();
  return secs > 0 ? static_cast<double>(s.bytes) * 8 / secs / 1e9 : 0.0;
}

void message_results(const WorkloadConfig& w, const FlowStats& s, std::string_view measure,
                     nlohmann::json& j) {
  j["op"] = w.op;
  j["from"] = hosts_json(w.from);
  j["to"] = hosts_json(w.to);
  j["qp"] = std::string(to_string(w.qp));
  j["size"] = w.size.count();
  j["ops"] = s.ops;
  j["bytes"] = s.bytes;
  j["completions"] = s.completions;
  if (!s.recv_completions.empty()) j["receiver_errors"] = s.recv_completions;
  j["start_ps"] = s.start.count();
  j["end_ps"] = s.end.count();
  j["throughput_gbps"] = throughput_gbps(s);
  j["latency_ns"] = latency_json(s.latency_ps);
  j["latency_measure"] = std::string(measure);
  j["data_verified"] = s.data_verified;
  j["data_mismatch"] = s.data_mismatch;
  j["finished"] = s.finished;
  j["planned_ops"] = s.planned_ops;
  j["retransmitted_packets"] = s.retransmitted_packets;
}

}  // namespace rdmasim
