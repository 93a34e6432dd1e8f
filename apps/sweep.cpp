#include "apps/sweep.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "apps/csv.hpp"
#include "apps/output_dir.hpp"
#include "apps/report.hpp"

extern char** environ;

namespace rdmasim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The values of --vary KEY=V1,V2,...: split at commas outside brackets,
// braces and quotes, so a value may be a YAML list or map
// (`link={bandwidth: 10Gbps, delay: 1us},{...}`); `\,` is a comma inside a
// value.
std::vector<std::string> split_values(std::string_view s) {
  std::vector<std::string> out(1);
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\\' && i + 1 < s.size() && s[i + 1] == ',') {
      out.back() += ',';
      ++i;
      continue;
    }
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.emplace_back();
      continue;
    }
    out.back() += c;
  }
  return out;
}

// The headline figures of a run, as (column, value); names follow results.json.
std::vector<std::pair<std::string, json>> headline(const json& r) {
  std::vector<std::pair<std::string, json>> v;
  auto get = [](const json& j, std::initializer_list<const char*> path) {
    const json* p = &j;
    for (const char* k : path) {
      if (!p->is_object() || !p->contains(k)) return json(nullptr);
      p = &(*p)[k];
    }
    return *p;
  };
  v.emplace_back("end_time_ps", get(r, {"end_time_ps"}));
  uint64_t busy = 0;
  for (const auto& h : r.value("hosts", json::array())) busy += h.value("cpu_busy_ps", uint64_t{0});
  v.emplace_back("drops", drops_json(r)["total"]);
  v.emplace_back("cpu_busy_ps", busy);
  v.emplace_back("cost.capex", get(r, {"cost", "capex"}));
  v.emplace_back("cost.power_w", get(r, {"cost", "power_w"}));
  v.emplace_back("cost.total", get(r, {"cost", "total"}));
  for (const auto& u : get(r, {"cost", "per_unit"}))
    v.emplace_back("cost.per_" + u.value("unit", "?"), u.value("total", json(nullptr)));
  for (const auto& w : r.value("workloads", json::array())) {
    const std::string n = w.value("name", "?") + ".";
    v.emplace_back(n + "ops", get(w, {"ops"}));
    v.emplace_back(n + "bytes", get(w, {"bytes"}));
    v.emplace_back(n + "throughput_gbps", get(w, {"throughput_gbps"}));
    v.emplace_back(n + "latency_ns.p50", get(w, {"latency_ns", "p50"}));
    v.emplace_back(n + "latency_ns.p99", get(w, {"latency_ns", "p99"}));
    v.emplace_back(n + "latency_ns.p999", get(w, {"latency_ns", "p999"}));
    v.emplace_back(n + "data_verified", get(w, {"data_verified"}));
    if (w.contains("datagrams")) {  // udp: the livelock curve's two axes
      v.emplace_back(n + "offered_pps", get(w, {"offered_pps"}));
      v.emplace_back(n + "delivered_pps", get(w, {"delivered_pps"}));
    }
    if (w.contains("fct")) {  // flows: the completion-time slowdowns a CC study plots
      v.emplace_back(n + "fct.completed", get(w, {"fct", "completed"}));
      for (const char* p : {"p50", "p95", "p99"})
        v.emplace_back(n + "fct.slowdown." + p, get(w, {"fct", "slowdown", p}));
    }
    if (w.contains("iops")) {  // nvme: fio's figures and each end's CPU an I/O
      v.emplace_back(n + "iops", get(w, {"iops"}));
      v.emplace_back(n + "bw_bytes", get(w, {"bw_bytes"}));
      for (auto [column, key] : {std::pair{"p50", "50.000000"}, {"p99", "99.000000"}, {"p999", "99.900000"}})
        v.emplace_back(n + "clat_ns." + column, get(w, {"clat_ns", "percentile", key}));
      v.emplace_back(n + "cpu.initiator.work_ps_per_io", get(w, {"cpu", "initiator", "work_ps_per_io"}));
      v.emplace_back(n + "cpu.target.work_ps_per_io", get(w, {"cpu", "target", "work_ps_per_io"}));
    }
  }
  return v;
}

