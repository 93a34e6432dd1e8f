#include "apps/cli.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/csv.hpp"
#include "apps/output_dir.hpp"
#include "apps/report.hpp"
#include "apps/report_html.hpp"
#include "apps/runner.hpp"
#include "apps/sweep.hpp"
#include "cost/bom.hpp"
#include "experiment/loader.hpp"
#include "experiment/memory_estimate.hpp"
#include "fabrics/registry.hpp"
#include "parallel/cluster.hpp"
#include "programs/programs_run.hpp"
#include "topologies/config.hpp"
#include "topologies/yaml_reader.hpp"

namespace rdmasim {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Options {
  fs::path file;
  std::string out;
  std::string fabric;
  std::optional<std::string> seed;  // --seed's text: the loader reads it as it reads `seed:`
  std::vector<std::string> sets;
  std::vector<std::string> fabrics;
  std::string prices;        // --prices FILE
  std::string memory_limit;  // --memory-limit SIZE; empty: default_memory_limit()
  bool quiet = false;        // run: no progress line
  bool progress = false;     // run: the progress line from the start, terminal or not
  std::string partition;     // run --partition: how to split over mpirun's ranks
  // sweep
  std::vector<std::string> vary;
  unsigned jobs = 1;
  std::string emit;
  bool collect = false;
  // report
  std::vector<std::string> dirs;
  bool report = false;  // compare --report, sweep --report
};

std::vector<std::string> fabric_list() {
  const auto names = fabric_names();
  return {names.begin(), names.end()};
}

// What compare runs unless told: the RDMA fabrics (tcp, the kernel
// baseline, is asked for by name: --fabrics ib,roce_v2,iwarp,tcp).
std::vector<std::string> default_compare_fabrics() {
  std::vector<std::string> v;
  for (const Fabric* f : fabrics())
    if (f->rdma()) v.emplace_back(f->name());
  return v;
}

// compare's columns: the fabrics, then the variants they offer (tcp's
// `dpdk`, between the kernel and RDMA).
std::vector<std::string> compare_columns() {
  auto v = fabric_list();
  for (const Fabric* f : fabrics())
    for (const Fabric::Variant& x : f->variants()) v.emplace_back(x.name);
  return v;
}

// "; dpdk: tcp with host.stack=dpdk" for --fabrics' help.
std::string variants_help() {
  std::string s;
  for (const Fabric* f : fabrics())
    for (const Fabric::Variant& x : f->variants())
      s += fmt::format("; {}: {} with {}", x.name, f->name(), x.set);
  return s;
}

// The fabric a compare column runs and the override that makes it, if any.
std::pair<std::string, std::string> compare_column(const std::string& column) {
  for (const Fabric* f : fabrics())
    for (const Fabric::Variant& x : f->variants())
      if (x.name == column) return {std::string(f->name()), std::string(x.set)};
  return {column, {}};
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

// A check that an option's value is one of `names` ("fabric"s): else it
// names them all and the one meant (suggestion(): the default fabric for
// "roce").
CLI::Validator one_of(std::vector<std::string> names, const std::string& what) {
  return CLI::Validator(
      [names, what](std::string& v) -> std::string {
        if (std::find(names.begin(), names.end(), v) != names.end()) return {};
        return "unknown " + what + " '" + v + "'" + suggestion(v, names, ExperimentConfig{}.fabric) +
               "; the " + what + "s are " + join(names, ", ");
      },
      "{" + join(names, ",") + "}");
}

// DIR: --out, or out/<experiment name><suffix> (`run`: none, as the command
// line's contract says; `compare`: -compare, `sweep`: -sweep), so that each
// command's default folder is its own and none refuses another's output.
fs::path output_dir(const Options& o, const ExperimentConfig& cfg, std::string_view suffix = "") {
  if (!o.out.empty()) return output_path(o.out);
  const fs::path name = cfg.name;
  if (cfg.name.empty() || name.has_parent_path() || name.has_root_path() || cfg.name == "." ||
      cfg.name == "..")
    throw InputError("the experiment name '" + cfg.name + "' cannot name a directory; give --out");
  return fs::path("out") / (cfg.name + std::string(suffix));
}

// The experiment file must be a regular file before the loader sees it: a
// FIFO or a device would block or never end. There is no line to point at.
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

// --seed N is --set seed=N: one parser, one meaning for `seed:` and the flag.
LoadResult load(const Options& o, std::optional<std::string> fabric) {
  std::vector<std::string> sets = o.sets;
  if (o.seed) sets.push_back("seed=" + *o.seed);
  LoadResult r = load_experiment(o.file, sets, std::move(fabric));
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
    const auto [limit, from] = memory_limit(o);
    if (auto e = memory_error(*r.config, limit, from)) r.errors.push_back(std::move(*e));
  }
  if (!r.errors.empty()) r.config.reset();
  return r;
}

// A `stop` under a microsecond is almost always a number written without
// its unit: a bare number is picoseconds (docs/yaml.md, "Units").
void warn_about_stop(const ExperimentConfig& cfg, std::ostream& err) {
  if (cfg.stop && *cfg.stop < Time::us(1))
    err << "warning: stop is " << cfg.stop->count() << " ps (" << to_string(*cfg.stop)
        << "); a number without a unit is picoseconds: write the unit, such as " << cfg.stop->count()
        << "us\n";
}

void print_errors(const std::vector<LoadError>& errors, std::ostream& err) {
  for (const auto& e : errors) err << e.format() << "\n";
}

void print_warnings(const std::vector<LoadError>& warnings, std::ostream& err) {
  for (const auto& w : warnings) err << "warning: " << w.format() << "\n";
}

struct Outcome {
  ExitCode code = kExitOk;
  json results;         // when kExitOk
  std::string message;  // otherwise: what to print
};

// Calls `work`, turning what it throws into an exit code and a message
// (cli.hpp): the exception's type says whose fault it is.
template <typename Work>
Outcome guarded(Work&& work) {
  try {
    return {kExitOk, work(), {}};
  } catch (const InputError& e) {
    return {kExitBadInput, {}, e.what()};
  } catch (const OutputError& e) {
    return {kExitOutput, {}, std::string("error: ") + e.what()};
  } catch (const fs::filesystem_error& e) {
    return {kExitOutput, {}, "error: " + e.path1().string() + ": " + e.code().message()};
  } catch (const std::bad_alloc&) {
    return {kExitInternal, {}, "internal error: out of memory"};
  } catch (const std::exception& e) {
    return {kExitInternal, {}, std::string("internal error: ") + e.what()};
  } catch (...) {
    return {kExitInternal, {}, "internal error: unknown exception"};
  }
}

// What a user should know about how a run ended (results.json "end" and "capture").
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
  if (end.value("reason", "") != "stalled") return;
  err << "warning: every workload had finished at " << ms(end["workloads_done_ps"])
      << ", but frames were still flowing; the run was stopped at " << ms(results["end_time_ps"]);
  if (end.contains("pfc_paused_ports"))
    err << ". PFC PAUSE frames were still flowing on " << end["pfc_paused_ports"].size() << " port(s) ("
        << end["pfc_paused_ports"][0].get<std::string>() << ", ...): a PFC deadlock";
  err << "\n";
}

