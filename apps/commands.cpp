#include "apps/commands.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <tuple>

#include "apps/output_dir.hpp"
#include "apps/run_extensions.hpp"
#include "cost/bom.hpp"
#include "experiment/memory_estimate.hpp"
#include "topologies/config.hpp"

namespace rdmasim::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The memory a run may need (experiment/memory_estimate.hpp) unless
// --memory-limit says otherwise: 80% of the machine's RAM (MemTotal in
// /proc/meminfo), or of the cgroup's memory.max when that is lower. The
// rest is the system's and other processes'. Nothing known: no limit.
std::pair<uint64_t, std::string> memory_limit(const Options& o) {
  if (!o.memory_limit.empty())
    return {parse_bytes(o.memory_limit)->count(), "--memory-limit " + o.memory_limit};
  uint64_t total = 0;
  std::string from = "MemTotal in /proc/meminfo";
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    uint64_t kib = 0;
    if (key == "MemTotal:" && meminfo >> kib) {
      total = kib * 1024;
      break;
    }
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");
  if (uint64_t max = 0; cgroup >> max && max > 0 && (total == 0 || max < total)) {
    total = max;
    from = "the cgroup's memory.max";
  }
  if (total == 0) return {UINT64_MAX, "no limit known"};
  return {total / 5 * 4, "80% of " + from + "; --memory-limit sets another"};
}

// A field of /proc/self/status in bytes ("VmSize:  28892 kB"); 0 when unknown.
uint64_t proc_status_bytes(std::string_view field) {
  std::ifstream status("/proc/self/status");
  for (std::string key; status >> key;) {
    uint64_t kib = 0;
    if (key == field && status >> kib) return kib * 1024;
    status.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

// ulimit -v (RLIMIT_AS: the address space) and ulimit -d (RLIMIT_DATA:
// heap and private mappings) bound what the run can allocate whatever the
// machine has, and past either it would die of bad_alloc mid-run: the room
// left under the tighter one, less what is mapped already (libraries,
// stacks, the experiment as read). Nothing set: nullopt.
std::optional<std::pair<uint64_t, std::string>> ulimit_room() {
  std::optional<std::pair<uint64_t, std::string>> room;
  for (const auto& [resource, flag, what, mapped] :
       {std::tuple{RLIMIT_AS, "-v", "address space (RLIMIT_AS)", "VmSize:"},
        std::tuple{RLIMIT_DATA, "-d", "data (RLIMIT_DATA)", "VmData:"}}) {
    rlimit r{};
    if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) continue;
    const uint64_t used = proc_status_bytes(mapped), limit = r.rlim_cur;
    const uint64_t left = limit > used ? limit - used : 0;
    if (room && room->first <= left) continue;
    room = {left,
            fmt::format("ulimit {} {}: the {} less the {:.1f} MiB in use already; raise it with ulimit {}",
                        flag, limit / 1024, what, static_cast<double>(used) / (1 << 20), flag)};
  }
  return room;
}

}  // namespace

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

// DIR: --out, or out/<experiment name><suffix> (`run`: none, as the command
// line's contract says; `compare`: -compare, `sweep`: -sweep), so that each
// command's default folder is its own and none refuses another's output.
fs::path output_dir(const Options& o, const ExperimentConfig& cfg, std::string_view suffix) {
  if (!o.out.empty()) return output_path(o.out);
  const fs::path name = cfg.name;
  if (cfg.name.empty() || name.has_parent_path() || name.has_root_path() || cfg.name == "." ||
      cfg.name == "..")
    throw InputError("the experiment name '" + cfg.name + "' cannot name a directory; give --out");
  return fs::path("out") / (cfg.name + std::string(suffix));
}

// A FIFO or a device would block or never end. There is no line to point at.
bool check_file(const fs::path& file, std::ostream& err) {
  std::error_code ec;
  const auto st = fs::status(file, ec);
  if (fs::is_regular_file(st)) return true;
  const char* what = fs::is_directory(st)        ? "is a directory, not an experiment file"
                     : fs::is_fifo(st)           ? "is a FIFO (named pipe), not an experiment file"
                     : fs::is_character_file(st) ? "is a character device, not an experiment file"
                     : fs::is_block_file(st)     ? "is a block device, not an experiment file"
                     : fs::is_socket(st)         ? "is a socket, not an experiment file"
                     : fs::exists(st)            ? "is not a regular file"
                     : ec && ec != std::errc::no_such_file_or_directory ? nullptr
                                                                        : "no such file";
  err << file.string() << ": " << (what ? what : ec.message().c_str()) << "\n";
  return false;
}