// Student's t for a two-sided 95% interval with `df` degrees of freedom.
double t95(size_t df) {
  static constexpr double kT[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                  2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                  2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                  2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  return df < std::size(kT) ? kT[df] : 1.960;
}

std::string shell_quote(std::string_view s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

std::optional<SweepAxis> parse_vary(std::string_view text, std::string& why) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    why = "expected KEY=V1,V2,..., got '" + std::string(text) + "'";
    return std::nullopt;
  }
  SweepAxis a{std::string(text.substr(0, eq)), split_values(text.substr(eq + 1))};
  for (size_t i = 0; i < a.values.size(); ++i) {
    if (a.values[i].empty()) {
      why = "an empty value in '" + std::string(text) + "'";
      return std::nullopt;
    }
    // The same point twice gives the same output twice (a run is
    // deterministic): a repeat is what `seed` varies.
    if (std::find(a.values.begin(), a.values.begin() + static_cast<ptrdiff_t>(i), a.values[i]) !=
        a.values.begin() + static_cast<ptrdiff_t>(i)) {
      why = "'" + a.values[i] + "' is given twice in '" + std::string(text) +
            "'; each point runs once (vary seed for repeats)";
      return std::nullopt;
    }
  }
  return a;
}

std::string grid_error(const std::vector<SweepAxis>& axes) {
  size_t n = 1;
  for (size_t k = 0; k < axes.size(); ++k) {
    for (size_t j = 0; j < k; ++j)
      if (axes[j].key == axes[k].key) return axes[k].key + " is varied twice; give its values in one --vary";
    n *= axes[k].values.size();  // each factor is at least 1, and n stays at most kMaxSweepRuns
    if (n > kMaxSweepRuns) {
      std::string sizes;
      for (const auto& a : axes) sizes += (sizes.empty() ? "" : " x ") + std::to_string(a.values.size());
      return fmt::format("the grid has {} points, more than a sweep runs ({}); split it into sweeps", sizes,
                         kMaxSweepRuns);
    }
  }
  return {};
}

std::vector<SweepPoint> sweep_grid(const std::vector<SweepAxis>& axes) {
  size_t n = 1;
  for (const auto& a : axes) n *= a.values.size();
  const int width = std::max<int>(3, static_cast<int>(std::to_string(n - 1).size()));
  std::vector<SweepPoint> points(n);
  for (size_t i = 0; i < n; ++i) {
    SweepPoint& p = points[i];
    p.name = fmt::format("run-{:0{}}", i, width);
    size_t rest = i;
    p.values.resize(axes.size());
    for (size_t k = axes.size(); k-- > 0;) {
      p.values[k] = axes[k].values[rest % axes[k].values.size()];
      rest /= axes[k].values.size();
    }
    for (size_t k = 0; k < axes.size(); ++k) {
      if (axes[k].key == "fabric" || axes[k].key == "seed")
        p.args.insert(p.args.end(), {"--" + axes[k].key, p.values[k]});
      else
        p.args.insert(p.args.end(), {"--set", axes[k].key + "=" + p.values[k]});
    }
  }
  return points;
}