// The first workload whose operations failed although the experiment did
// not ask for failures, described; empty when there is none. An experiment
// asks for them with bad_rkey, post_recvs: false (both per workload) or
// faults (for all).
std::string unexpected_failure(const ExperimentConfig& cfg, const json& results) {
  if (const std::string f = program_failure(results); !f.empty()) return f;
  if (!cfg.faults.empty()) return {};
  for (const json& w : results.value("workloads", json::array())) {
    const auto it = std::find_if(cfg.workloads.begin(), cfg.workloads.end(),
                                 [&](const WorkloadConfig& c) { return c.name == w.value("name", ""); });
    if (it == cfg.workloads.end() || it->bad_rkey || !it->post_recvs) continue;
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
  }
  return {};
}

// Runs `cfg` and writes its results.json and captures into `dir`, which exists.
// Split over ranks, every rank calls it; rank 0 writes the files and gets
// the results (the others null), and DIR/parallel.json says what the split cost.
json run_to(const ExperimentConfig& cfg, const fs::path& dir, const ProgressOptions& progress = {},
            std::optional<PartitionMode> split = std::nullopt) {
  json stats;
  json results = run_experiment(cfg, dir, progress, split, &stats);
  if (results.is_null()) return results;
  if (!stats.is_null()) write_file_atomic(dir / "parallel.json", stats.dump(2) + "\n");
  write_file_atomic(dir / "results.json", results.dump(2) + "\n");
  for (const char* table : {"workloads", "ports", "hosts"})  // CSV beside it, same names
    write_file_atomic(dir / (std::string(table) + ".csv"), records_csv(results[table]));
  if (results.contains("cost")) write_file_atomic(dir / "bom.csv", records_csv(results["cost"]["bom"]));
  return results;
}

