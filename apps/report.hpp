// What the command line prints: a short summary of a run, and the
// side-by-side table of a comparison across fabrics. Both read the JSON the
// runner returns (results.json), tolerating missing keys.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "apps/csv.hpp"
#include "cost/work.hpp"

namespace rdmasim {

// Per workload: name, kind, from -> to, ops, completions by status,
// throughput, latency p50/p99, data verified (n/a, with why, for what
// carries no data to check); then end time, drops (drops_json: every
// place, named) and where the output went.
std::string format_run_summary(const nlohmann::json& results, const std::filesystem::path& dir);

// The work a run's results.json says it did: GB moved and million
// operations, all workloads together, over the span from the first start to
// the last end (what cost.per_unit prices).
WorkDone work_done(const nlohmann::json& results);

// Every frame and datagram lost, and where: {"total": N, "at": {link,
// switch_queue, no_route and ttl_expired (a switch's forwarding decision),
// nic_queue (a host's egress), nic_ring, backlog, socket (buffer full),
// no_socket (nothing bound to its port, or a bad header)}}, from the
// ports', the switches', the host stacks' and the datagram workloads'
// counters.
// Results without a port table (a run's own, which wrote its ports to
// results.json from the network) give the "drops" they hold.
nlohmann::json drops_json(const nlohmann::json& results);
// The same with the ports and hosts from `ports` and `hosts` (records as
// results.json's), which `results` need not hold.
nlohmann::json drops_json(const nlohmann::json& results, const RecordSource& ports,
                          const RecordSource& hosts);

// One fabric's entry of compare.json, from its results.json: what the table
// shows (throughput, latency, cpu busy, drops, end time) and where it lives.
nlohmann::json compare_entry(std::string_view fabric, const nlohmann::json& results, std::string_view dir);
// The entry of a fabric that was not run, with why.
nlohmann::json compare_skipped(std::string_view fabric, std::string_view reason);
// An entry of a fabric whose run failed inside rdmasim.
nlohmann::json compare_failed(std::string_view fabric, std::string_view reason);

// compare.csv: a row per fabric, its compare.json entry flattened as
// results.json's tables are (cost.total, workloads.0.throughput_gbps, ...),
// without the BOM, which each fabric's bom.csv has.
std::string compare_csv(const nlohmann::json& compare);

// Fabrics as columns, one row a metric (per workload: throughput, latency
// p50 and p99; then cpu busy, drops, end time), then the skipped fabrics.
// `compare` is compare.json: {"experiment", "fabrics": [entries]}.
std::string format_compare_table(const nlohmann::json& compare);

}  // namespace rdmasim