std::vector<int> run_processes(const fs::path& self, const std::vector<std::vector<std::string>>& args,
                               const std::vector<fs::path>& logs, unsigned jobs) {
  std::vector<int> codes(args.size(), -1);
  std::map<pid_t, size_t> running;
  auto reap_one = [&] {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) throw std::runtime_error("waitpid failed");
    auto it = running.find(pid);
    if (it == running.end()) return;
    child_ended(pid);
    codes[it->second] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    running.erase(it);
  };
  for (size_t i = 0; i < args.size(); ++i) {
    while (running.size() >= std::max(1u, jobs)) reap_one();
    std::vector<std::string> argv_s{self.string()};
    argv_s.insert(argv_s.end(), args[i].begin(), args[i].end());
    std::vector<char*> argv;
    for (auto& s : argv_s) argv.push_back(s.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, logs[i].c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    int rc = 0;
    const pid_t pid = spawn_child([&](const posix_spawnattr_t* attr) {
      pid_t p = 0;
      rc = ::posix_spawn(&p, argv[0], &fa, attr, argv.data(), environ);
      return rc == 0 ? p : pid_t{-1};
    });
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("cannot start " + self.string() + ": " + std::strerror(rc));
    running.emplace(pid, i);
  }
  while (!running.empty()) reap_one();
  return codes;
}

json sweep_table(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points,
                 const std::vector<json>& results, const std::vector<int>& codes) {
  std::vector<std::string> columns{"run", "exit_code"};
  for (const auto& a : axes) columns.push_back(a.key);
  const size_t fixed = columns.size();
  std::vector<std::map<std::string, json>> cells(points.size());
  for (size_t i = 0; i < points.size(); ++i)
    if (results[i].is_object())
      for (auto& [col, v] : headline(results[i])) {
        if (std::find(columns.begin() + static_cast<long>(fixed), columns.end(), col) == columns.end())
          columns.push_back(col);
        cells[i][col] = std::move(v);
      }
  json rows = json::array();
  for (size_t i = 0; i < points.size(); ++i) {
    json row = json::array({points[i].name, codes[i]});
    for (const auto& v : points[i].values) row.push_back(v);
    for (size_t c = fixed; c < columns.size(); ++c) {
      auto it = cells[i].find(columns[c]);
      row.push_back(it == cells[i].end() ? json(nullptr) : it->second);
    }
    rows.push_back(std::move(row));
  }
  json ax = json::array();
  for (const auto& a : axes) ax.push_back({{"key", a.key}, {"values", a.values}});
  return {{"axes", std::move(ax)}, {"columns", columns}, {"rows", std::move(rows)}};
}

namespace {

// Runs of one configuration: the other axes' values, and its rows.
struct SeedGroup {
  json key;
  std::vector<const json*> members;
};

// The successful runs grouped by every axis but `seed`, in first-seen order.
std::vector<SeedGroup> seed_groups(const json& table, size_t axes, size_t seed) {
  std::vector<SeedGroup> groups;
  for (const auto& row : table["rows"]) {
    if (row[1] != 0) continue;  // failed runs have no figures
    json key = json::array();
    for (size_t k = 0; k < axes; ++k)
      if (k != seed) key.push_back(row[2 + k]);
    auto g = std::find_if(groups.begin(), groups.end(), [&](const SeedGroup& x) { return x.key == key; });
    if (g == groups.end()) g = groups.insert(groups.end(), SeedGroup{key, {}});
    g->members.push_back(&row);
  }
  return groups;
}

// Whether repeating over seed showed anything: false when every figure of
// every configuration run more than once is the same in all its runs (or
// none ran twice).
bool seed_changed_something(const std::vector<SeedGroup>& groups, size_t first, size_t columns) {
  bool repeated = false;
  for (const auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    repeated = true;
    for (const json* r : members)
      for (size_t c = first; c < columns; ++c)
        if ((*r)[c] != (*members[0])[c]) return true;
  }
  return !repeated;
}

// A configuration's row: its key, n, then each figure's mean and 95% interval.
json seed_row(const SeedGroup& g, size_t first, size_t columns) {
  json row = g.key;
  row.push_back(g.members.size());
  for (size_t c = first; c < columns; ++c) {
    std::vector<double> xs;
    for (const json* r : g.members)
      if ((*r)[c].is_number()) xs.push_back((*r)[c].get<double>());
    if (xs.size() != g.members.size() || xs.empty()) {
      row.insert(row.end(), {nullptr, nullptr});
      continue;
    }
    double mean = 0, var = 0;
    for (double x : xs) mean += x;
    mean /= static_cast<double>(xs.size());
    for (double x : xs) var += (x - mean) * (x - mean);
    const size_t n = xs.size();
    const double ci = n > 1 ? t95(n - 1) * std::sqrt(var / static_cast<double>(n - 1)) / std::sqrt(n) : 0.0;
    row.insert(row.end(), {mean, ci});
  }
  return row;
}

}  // namespace