int do_validate(const Options& o, std::ostream& out, std::ostream& err) {
  if (!check_file(o.file, err)) return kExitBadInput;
  const LoadResult r = load(o, o.fabric.empty() ? std::nullopt : std::optional(o.fabric));
  if (!r.errors.empty() || !r.config) {
    print_errors(r.errors, err);
    return kExitBadInput;
  }
  print_warnings(r.warnings, err);
  out << "OK: " << o.file.string() << "\n";
  return kExitOk;
}

// `rdmasim run` under mpirun: every rank loads the file and runs its part;
// rank 0 stages the output directory (the others write their captures
// into it), speaks, and commits it only when every rank succeeded.
int do_run_ranks(const Options& o, const LoadResult& r, std::ostream& out, std::ostream& err) {
  Cluster& cluster = Cluster::get();
  const bool root = cluster.rank() == 0;
  std::ostringstream quiet;
  std::ostream& say = root ? err : quiet;
  std::optional<PartitionMode> mode;
  try {
    if (!o.partition.empty()) mode = partition_mode(o.partition);
  } catch (const InputError& e) {
    say << e.what() << "\n";
    return kExitBadInput;
  }
  if (!r.errors.empty() || !r.config) {
    print_errors(r.errors, say);
    return kExitBadInput;
  }
  if (!mode) mode = default_partition(*r.config);
  print_warnings(r.warnings, say);
  warn_about_stop(*r.config, say);
  // Rank 0 makes the staged directory and tells the others where it is ("!" and why, when it cannot).
  std::unique_ptr<StagedDir> stage;
  std::string where;
  int code = kExitOk;
  if (root) {
    const Outcome made = guarded([&] {
      stage = std::make_unique<StagedDir>(output_dir(o, *r.config), OutputKind::run);
      return json();
    });
    where = made.code == kExitOk ? stage->temp().string() : "!" + std::to_string(made.code) + made.message;
  }
  where = cluster.broadcast(where);
  if (where.starts_with("!")) {
    say << where.substr(2) << "\n";
    return where[1] - '0';
  }
  const Outcome res = guarded([&] {
    json results = run_to(*r.config, where, {}, mode);
    if (stage) stage->commit();
    return results;
  });
  code = res.code;
  if (res.code != kExitOk) {
    say << res.message << "\n";
  } else if (root) {
    out << format_run_summary(res.results, stage->dir()) << format_programs_summary(res.results);
    warn_about_end(res.results, err);
    if (const std::string f = unexpected_failure(*r.config, res.results); !f.empty()) {
      err << "error: " << f << "; the experiment did not ask for failures (exit " << kExitOpsFailed << ")\n";
      code = kExitOpsFailed;
    }
  }
  // Every rank exits as rank 0 does.
  return std::stoi(cluster.broadcast(std::to_string(code)));
}

int do_run(const Options& o, std::ostream& out, std::ostream& err) {
  if (!Cluster::built_with_mpi() && (Cluster::requested_ranks() > 1 || !o.partition.empty())) {
    err << "rdmasim: this build has no MPI, so it cannot split a run over ranks"
        << (Cluster::requested_ranks() > 1
                ? " (started by mpirun with " + std::to_string(Cluster::requested_ranks()) + ")"
                : "")
        << "; install libopenmpi-dev (scripts/setup.sh) and rebuild (docs/parallel.md)\n";
    return kExitBadInput;
  }
  if (Cluster::get().parallel()) {
    if (!check_file(o.file, err)) return kExitBadInput;
    return do_run_ranks(o, load(o, o.fabric.empty() ? std::nullopt : std::optional(o.fabric)), out, err);
  }
  if (!check_file(o.file, err)) return kExitBadInput;
  const LoadResult r = load(o, o.fabric.empty() ? std::nullopt : std::optional(o.fabric));
  if (!r.errors.empty() || !r.config) {
    print_errors(r.errors, err);
    return kExitBadInput;
  }
  print_warnings(r.warnings, err);
  warn_about_stop(*r.config, err);
  fs::path dir;
  try {
    dir = output_dir(o, *r.config);
  } catch (const InputError& e) {
    err << e.what() << "\n";
    return kExitBadInput;
  }
  // A progress line on a terminal after a second, or from the start with --progress.
  ProgressOptions progress;
  if (!o.quiet && (o.progress || isatty(STDERR_FILENO))) progress.out = &err;
  if (o.progress) progress.first_after = {};
  // Through a staged directory: `dir` is replaced only by a complete output.
  const Outcome res = guarded([&] {
    StagedDir stage(dir, OutputKind::run);
    json results = run_to(*r.config, stage.temp(), progress);
    stage.commit();
    return results;
  });
  if (res.code != kExitOk) {
    err << res.message << "\n";
    return res.code;
  }
  out << format_run_summary(res.results, dir) << format_programs_summary(res.results);
  warn_about_end(res.results, err);
  if (const std::string f = unexpected_failure(*r.config, res.results); !f.empty()) {
    err << "error: " << f << "; the experiment did not ask for failures (exit " << kExitOpsFailed << ")\n";
    return kExitOpsFailed;
  }
  return kExitOk;
}

