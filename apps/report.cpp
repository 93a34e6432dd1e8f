#include "apps/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/csv.hpp"

namespace rdmasim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Text rows laid out in columns; `align` has an 'l' or 'r' a column (right when missing).
std::string layout(const std::vector<std::vector<std::string>>& rows, std::string_view align,
                   std::string_view indent = "  ") {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line(indent);
    for (size_t i = 0; i < r.size(); ++i) {
      if (i > 0) line += "  ";
      const bool left = i < align.size() && align[i] == 'l';
      line += left ? fmt::format("{:<{}}", r[i], width[i]) : fmt::format("{:>{}}", r[i], width[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

const json& null_json() {
  static const json null;
  return null;
}

const json& field(const json& j, std::string_view key) {
  const json& null = null_json();
  if (!j.is_object()) return null;
  auto it = j.find(key);
  return it == j.end() ? null : *it;
}

std::string text(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_null()) return "-";
  return j.dump();
}

// `scale` divides the value (ps or ns to us); "-" when it is not a number.
std::string number(const json& j, int decimals, double scale = 1) {
  if (!j.is_number()) return "-";
  return fmt::format("{:.{}f}", j.get<double>() / scale, decimals);
}

// A time in picoseconds in the unit that keeps it under 1000: "10.000 ms".
std::string duration(const json& ps) {
  if (!ps.is_number()) return "-";
  const double v = ps.get<double>();
  static constexpr std::pair<double, const char*> kUnits[] = {
      {1e12, "s"}, {1e9, "ms"}, {1e6, "us"}, {1e3, "ns"}};
  for (const auto& [scale, unit] : kUnits)
    if (v >= scale) return fmt::format("{:.3f} {}", v / scale, unit);
  return fmt::format("{:.0f} ps", v);
}

std::string verified(const json& j) {
  if (!j.is_boolean()) return "-";
  return j.get<bool>() ? "yes" : "NO";
}

// A workload's data check: "MISMATCH" when delivered bytes differ from
// those sent; "cut off" when the run stopped it before it finished (what it
// delivered was intact; `undelivered` counts the rest); "yes"; "not all
// delivered" when it failed first.
std::string data_check(const json& w) {
  if (field(w, "error").is_string()) return "failed";  // it could not run: nothing to check
  const json& ok = field(w, "data_verified");
  const json& mismatch = field(w, "data_mismatch");
  if (ok.is_boolean() && !ok.get<bool>() && !mismatch.is_boolean()) return "MISMATCH";
  if (mismatch.is_boolean() && mismatch.get<bool>()) return "MISMATCH";
  const json& finished = field(w, "finished");
  if (ok.is_boolean() && finished.is_boolean() && !finished.get<bool>()) return "cut off";
  if (!ok.is_boolean() || ok.get<bool>()) return verified(ok);
  return "not all delivered";
}

// "1,234,567".
std::string grouped(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

// A list of hosts as a count ("128 hosts"), one host by name.
std::string hosts(const json& j) {
  if (!j.is_array()) return text(j);
  return j.size() == 1 ? text(j[0]) : grouped(j.size()) + " hosts";
}

// Who talks to whom, readable at any size: "a -> b", "7 hosts -> h0",
// "128 hosts, 16,256 pairs" (all_to_all), "128 hosts" (flows).
std::string endpoints(const json& w) {
  const std::string kind = text(field(w, "kind"));
  const json& from = field(w, "from");
  if (kind == "flows") return hosts(from);
  if (kind == "all_to_all" && from.is_array()) {
    const uint64_t n = from.size();
    return fmt::format("{}, {} pairs", hosts(from), grouped(n * (n - 1)));
  }
  return hosts(from) + " -> " + hosts(field(w, "to"));
}

// Operations done; "123/200 done" when the run ended before the workload.
std::string ops_done(const json& w) {
  const json& finished = field(w, "finished");
  if (finished.is_boolean() && !finished.get<bool>())
    return text(field(w, "ops")) + "/" + text(field(w, "planned_ops")) + " done";
  return text(field(w, "ops"));
}

std::string slowdowns(const json& s) {
  return fmt::format("p50 {}  p95 {}  p99 {}", number(field(s, "p50"), 2), number(field(s, "p95"), 2),
                     number(field(s, "p99"), 2));
}

// kind: nvme: the host's error recovery, when it ran (docs/storage.md).
std::string recovery_summary(const json& w) {
  if (!field(w, "reconnects").is_number()) return "";
  return fmt::format("  recovery: {}: {} command timeout(s), {} reconnect(s), {} I/O error(s)\n",
                     text(field(w, "name")), field(w, "timeouts").get<uint64_t>(),
                     field(w, "reconnects").get<uint64_t>(), field(w, "errors").get<uint64_t>());
}

// A flows workload's FCT slowdown, over all flows and by size.
std::string fct_summary(const json& w) {
  const json& fct = field(w, "fct");
  if (!fct.is_object()) return "";
  std::string out = fmt::format("{}: {} of {} flows completed; FCT slowdown {}\n", text(field(w, "name")),
                                text(field(fct, "completed")), text(field(fct, "started")),
                                slowdowns(field(fct, "slowdown")));
  std::vector<std::vector<std::string>> rows{{"flow size", "flows", "slowdown"}};
  std::string below = "0";
  for (const auto& b : field(fct, "buckets")) {
    const json& max = field(b, "max_size_bytes");
    const std::string upto = max.is_number() ? grouped(max.get<uint64_t>()) : "";
    rows.push_back({max.is_number() ? "<= " + upto + " B" : "> " + below + " B", text(field(b, "count")),
                    slowdowns(field(b, "slowdown"))});
    below = upto;
  }
  return out + layout(rows, "lrl", "    ");
}

// "SUCCESS 100, RETRY_EXC_ERR 2": ibv_wc_status names without their prefix, success first.
std::string completions(const json& j) {
  if (!j.is_object() || j.empty()) return "-";
  std::string ok, errors;
  for (const auto& [status, n] : j.items()) {
    std::string_view s = status;
    if (s.starts_with("IBV_WC_")) s.remove_prefix(7);
    std::string& out = s == "SUCCESS" ? ok : errors;
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", s, text(n));
  }
  return ok.empty() || errors.empty() ? ok + errors : ok + ", " + errors;
}

template <class F>
uint64_t sum_over(const json& arr, F&& value) {
  uint64_t total = 0;
  if (arr.is_array())
    for (const auto& e : arr) {
      const json& v = value(e);
      if (v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() > 0))
        total += v.get<uint64_t>();
    }
  return total;
}

uint64_t count(const json& j) {
  return j.is_number_unsigned() || (j.is_number_integer() && j.get<int64_t>() > 0) ? j.get<uint64_t>() : 0;
}

// The places drops_json names, in the order the summary prints them.
constexpr std::pair<const char*, const char*> kDropPlaces[] = {{"link", "links"},
                                                               {"switch_queue", "switch queues"},
                                                               {"no_route", "no route"},
                                                               {"ttl_expired", "TTL expired"},
                                                               {"nic_queue", "host NIC queues"},
                                                               {"nic_ring", "NIC ring"},
                                                               {"backlog", "backlog"},
                                                               {"socket", "socket buffers"},
                                                               {"no_socket", "no socket"}};

// "9,315 (NIC ring 9,000, backlog 300, socket buffers 15)"; "0".
std::string drops_text(const json& drops) {
  std::string places;
  for (const auto& [key, shown] : kDropPlaces)
    if (const uint64_t n = count(field(field(drops, "at"), key)); n > 0)
      places += fmt::format("{}{} {}", places.empty() ? "" : ", ", shown, grouped(n));
  const std::string total = grouped(count(field(drops, "total")));
  return places.empty() ? total : total + " (" + places + ")";
}

uint64_t total_cpu_busy_ps(const json& results) {
  return sum_over(field(results, "hosts"),
                  [](const json& h) -> const json& { return field(h, "cpu_busy_ps"); });
}

// What a run delivered: bytes and operations of all workloads over the span
// from the first start to the last end.
struct Delivered {
  double gbps = 0, mops = 0;
};
Delivered delivered(const json& results) {
  const WorkDone w = work_done(results);
  if (!(w.seconds > 0)) return {};
  return {w.units[0].amount * 8 / w.seconds, w.units[1].amount / w.seconds};
}

// compare.json's cost of a fabric: results.json's, and per unit of performance.
json compare_cost(const json& results) {
  const json& cost = field(results, "cost");
  if (!cost.is_object()) return nullptr;
  json c = cost;
  c.erase("bom");
  const Delivered d = delivered(results);
  const double total = field(cost, "total").is_number() ? field(cost, "total").get<double>() : 0;
  c["delivered_gbps"] = d.gbps;
  c["delivered_mops"] = d.mops;
  c["per_gbps"] = d.gbps > 0 ? json(total / d.gbps) : json(nullptr);
  c["per_mops"] = d.mops > 0 ? json(total / d.mops) : json(nullptr);
  c["bom"] = field(cost, "bom");
  return c;
}

// A run's cost per `unit` of work (results.json cost.per_unit), or null.
const json& per_unit(const json& cost, std::string_view unit) {
  for (const auto& u : field(cost, "per_unit"))
    if (field(u, "unit") == unit) return field(u, "total");
  return null_json();
}

// An amount of money: whole units from 100, cents below, 3 digits below 1.
std::string money(double x) {
  if (std::abs(x) >= 100) return fmt::format("{:.0f}", x);
  if (std::abs(x) >= 1) return fmt::format("{:.2f}", x);
  return fmt::format("{:.3g}", x);
}
std::string money(const json& j) { return j.is_number() ? money(j.get<double>()) : "-"; }

// The units of work cost is compared per (cost.per_unit), as the table names them.
constexpr std::pair<const char*, const char*> kWorkUnits[] = {{"GB", "GB moved"},
                                                              {"Mop", "million operations"}};

// "cheapest per GB moved: roce_v2 (0.012 USD), then ..." over the fabrics that ran.
std::string cost_winner(const std::vector<const json*>& ran, std::string_view unit, std::string_view what) {
  std::vector<std::pair<double, std::string>> v;
  for (const json* f : ran) {
    const json& x = per_unit(field(*f, "cost"), unit);
    if (x.is_number()) v.emplace_back(x.get<double>(), text(field(*f, "fabric")));
  }
  if (v.size() < 2) return "";
  std::stable_sort(v.begin(), v.end());
  const std::string cur = text(field(field(*ran.front(), "cost"), "currency"));
  std::string out = fmt::format("cheapest per {}: {} ({} {})", what, v[0].second, money(v[0].first), cur);
  for (size_t i = 1; i < v.size(); ++i)
    out += fmt::format(", then {} ({:+.0f}%)", v[i].second, (v[i].first / v[0].first - 1) * 100);
  return out + "\n";
}

size_t count_captures(const fs::path& dir) {
  std::error_code ec;
  size_t n = 0;
  for (fs::directory_iterator it(dir / "pcap", ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".pcap") ++n;
  return n;
}

}  // namespace

WorkDone work_done(const json& results) {
  double bytes = 0, ops = 0;
  int64_t start = INT64_MAX, end = 0;
  const json& ws = field(results, "workloads");
  if (ws.is_array())
    for (const auto& w : ws) {
      bytes += field(w, "bytes").is_number() ? field(w, "bytes").get<double>() : 0;
      ops += field(w, "ops").is_number() ? field(w, "ops").get<double>() : 0;
      if (field(w, "start_ps").is_number()) start = std::min(start, field(w, "start_ps").get<int64_t>());
      if (field(w, "end_ps").is_number()) end = std::max(end, field(w, "end_ps").get<int64_t>());
    }
  WorkDone d{{{"GB", "bytes moved", bytes / 1e9}, {"Mop", "operations", ops / 1e6}}, 0};
  if (end > start) d.seconds = static_cast<double>(end - start) / 1e12;
  return d;
}

json drops_json(const json& results) {
  if (!results.contains("ports") && results.contains("drops")) return results["drops"];
  return drops_json(results, records_of(field(results, "ports")), records_of(field(results, "hosts")));
}

json drops_json(const json& results, const RecordSource& ports, const RecordSource& hosts) {
  // Sorted, not hashed: a k = 64 fat tree's 65,536 names, at the end of a
  // run while the network is still held, take half the memory.
  std::vector<std::string> host_names;
  uint64_t ring = 0, backlog = 0, no_socket = 0, socket = 0;
  hosts([&](const json& h) {
    host_names.push_back(text(field(h, "name")));
    for (const char* stack : {"kernel_rx", "dpdk_rx"}) {
      const json& s = field(h, stack);
      ring += count(field(s, "ring_drops"));
      backlog += count(field(s, "backlog_drops"));
      no_socket += count(field(s, "discarded"));
    }
  });
  std::sort(host_names.begin(), host_names.end());
  uint64_t link = 0, switch_queue = 0, nic_queue = 0;
  ports([&](const json& p) {
    const uint64_t all = count(field(p, "drops")), on_link = std::min(all, count(field(p, "link_drops")));
    link += on_link;
    const bool host = std::binary_search(host_names.begin(), host_names.end(), text(field(p, "node")));
    (host ? nic_queue : switch_queue) += all - on_link;
  });
  for (const auto& w : field(results, "workloads"))
    socket += count(field(field(field(w, "datagrams"), "dropped_at"), "socket"));
  uint64_t no_route = 0, ttl_expired = 0;
  for (const auto& sw : field(results, "switches")) {
    no_route += count(field(sw, "no_route"));
    ttl_expired += count(field(sw, "ttl_expired"));
  }
  json at = {{"link", link},           {"switch_queue", switch_queue},
             {"no_route", no_route},   {"ttl_expired", ttl_expired},
             {"nic_queue", nic_queue}, {"nic_ring", ring},
             {"backlog", backlog},     {"socket", socket},
             {"no_socket", no_socket}};
  uint64_t total = 0;
  for (const auto& [place, n] : at.items()) total += n.get<uint64_t>();
  return {{"total", total}, {"at", at}};
}

std::string format_run_summary(const json& results, const fs::path& dir) {
  // The fabric, and the host stack where it has one (tcp: "kernel" or "dpdk"), as the report names it.
  std::vector<std::string> stacks;
  for (const auto& h : field(results, "hosts"))
    if (const json& s = field(h, "stack");
        s.is_string() && std::find(stacks.begin(), stacks.end(), s.get<std::string>()) == stacks.end())
      stacks.push_back(s.get<std::string>());
  std::string stack;
  for (const auto& s : stacks) stack += (stack.empty() ? "" : "/") + (s == "dpdk" ? std::string("DPDK") : s);
  std::string out =
      fmt::format("{} on {}{}, seed {}\n", text(field(results, "experiment")), text(field(results, "fabric")),
                  stack.empty() ? "" : " (" + stack + " stack)", text(field(results, "seed")));
  std::vector<std::vector<std::string>> rows{
      {"workload", "kind", "from -> to", "ops", "completions", "Gb/s", "p50 us", "p99 us", "data verified"}};
  const json& workloads = field(results, "workloads");
  std::vector<std::string> unchecked;  // why a row's data check is n/a
  if (workloads.is_array())
    for (const auto& w : workloads) {
      if (field(w, "kind") == "compute") {  // a process, not traffic: what it got done and when
        rows.push_back({text(field(w, "name")), "compute", "on " + text(field(w, "on")), "-",
                        duration(field(w, "work_done_ps")) + " of CPU, ends " + duration(field(w, "end_ps")),
                        "-", "-", "-", "n/a"});
        unchecked.push_back(text(field(w, "name")) + " moves no data (a compute process)");
        continue;
      }
      const json& lat = field(w, "latency_ns");
      if (field(w, "kind") == "udp") {  // datagrams: how many of those offered the program got, and when
        const json& d = field(w, "datagrams");
        rows.push_back({text(field(w, "name")), "udp", endpoints(w), text(field(w, "ops")),
                        "delivered " + text(field(d, "delivered")) + " of " + text(field(d, "offered")) +
                            " (" + text(field(d, "delivered_during_load")) + " during the load)",
                        number(field(w, "throughput_gbps"), 2), number(field(lat, "p50"), 3, 1e3),
                        number(field(lat, "p99"), 3, 1e3), "n/a"});
        unchecked.push_back(text(field(w, "name")) +
                            "'s datagrams are counted, not compared (UDP: a lost one is not resent)");
        continue;
      }
      rows.push_back({text(field(w, "name")), text(field(w, "kind")), endpoints(w), ops_done(w),
                      completions(field(w, "completions")), number(field(w, "throughput_gbps"), 2),
                      number(field(lat, "p50"), 3, 1e3), number(field(lat, "p99"), 3, 1e3), data_check(w)});
    }
  if (rows.size() > 1) out += layout(rows, "lllrlrrrl");  // none: programs only, summarised apart
  for (const auto& why : unchecked) out += "  n/a: " + why + "\n";
  if (workloads.is_array())
    for (const auto& w : workloads)
      if (const json& e = field(w, "error"); e.is_string())
        out += "  failed: " + text(field(w, "name")) + ": " + e.get<std::string>() + "\n";
  if (workloads.is_array())
    for (const auto& w : workloads) out += fct_summary(w) + recovery_summary(w);
  out += fmt::format("end time {}, drops {}\n", duration(field(results, "end_time_ps")),
                     drops_text(drops_json(results)));
  const size_t captures = count_captures(dir);
  out += fmt::format("output: {} (results.json", dir.string());
  if (captures > 0) out += fmt::format(", {} capture{} in pcap/", captures, captures == 1 ? "" : "s");
  out += ")\n";
  return out;
}

// Every host's CPU time in `category` (results.json hosts[].cores[].<category>_ps).
uint64_t total_cpu_ps(const json& results, const std::string& category) {
  uint64_t total = 0;
  const json& hosts = field(results, "hosts");
  if (hosts.is_array())
    for (const auto& h : hosts)
      total += sum_over(field(h, "cores"),
                        [&](const json& c) -> const json& { return field(c, category + "_ps"); });
  return total;
}

namespace {

// How each program (`programs:`) ended: its output's name (<host>-<index>), exit code or signal.
json compare_programs(const json& results) {
  json out = json::array();
  const json& ps = field(results, "programs");
  if (ps.is_array())
    for (const auto& p : ps) {
      const std::string file = text(field(p, "stdout"));  // programs/<host>-<index>.out
      out.push_back({{"name", file.size() > 13 ? file.substr(9, file.size() - 13) : file},
                     {"run", field(p, "run")},
                     {"exit_code", field(p, "exit_code")},
                     {"signal", field(p, "signal")}});
    }
  return out;
}

}  // namespace

json compare_entry(std::string_view fabric, const json& results, std::string_view dir) {
  json workloads = json::array();
  uint64_t bytes = 0;
  const json& ws = field(results, "workloads");
  if (ws.is_array())
    for (const auto& w : ws) {
      const json& lat = field(w, "latency_ns");
      workloads.push_back(
          {{"name", field(w, "name")},
           {"kind", field(w, "kind")},
           {"throughput_gbps", field(w, "throughput_gbps")},
           {"latency_ns",
            {{"p50", field(lat, "p50")}, {"p99", field(lat, "p99")}, {"p999", field(lat, "p999")}}},
           {"completions", field(w, "completions")},
           {"data_verified", field(w, "data_verified")}});
      if (field(w, "iops").is_number()) {  // kind: nvme: fio's numbers and the CPU each end spent per I/O
        json& e = workloads.back();
        const json& pct = field(field(w, "clat_ns"), "percentile");
        e["iops"] = field(w, "iops");
        e["clat_ns"] = {{"p50", field(pct, "50.000000")},
                        {"p99", field(pct, "99.000000")},
                        {"p999", field(pct, "99.900000")}};
        // CPU per I/O over the job's CPU window: working, and with polling (docs/storage.md).
        for (const char* end : {"initiator", "target"}) {
          const json& cpu = field(field(w, "cpu"), end);
          e[std::string(end) + "_cpu_work_ps_per_io"] = field(cpu, "work_ps_per_io");
          e[std::string(end) + "_cpu_ps_per_io"] = field(cpu, "total_ps_per_io");
        }
        e["target_polling_cores"] = field(field(field(w, "cpu"), "target"), "polling_cores");
      }
      if (field(w, "bytes").is_number() && field(w, "bytes").get<double>() > 0)
        bytes += field(w, "bytes").get<uint64_t>();
    }
  // Where the CPU went, all hosts together: what a GB moved costs in work
  // (everything but spinning and idle) and in spinning (poll_ps).
  const uint64_t busy = total_cpu_busy_ps(results), spin = total_cpu_ps(results, "poll");
  const json drops = drops_json(results);
  const double gb = static_cast<double>(bytes) / 1e9;
  auto per_gb = [&](uint64_t ps) {
    return gb > 0 ? json(static_cast<double>(ps) / 1e9 / gb) : json(nullptr);
  };
  json entry = {{"fabric", fabric},
                {"status", "ok"},
                {"dir", dir},
                {"end_time_ps", field(results, "end_time_ps")},
                {"drops", field(drops, "total")},
                {"drops_at", field(drops, "at")},
                {"cpu_busy_ps", busy},
                {"bytes", bytes},
                {"cpu_work_ms_per_gb", per_gb(busy - std::min(busy, spin))},
                {"cpu_spin_ms_per_gb", per_gb(spin)},
                {"workloads", std::move(workloads)},
                {"cost", compare_cost(results)}};
  if (field(results, "programs").is_array()) entry["programs"] = compare_programs(results);
  return entry;
}

json compare_skipped(std::string_view fabric, std::string_view reason) {
  return {{"fabric", fabric}, {"status", "skipped"}, {"reason", reason}};
}

json compare_failed(std::string_view fabric, std::string_view reason) {
  return {{"fabric", fabric}, {"status", "failed"}, {"reason", reason}};
}

std::string compare_csv(const json& compare) {
  json rows = json::array();
  for (json f : field(compare, "fabrics")) {
    if (f.contains("cost") && f["cost"].is_object()) f["cost"].erase("bom");
    rows.push_back(std::move(f));
  }
  return records_csv(rows);
}

namespace {

// compare's table: a column a fabric that ran, a row a figure.
class CompareTable {
 public:
  explicit CompareTable(std::vector<const json*> ran) : ran_(std::move(ran)), rows_{{""}} {
    for (const json* f : ran_) rows_[0].push_back(text(field(*f, "fabric")));
  }

  // Each workload's rows, by name, in the order they first appear.
  void workloads() {
    std::vector<std::string> names;
    for (const json* f : ran_)
      for (const auto& w : field(*f, "workloads"))
        if (std::find(names.begin(), names.end(), text(field(w, "name"))) == names.end())
          names.push_back(text(field(w, "name")));
    for (const auto& name : names) {
      if (field(workload(*ran_.front(), name), "iops").is_number())
        storage(name);
      else
        transfers(name);
    }
  }

  // CPU, drops (each place that dropped anything on some fabric) and the end time.
  void hosts_and_drops() {
    row("cpu busy us (all hosts)", [](const json& f) { return number(field(f, "cpu_busy_ps"), 3, 1e6); });
    row("cpu ms per GB, working", [](const json& f) { return number(field(f, "cpu_work_ms_per_gb"), 3); });
    row("cpu ms per GB, spinning", [](const json& f) { return number(field(f, "cpu_spin_ms_per_gb"), 3); });
    row("drops", [](const json& f) { return text(field(f, "drops")); });
    for (const auto& [key, shown] : kDropPlaces)
      if (std::any_of(ran_.begin(), ran_.end(),
                      [&](const json* f) { return count(field(field(*f, "drops_at"), key)) > 0; }))
        row(std::string("  at ") + shown,
            [&](const json& f) { return text(field(field(f, "drops_at"), key)); });
    row("end time us", [](const json& f) { return number(field(f, "end_time_ps"), 3, 1e6); });
  }

  // How each program ended on each fabric: its exit code, or the signal that ended it.
  void programs() {
    const json& first = field(*ran_.front(), "programs");
    for (size_t i = 0; first.is_array() && i < first.size(); ++i)
      row("program " + text(field(first[i], "name")) + " exit", [i](const json& f) {
        const json& p = field(f, "programs");
        if (!p.is_array() || i >= p.size()) return std::string("-");
        return field(p[i], "signal").is_string() ? text(field(p[i], "signal"))
                                                 : text(field(p[i], "exit_code"));
      });
  }

  // The cost rows, when the runs were priced (docs/cost.md).
  void costs() {
    const json& cost0 = field(*ran_.front(), "cost");
    if (!cost0.is_object()) return;
    const std::string cur = text(field(cost0, "currency"));
    auto cost = [](const json& f, std::string_view key) { return money(field(field(f, "cost"), key)); };
    row("capex " + cur, [&](const json& f) { return cost(f, "capex"); });
    row("power W", [&](const json& f) { return number(field(field(f, "cost"), "power_w"), 0); });
    row(fmt::format("opex {} ({:g} years)", cur, field(field(cost0, "assumptions"), "years").get<double>()),
        [&](const json& f) { return cost(f, "opex"); });
    row("cpu cores busy",
        [](const json& f) { return number(field(field(field(f, "cost"), "cpu"), "cores"), 3); });
    row("cpu cost " + cur,
        [](const json& f) { return money(field(field(field(f, "cost"), "cpu"), "cost")); });
    row("total cost " + cur, [&](const json& f) { return cost(f, "total"); });
    row("switches priced",
        [](const json& f) { return text(field(field(field(f, "cost"), "assumptions"), "switches")); });
    for (const auto& [unit, what] : kWorkUnits)
      row(fmt::format("{} per {}", cur, what),
          [&](const json& f) { return money(per_unit(field(f, "cost"), unit)); });
  }

  // The table, then which fabric costs least per unit of work.
  std::string formatted() const {
    std::string out = layout(rows_, "l");
    for (const auto& [unit, what] : kWorkUnits) out += cost_winner(ran_, unit, what);
    return out;
  }

 private:
  template <typename Cell>
  void row(std::string label, Cell&& cell) {
    rows_.push_back({std::move(label)});
    for (const json* f : ran_) rows_.back().push_back(cell(*f));
  }

  static const json& workload(const json& f, const std::string& name) {
    for (const auto& w : field(f, "workloads"))
      if (text(field(w, "name")) == name) return w;
    return null_json();
  }

  // kind: nvme (docs/storage.md): fio's numbers, CPU per I/O, money per million IOPS.
  void storage(const std::string& name) {
    row(name + " IOPS", [&](const json& f) { return number(field(workload(f, name), "iops"), 0); });
    for (const auto& [label, key] : {std::pair{"p50", "p50"}, {"p99", "p99"}, {"p99.9", "p999"}})
      row(name + " clat " + label + " us",
          [&](const json& f) { return number(field(field(workload(f, name), "clat_ns"), key), 3, 1e3); });
    for (const char* end : {"initiator", "target"})
      for (const auto& [label, key] :
           {std::pair{"(work)", "_cpu_work_ps_per_io"}, {"(incl. polling)", "_cpu_ps_per_io"}})
        row(fmt::format("{} {} cpu us/IO {}", name, end, label),
            [&](const json& f) { return number(field(workload(f, name), std::string(end) + key), 3, 1e6); });
    row(name + " target polling cores",
        [&](const json& f) { return number(field(workload(f, name), "target_polling_cores"), 0); });
    row(name + " cost per million IOPS", [&](const json& f) {
      const json& iops = field(workload(f, name), "iops");
      const json& total = field(field(f, "cost"), "total");
      if (!iops.is_number() || !total.is_number() || iops.get<double>() <= 0) return std::string("-");
      return money(total.get<double>() / (iops.get<double>() / 1e6));
    });
    row(name + " data verified",
        [&](const json& f) { return verified(field(workload(f, name), "data_verified")); });
  }

  // Any other kind: throughput and latency.
  void transfers(const std::string& name) {
    row(name + " throughput Gb/s",
        [&](const json& f) { return number(field(workload(f, name), "throughput_gbps"), 2); });
    for (const auto& [label, key] : {std::pair{"p50", "p50"}, {"p99", "p99"}, {"p99.9", "p999"}})
      row(name + " latency " + label + " us",
          [&](const json& f) { return number(field(field(workload(f, name), "latency_ns"), key), 3, 1e3); });
    row(name + " data verified",
        [&](const json& f) { return verified(field(workload(f, name), "data_verified")); });
  }

  std::vector<const json*> ran_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace

std::string format_compare_table(const json& compare) {
  std::vector<const json*> ran;
  std::string notes;
  const json& fabrics = field(compare, "fabrics");
  if (fabrics.is_array())
    for (const auto& f : fabrics) {
      const std::string status = text(field(f, "status"));
      if (status == "ok")
        ran.push_back(&f);
      else
        notes += fmt::format("{} {}: {}\n", status, text(field(f, "fabric")), text(field(f, "reason")));
    }
  std::string out =
      fmt::format("{}, seed {}\n", text(field(compare, "experiment")), text(field(compare, "seed")));
  if (!ran.empty()) {
    CompareTable table(std::move(ran));
    table.workloads();
    table.programs();
    table.hosts_and_drops();
    table.costs();
    out += table.formatted();
  }
  return out + notes;
}

}  // namespace rdmasim