json seed_summary(const json& table) {
  const auto& columns = table["columns"];
  const size_t axes = table["axes"].size();
  size_t seed = SIZE_MAX;
  for (size_t k = 0; k < axes; ++k)
    if (table["axes"][k]["key"] == "seed") seed = k;
  if (seed == SIZE_MAX) return nullptr;
  const std::vector<SeedGroup> groups = seed_groups(table, axes, seed);
  json cols = json::array();
  for (size_t k = 0; k < axes; ++k)
    if (k != seed) cols.push_back(columns[2 + k]);
  cols.push_back("n");
  const size_t first = 2 + axes;
  for (size_t c = first; c < columns.size(); ++c) {
    cols.push_back(columns[c].get<std::string>() + ".mean");
    cols.push_back(columns[c].get<std::string>() + ".ci95");
  }
  json rows = json::array();
  for (const auto& g : groups) rows.push_back(seed_row(g, first, columns.size()));
  const bool nothing = !seed_changed_something(groups, first, columns.size());
  json summary = {{"columns", std::move(cols)}, {"rows", std::move(rows)}};
  summary["seed_changes_nothing"] = nothing;
  if (nothing)
    summary["note"] =
        "seed changes nothing in this experiment: its runs over seed gave identical figures (every 95% "
        "interval is 0); nothing the seed drives (loss, ECN marking, flow arrivals and sizes, NVMe offsets "
        "and SSD times: docs/yaml.md, seed) changed a figure";
  return summary;
}

std::string table_csv(const json& table) {
  std::string out;
  auto line = [&](const json& cells) {
    for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + csv_field(cells[i]);
    out += "\n";
  };
  line(table["columns"]);
  for (const auto& r : table["rows"]) line(r);
  return out;
}

std::string slurm_script(const fs::path& self, const fs::path& experiment, const fs::path& dir,
                         const std::vector<SweepPoint>& points, const std::vector<std::string>& common_args) {
  std::string s = fmt::format(
      "#!/bin/bash\n"
      "# rdmasim sweep of {}: {} runs, one array task each. Submit with\n"
      "#   sbatch {}\n"
      "# then make the table with the same sweep command and --collect.\n"
      "#SBATCH --job-name=rdmasim-sweep\n"
      "#SBATCH --array=0-{}\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --cpus-per-task=1\n"
      "#SBATCH --output={}/runs/slurm-%a.log\n"
      "set -euo pipefail\n"
      "RUNS=(\n",
      experiment.string(), points.size(), (dir / "sweep.slurm").string(), points.size() - 1, dir.string());
  for (const auto& p : points) {  // each element: the run's name and options, quoted for eval
    std::string words = shell_quote(p.name);
    for (const auto& a : p.args) words += " " + shell_quote(a);
    s += "  " + shell_quote(words) + "\n";
  }
  std::string common;
  for (const auto& a : common_args) common += " " + shell_quote(a);
  s += ")\n"
       "eval \"set -- ${RUNS[$SLURM_ARRAY_TASK_ID]}\"\n"
       "name=$1; shift\n";
  s += fmt::format("exec >{}/runs/\"$name\".log 2>&1\n", shell_quote(dir.string()));
  s += fmt::format("exec {} run {} --out {}/runs/\"$name\" \"$@\"{}\n", shell_quote(self.string()),
                   shell_quote(experiment.string()), shell_quote(dir.string()), common);
  return s;
}

}  // namespace rdmasim