int do_compare(const Options& o, std::ostream& out, std::ostream& err) {
  if (!check_file(o.file, err)) return kExitBadInput;
  std::vector<std::string> fabrics;
  for (const auto& f : o.fabrics.empty() ? default_compare_fabrics() : o.fabrics)
    if (std::find(fabrics.begin(), fabrics.end(), f) == fabrics.end()) fabrics.push_back(f);

  // A fabric the experiment cannot run on is skipped, with the loader's reason.
  struct Trial {
    std::string fabric;
    LoadResult load;
  };
  std::vector<Trial> trials;
  for (const auto& f : fabrics) {
    const auto [fabric, set] = compare_column(f);
    Options with = o;
    if (!set.empty()) with.sets.push_back(set);
    trials.push_back({f, load(with, fabric)});
  }
  auto loaded = [](const Trial& t) { return t.load.config && t.load.errors.empty(); };
  const auto it = std::find_if(trials.begin(), trials.end(), loaded);
  const ExperimentConfig* first = it == trials.end() ? nullptr : &*it->load.config;
  if (!first) {  // on no fabric at all: the file itself is at fault
    std::vector<std::string> seen;
    for (const auto& t : trials)
      for (const auto& e : t.load.errors)
        if (std::find(seen.begin(), seen.end(), e.format()) == seen.end()) seen.push_back(e.format());
    for (const auto& s : seen) err << s << "\n";
    return kExitBadInput;
  }
  print_warnings(it->load.warnings, err);

  warn_about_stop(*first, err);
  fs::path dir;
  try {
    dir = output_dir(o, *first, "-compare");
  } catch (const InputError& e) {
    err << e.what() << "\n";
    return kExitBadInput;
  }

  // The whole set (a directory a fabric, compare.json) is staged and
  // replaces `dir` at once: never fabrics of two runs side by side.
  std::optional<StagedDir> stage;
  if (const Outcome o = guarded([&] {
        stage.emplace(dir, OutputKind::compare);
        return json();
      });
      o.code != kExitOk) {
    err << o.message << "\n";
    return o.code;
  }

  json entries = json::array();
  bool any_ok = false, any_internal = false;
  std::vector<std::string> ops_failed;  // fabrics whose operations failed unexpectedly
  for (const auto& t : trials) {
    if (!loaded(t)) {
      std::vector<std::string> why;
      for (const auto& e : t.load.errors) why.push_back(e.format());
      entries.push_back(compare_skipped(t.fabric, join(why, "; ")));
      continue;
    }
    out << "running on " << t.fabric << " ..." << std::endl;
    const fs::path fabric_dir = stage->temp() / t.fabric;
    const Outcome res = guarded([&] {
      fs::create_directory(fabric_dir);
      return run_to(*t.load.config, fabric_dir);
    });
    if (res.code == kExitOk) {
      if (const std::string f = unexpected_failure(*t.load.config, res.results); !f.empty())
        ops_failed.push_back(t.fabric + ": " + f);
      entries.push_back(compare_entry(t.fabric, res.results, t.fabric));
      any_ok = true;
      continue;
    }
    std::error_code ec;
    fs::remove_all(fabric_dir, ec);  // only complete runs are kept
    if (res.code == kExitOutput) {   // the other fabrics would not fare better
      err << res.message << "\n";
      return kExitOutput;
    }
    if (res.code == kExitBadInput) {
      entries.push_back(compare_skipped(t.fabric, res.message));
    } else {
      entries.push_back(compare_failed(t.fabric, res.message));
      any_internal = true;
    }
  }

  const json compare = {
      {"experiment", first->name}, {"file", o.file.string()}, {"seed", first->seed}, {"fabrics", entries}};
  if (!any_ok) {  // nothing to compare: report why, write nothing
    for (const auto& e : entries)
      err << e["fabric"].get<std::string>() << ": " << e["reason"].get<std::string>() << "\n";
    return any_internal ? kExitInternal : kExitBadInput;
  }
  int report_code = kExitOk;
  const bool report = o.report;
  if (const Outcome o = guarded([&] {
        write_file_atomic(stage->temp() / "compare.json", compare.dump(2) + "\n");
        write_file_atomic(stage->temp() / "compare.csv", compare_csv(compare));
        if (report)  // staged with the rest; a failed report keeps the comparison
          report_code = write_html_report({stage->temp()}, stage->temp() / "report.html", dir / "report.html",
                                          out, err);
        stage->commit();
        return json();
      });
      o.code != kExitOk) {
    err << o.message << "\n";
    return o.code;
  }
  out << format_compare_table(compare);
  out << "output: " << dir.string() << " (compare.json, one directory a fabric)\n";
  if (report_code != kExitOk) return report_code;
  for (const auto& e : entries)
    if (e["status"] == "failed")
      err << e["fabric"].get<std::string>() << ": " << e["reason"].get<std::string>() << "\n";
  if (any_internal) return kExitInternal;
  for (const auto& f : ops_failed) err << "error: " << f << "\n";
  return ops_failed.empty() ? kExitOk : kExitOpsFailed;
}