// --seed N is read as `seed:` is: one parser, one meaning for the key and the flag.
LoadResult load(const Options& o, std::optional<std::string> fabric) {
  std::vector<SetOverride> sets(o.sets.begin(), o.sets.end());
  for (const auto& v : o.point) sets.emplace_back(v, "--vary");
  LoadResult r = load_experiment(o.file, sets, std::move(fabric), o.seed);
  // --prices FILE, then the experiment's `cost:`, change the price catalogue (docs/cost.md).
  if (!o.prices.empty()) {
    CostLoad prices = load_cost_file(o.prices);
    r.errors.insert(r.errors.end(), prices.errors.begin(), prices.errors.end());
    if (r.config)
      r.config->cost.insert(r.config->cost.begin(), prices.settings.begin(), prices.settings.end());
  }
  if (r.config) experiment_prices(*r.config, r.errors);
  // Before anything is built: would the run fit in memory?
  if (r.config && r.errors.empty()) {
    auto [limit, from] = memory_limit(o);
    if (const auto room = ulimit_room(); room && room->first < limit) std::tie(limit, from) = *room;
    if (auto e = memory_error(*r.config, limit, from)) r.errors.push_back(std::move(*e));
  }
  if (!r.errors.empty()) r.config.reset();
  return r;
}

void print_errors(const std::vector<LoadError>& errors, std::ostream& err) {
  for (const auto& e : errors) err << e.format() << "\n";
}

void print_warnings(const std::vector<LoadError>& warnings, std::ostream& err) {
  for (const auto& w : warnings) err << "warning: " << w.format() << "\n";
}

LoadResult load(const Options& o) {
  return load(o, o.fabric.empty() ? std::nullopt : std::optional(o.fabric));
}

void warn_about_end(const json& results, std::ostream& err) {
  auto ms = [](const json& ps) { return fmt::format("{:.3f} ms", ps.get<int64_t>() / 1e9); };
  const json& capture = results.value("capture", json::object());
  if (capture.contains("full_at_ps"))
    err << "warning: captures end at " << ms(capture["full_at_ps"]) << ": they reached capture.max_bytes ("
        << capture["max_bytes"].get<uint64_t>() << " bytes)\n";
  const json& series = results.value("timeseries", json::object());
  if (series.contains("full_at_ps"))
    err << "warning: time series end at " << ms(series["full_at_ps"]) << ": they reached capture.max_bytes ("
        << series["max_bytes"].get<uint64_t>()
        << " bytes); a longer interval or fewer ports and qps keep them whole\n";
  const json& end = results.value("end", json::object());
  // Nothing left to happen, and a workload still waiting for what will not
  // come: lost datagrams of an unreliable service (UD, UC are never resent)
  // or a protocol that gave up without a word. The summary's "cut off"
  // alone would read like a stop.
  if (end.value("reason", "") == "idle")
    for (const json& w : results.value("workloads", json::array()))
      if (!w.value("finished", true))
        err << "warning: workload " << w.value("name", std::string("?")) << " did not finish: at "
            << ms(results["end_time_ps"])
            << " nothing was left to happen (no frame, timer or work pending) while it still waited for what "
               "will not come\n";
  if (end.value("reason", "") != "stalled") return;
  err << "warning: every workload had finished at " << ms(end["workloads_done_ps"])
      << ", but frames were still flowing; the run was stopped at " << ms(results["end_time_ps"]);
  if (end.contains("pfc_paused_ports"))
    err << ". PFC PAUSE frames were still flowing on " << end["pfc_paused_ports"].size() << " port(s) ("
        << end["pfc_paused_ports"][0].get<std::string>() << ", ...): a PFC deadlock";
  err << "\n";
}

// A workload's operations failed, or the workload could not run (its
// `error`), although the experiment did not ask for failures: it asks for
// them with bad_rkey, post_recvs: false (both per workload) or faults (for
// all).
std::string unexpected_failure(const ExperimentConfig& cfg, const json& results) {
  if (const std::string f = run_features_failure(results); !f.empty()) return f;
  if (!cfg.faults.empty()) return {};
  for (const json& w : results.value("workloads", json::array())) {
    const auto it = std::find_if(cfg.workloads.begin(), cfg.workloads.end(),
                                 [&](const WorkloadConfig& c) { return c.name == w.value("name", ""); });
    if (it == cfg.workloads.end() || it->bad_rkey || !it->post_recvs) continue;
    // A workload that could not run at all (an NVMe queue the CM could not connect) says why.
    if (const json& why = w.value("error", json()); why.is_string())
      return "workload " + it->name + ": " + why.get<std::string>();
    uint64_t failed = 0;
    std::string first;
    for (const char* key : {"completions", "receiver_errors"}) {
      const json counts = w.value(key, json::object());
      for (const auto& [status, n] : counts.items())
        if (status != "IBV_WC_SUCCESS" && n.get<uint64_t>() > 0) {
          failed += n.get<uint64_t>();
          if (first.empty()) first = status;
        }
    }
    if (failed)
      return "workload " + it->name + ": " + std::to_string(failed) + " operation(s) failed (" + first +
             ", ...)";
    // kind: nvme: I/O that completed with an error status (docs/storage.md).
    if (w.value("kind", "") == "nvme" && w.value("errors", uint64_t{0}) > 0)
      return "workload " + it->name + ": " + std::to_string(w["errors"].get<uint64_t>()) +
             " NVMe command(s) completed with an error status or failed";
  }
  return {};
}

}  // namespace rdmasim::cli
