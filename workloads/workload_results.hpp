// What the kinds' entries in results.json share.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "workloads/workload.hpp"

namespace rdmasim {

// min, p50, p95, p99, p999, max and mean of `ps`, in nanoseconds.
nlohmann::json latency_json(std::vector<int64_t> ps);
// A workload's hosts: the one name, or the list.
nlohmann::json hosts_json(const std::vector<std::string>& hosts);
// bytes x 8 / (end - start), in Gbit/s; 0 for an empty interval.
double throughput_gbps(const FlowStats& s);
// A workload of messages between hosts (the verbs kinds, flows): op, ends,
// QP type, size, what completed how, when, and how fast; `measure` says what
// its latency samples are (docs/yaml.md, "Latency").
void message_results(const WorkloadConfig& w, const FlowStats& s, std::string_view measure,
                     nlohmann::json& j);

}  // namespace rdmasim