// The options of `rdmasim run` every point of a sweep shares.
std::vector<std::string> common_run_args(const Options& o, bool seed_varied, bool fabric_varied) {
  std::vector<std::string> a;
  for (const auto& s : o.sets) a.insert(a.end(), {"--set", s});
  if (o.seed && !seed_varied) a.insert(a.end(), {"--seed", *o.seed});
  if (!o.fabric.empty() && !fabric_varied) a.insert(a.end(), {"--fabric", o.fabric});
  if (!o.prices.empty()) a.insert(a.end(), {"--prices", fs::absolute(o.prices).string()});
  if (!o.memory_limit.empty()) a.insert(a.end(), {"--memory-limit", o.memory_limit});
  return a;
}

// The options of one point, as load() takes them.
Options point_options(const Options& o, const std::vector<SweepAxis>& axes, const SweepPoint& p) {
  Options po = o;
  for (size_t k = 0; k < axes.size(); ++k) {
    if (axes[k].key == "fabric") {
      po.fabric = p.values[k];
    } else if (axes[k].key == "seed") {
      po.seed = p.values[k];  // the loader checks it, located, as it checks --seed
    } else {
      po.sets.push_back(axes[k].key + "=" + p.values[k]);
    }
  }
  return po;
}

json read_results(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return nullptr;
  try {
    return json::parse(in);
  } catch (const json::exception&) {
    return nullptr;
  }
}

// DIR/sweep.json, sweep.csv and, over seeds, sweep_summary.csv; returns the summary over seeds.
json write_sweep_tables(const fs::path& dir, const Options& o, const std::string& name,
                        const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points,
                        const std::vector<int>& codes) {
  std::vector<json> results;
  for (const auto& p : points) results.push_back(read_results(dir / "runs" / p.name / "results.json"));
  json table = sweep_table(axes, points, results, codes);
  const json summary = seed_summary(table);
  write_file_atomic(dir / "sweep.csv", table_csv(table));
  if (!summary.is_null()) write_file_atomic(dir / "sweep_summary.csv", table_csv(summary));
  table["experiment"] = name;
  table["file"] = o.file.string();
  table["summary"] = summary;
  write_file_atomic(dir / "sweep.json", table.dump(2) + "\n");
  return summary;
}

int do_sweep(const Options& o, std::ostream& out, std::ostream& err) {
  if (!check_file(o.file, err)) return kExitBadInput;
  std::vector<SweepAxis> axes;
  for (const auto& v : o.vary) {
    std::string why;
    auto a = parse_vary(v, why);
    if (!a) {
      err << "rdmasim sweep: --vary " << why << "\n";
      return kExitBadInput;
    }
    axes.push_back(std::move(*a));
  }
  if (const std::string why = grid_error(axes); !why.empty()) {
    err << "rdmasim sweep: --vary " << why << "\n";
    return kExitBadInput;
  }
  const std::vector<SweepPoint> points = sweep_grid(axes);
  bool seed_varied = false, fabric_varied = false;
  for (const auto& a : axes) {
    seed_varied = seed_varied || a.key == "seed";
    fabric_varied = fabric_varied || a.key == "fabric";
  }

  // Every point must load before any runs.
  std::vector<std::string> errors;
  std::optional<ExperimentConfig> first;
  std::vector<LoadError> warnings;  // the first point's
  try {
    for (const auto& p : points) {
      const Options po = point_options(o, axes, p);
      LoadResult r = load(po, po.fabric.empty() ? std::nullopt : std::optional(po.fabric));
      for (const auto& e : r.errors)
        if (std::find(errors.begin(), errors.end(), e.format()) == errors.end()) errors.push_back(e.format());
      if (r.config && !first) first = r.config, warnings = std::move(r.warnings);
    }
  } catch (const InputError& e) {
    errors.push_back(e.what());
  }
  if (!errors.empty() || !first) {
    for (const auto& e : errors) err << e << "\n";
    return kExitBadInput;
  }
  print_warnings(warnings, err);
  warn_about_stop(*first, err);  // each run says it too, but into its log
  fs::path dir;
  try {
    dir = output_dir(o, *first, "-sweep");
  } catch (const InputError& e) {
    err << e.what() << "\n";
    return kExitBadInput;
  }
  const fs::path self = fs::read_symlink("/proc/self/exe");
  const std::vector<std::string> common = common_run_args(o, seed_varied, fabric_varied);

  std::vector<int> codes(points.size(), 0);
  bool emitted = false;
  json summary;
  int report_code = kExitOk;
  const Outcome res = guarded([&] {
    if (o.collect) {  // the runs are there (a Slurm array job made them): only the tables
      check_output_kind(dir, OutputKind::sweep);
      for (size_t i = 0; i < points.size(); ++i)
        codes[i] = fs::exists(dir / "runs" / points[i].name / "results.json") ? 0 : -1;
      summary = write_sweep_tables(dir, o, first->name, axes, points, codes);
      if (o.report)
        report_code = write_html_report({dir}, dir / "report.html", dir / "report.html", out, err);
      // The tables and the runs are rdmasim's: a later sweep into `dir` may replace them.
      add_to_manifest(dir, [&](const std::string& rel) {
        if (rel.starts_with("sweep") || rel.starts_with("runs/slurm-") || rel == "report.html") return true;
        for (const auto& p : points)
          if (rel.starts_with("runs/" + p.name + "/") || rel == "runs/" + p.name + ".log") return true;
        return false;
      });
      return json();
    }
    StagedDir stage(dir, OutputKind::sweep);
    fs::create_directories(stage.temp() / "runs");
    if (o.emit == "slurm") {
      write_file_atomic(stage.temp() / "sweep.slurm",
                        slurm_script(self, fs::absolute(o.file), fs::absolute(dir), points, common));
      write_file_atomic(stage.temp() / "sweep.json",
                        json{{"experiment", first->name}, {"runs", points.size()}}.dump(2) + "\n");
      stage.commit();
      emitted = true;
      return json();
    }
    out << "sweep: " << points.size() << " runs, " << std::max(1u, o.jobs) << " at a time ..." << std::endl;
    std::vector<std::vector<std::string>> args;
    std::vector<fs::path> logs;
    for (const auto& p : points) {
      std::vector<std::string> a{"run", o.file.string(), "--out", (stage.temp() / "runs" / p.name).string()};
      a.insert(a.end(), p.args.begin(), p.args.end());
      a.insert(a.end(), common.begin(), common.end());
      args.push_back(std::move(a));
      logs.push_back(stage.temp() / "runs" / (p.name + ".log"));
    }
    codes = run_processes(self, args, logs, o.jobs);
    summary = write_sweep_tables(stage.temp(), o, first->name, axes, points, codes);
    if (o.report)  // staged with the rest; a failed report keeps the sweep
      report_code =
          write_html_report({stage.temp()}, stage.temp() / "report.html", dir / "report.html", out, err);
    stage.commit();
    return json();
  });
  if (res.code != kExitOk) {
    err << res.message << "\n";
    return res.code;
  }
  if (emitted) {
    out << "wrote " << (dir / "sweep.slurm").string() << " (" << points.size()
        << " runs); submit it with sbatch, then run this command with --collect instead of --emit\n";
    return kExitOk;
  }
  int code = kExitOk;
  for (size_t i = 0; i < points.size(); ++i)
    if (codes[i] != 0) {
      err << points[i].name << ": " << (codes[i] < 0 ? "no results.json" : "exit " + std::to_string(codes[i]))
          << " (" << (dir / "runs" / (points[i].name + ".log")).string() << ")\n";
      if (code == kExitOk) code = codes[i] < 0 ? kExitInternal : codes[i];
    }
  if (summary.is_object() && summary.contains("note"))
    out << "note: " << summary["note"].get<std::string>() << "\n";
  out << "output: " << dir.string() << " (sweep.csv, sweep.json, runs/ a folder a run)\n";
  return code == kExitOk ? report_code : code;
}

int do_report(const Options& o, std::ostream& out, std::ostream& err) {
  std::vector<fs::path> dirs(o.dirs.begin(), o.dirs.end());
  const fs::path file = o.out.empty() ? dirs.front() / "report.html" : fs::path(o.out);
  const int code = write_html_report(dirs, file, file, out, err);
  // Written into an output folder of rdmasim's: the page is rdmasim's too,
  // so a later run into that folder replaces it instead of refusing.
  const fs::path parent = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::error_code ec;
  if (code == kExitOk && fs::exists(parent / kManifest, ec)) {
    const Outcome listed = guarded([&] {
      add_to_manifest(parent, [&](const std::string& rel) { return rel == file.filename().string(); });
      return json();
    });
    if (listed.code != kExitOk) {
      err << listed.message << "\n";
      return listed.code;
    }
  }
  return code;
}

// Options that `run`, `compare` and `validate` share.
void add_experiment_options(CLI::App& cmd, Options& o) {
  cmd.add_option("experiment", o.file, "the experiment file")->required()->type_name("EXPERIMENT.yaml");
  cmd.add_option("--set", o.sets, "override a key of the file (repeatable), e.g. --set workloads.0.count=10")
      ->type_name("KEY=VALUE")
      ->check([](const std::string& s) {
        const auto eq = s.find('=');
        return eq == std::string::npos || eq == 0 ? "expected key=value, got '" + s + "'" : std::string();
      });
  cmd.add_option("--seed", o.seed, "override the seed (as --set seed=N)")->type_name("N");
  cmd.add_option("--prices", o.prices, "change the price catalogue with this file (docs/cost.md)")
      ->type_name("FILE");
  cmd.add_option("--memory-limit", o.memory_limit,
                 "refuse (exit 2) a run whose memory estimate passes this (default 80% of RAM)")
      ->type_name("SIZE")
      ->check([](const std::string& s) {
        std::string why;
        return parse_bytes(s, &why) ? std::string() : why;
      });
}

}  // namespace

int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  Options o;
  CLI::App app{"rdmasim: a packet-level emulator of RDMA networks (InfiniBand, RoCE v1, RoCE v2, iWARP)",
               "rdmasim"};
  app.set_version_flag("--version", "rdmasim " + std::string(kVersion));
  app.footer(
      "Run 'rdmasim COMMAND --help' for a command's options, 'man rdmasim' for the manual once installed.\n"
      "Exit status: 0 done; 2 bad input (file:line:column: message; nothing run); 3 output not written;\n"
      "4 operations failed that the experiment did not ask for; 1 an internal error; 128+N signal N.\n"
      "Example: rdmasim run examples/quickstart.yaml, then rdmasim compare examples/quickstart.yaml");
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "rdmasim: " + std::string(e.what()) + "\nRun 'rdmasim --help' for usage.\n";
  });
  const auto fabrics = fabric_list();

  CLI::App* run = app.add_subcommand("run", "run an experiment: DIR/results.json and captures in DIR/pcap/");
  add_experiment_options(*run, o);
  run->add_option("--out,-o", o.out, "output directory (default out/<experiment name>)")->type_name("DIR");
  run->add_option(
         "--partition", o.partition,
         "under mpirun: how to split the network over the ranks: pods (default for a generated topology), "
         "spread, or graph (a balanced graph partition; default for a topology written link by link) "
         "(docs/parallel.md)")
      ->type_name("MODE");
  run->add_option("--fabric", o.fabric, "run on this fabric instead of the file's")
      ->check(one_of(fabrics, "fabric"))
      ->type_name("FABRIC");
  run->add_flag("--quiet,-q", o.quiet, "no progress line");
  run->add_flag("--progress", o.progress,
                "show the progress line from the start, even when stderr is not a terminal");

  CLI::App* compare = app.add_subcommand("compare", "run an experiment on several fabrics and compare them");
  add_experiment_options(*compare, o);
  compare
      ->add_option(
          "--out,-o", o.out,
          "output directory: DIR/<fabric>/ each, DIR/compare.json (default out/<experiment name>-compare)")
      ->type_name("DIR");
  compare
      ->add_option(
          "--fabrics", o.fabrics,
          "fabrics to compare (default: " + join(default_compare_fabrics(), ",") + variants_help() + ")")
      ->delimiter(',')
      ->check(one_of(compare_columns(), "fabric"))
      ->type_name("F,F,...");

  compare->add_flag("--report", o.report, "also write DIR/report.html (as rdmasim report DIR)");

  CLI::App* report = app.add_subcommand("report", "an HTML page with figures from output folders");
  report->add_option("dirs", o.dirs, "output folders of run, compare or sweep")
      ->required()
      ->type_name("DIR...");
  report->add_option("--out,-o", o.out, "the page (default DIR/report.html of the first DIR)")
      ->type_name("FILE.html");

  CLI::App* sweep = app.add_subcommand("sweep", "run an experiment over a grid of values, a process a run");
  add_experiment_options(*sweep, o);
  sweep->add_option("--vary", o.vary, "a key and its values (repeatable); fabric and seed too")
      ->required()
      ->type_name("KEY=V1,V2,...");
  sweep->add_option("-j,--jobs", o.jobs, "runs at a time (default 1)")->check(CLI::Range(1u, 1024u));
  sweep
      ->add_option(
          "--out,-o", o.out,
          "output directory: DIR/runs/<run>/, DIR/sweep.csv, DIR/sweep.json (default out/<name>-sweep)")
      ->type_name("DIR");
  sweep->add_option("--fabric", o.fabric, "run on this fabric instead of the file's")
      ->check(one_of(fabrics, "fabric"))
      ->type_name("FABRIC");
  sweep->add_option("--emit", o.emit, "write DIR/sweep.slurm, a Slurm array job of the grid, and run nothing")
      ->check(CLI::IsMember({"slurm"}))
      ->type_name("slurm");
  sweep->add_flag("--collect", o.collect,
                  "make the tables from DIR/runs/ (after the Slurm job), run nothing");
  sweep->add_flag("--report", o.report, "also write DIR/report.html (as rdmasim report DIR)")
      ->excludes("--emit");

  CLI::App* validate =
      app.add_subcommand("validate", "check an experiment file and print its errors; run nothing");
  add_experiment_options(*validate, o);
  validate->add_option("--fabric", o.fabric, "check it for this fabric instead of the file's")
      ->check(one_of(fabrics, "fabric"))
      ->type_name("FABRIC");

  // "rdmasim frobnicate" or "rdmasim --frobnicate": say so plainly, where
  // CLI11 would say that a subcommand is required.
  if (argc > 1) {
    const std::string_view first = argv[1];
    const bool option = first.starts_with('-');
    if (option ? first != "-h" && first != "--help" && first != "--version"
               : first != "run" && first != "compare" && first != "validate" && first != "sweep" &&
                     first != "report") {
      err << "rdmasim: unknown " << (option ? "option" : "command") << " '" << first
          << "' (expected run, compare, sweep, report or validate)\nRun 'rdmasim --help' for usage.\n";
      return kExitBadInput;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e, out, err);  // prints help, version or the error
    return code == 0 ? kExitOk : kExitBadInput;
  }

  if (Cluster::get().parallel() && !*run) {
    if (Cluster::get().rank() == 0) err << "rdmasim: only 'rdmasim run' runs over several ranks (mpirun)\n";
    return kExitBadInput;
  }
  try {
    if (*run) return do_run(o, out, err);
    if (*compare) return do_compare(o, out, err);
    if (*sweep) return do_sweep(o, out, err);
    if (*report) return do_report(o, out, err);
    return do_validate(o, out, err);
  } catch (const std::exception& e) {
    err << "internal error: " << e.what() << "\n";
  } catch (...) {
    err << "internal error: unknown exception\n";
  }
  return kExitInternal;
}

}  // namespace rdmasim
