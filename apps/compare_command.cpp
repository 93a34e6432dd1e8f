// rdmasim compare: the experiment on each fabric (and variant) asked for,
// a directory a fabric, with compare.json and compare.csv beside them;
// staged, and committed whole.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "apps/commands.hpp"
#include "apps/output_dir.hpp"
#include "apps/report.hpp"
#include "apps/report_html.hpp"
#include "apps/runner.hpp"
#include "fabrics/registry.hpp"
#include "workloads/registry.hpp"

namespace rdmasim::cli {

namespace fs = std::filesystem;
using nlohmann::json;

// What compare runs unless told: the RDMA fabrics (tcp, the kernel
// baseline, is asked for by name: --fabrics ib,roce_v2,iwarp,tcp).
std::vector<std::string> default_compare_fabrics() {
  std::vector<std::string> v;
  for (const Fabric* f : fabrics())
    if (f->compared_by_default()) v.emplace_back(f->name());
  return v;
}

// compare's columns: the fabrics, then the variants they offer (tcp's
// `dpdk`, between the kernel and RDMA).
std::vector<std::string> compare_columns() {
  std::vector<std::string> v;
  for (const std::string_view name : fabric_names()) v.emplace_back(name);
  for (const Fabric* f : fabrics())
    for (const Fabric::Variant& x : f->variants()) v.emplace_back(x.name);
  return v;
}

std::string variants_help() {
  std::string s;
  for (const Fabric* f : fabrics())
    for (const Fabric::Variant& x : f->variants())
      s += fmt::format("; {}: {} with {}", x.name, f->name(), x.set);
  return s;
}

namespace {

// The fabric a compare column runs and the override that makes it, if any.
std::pair<std::string, std::string> compare_column(const std::string& column) {
  for (const Fabric* f : fabrics())
    for (const Fabric::Variant& x : f->variants())
      if (x.name == column) return {std::string(f->name()), std::string(x.set)};
  return {column, {}};
}

// A column and the experiment loaded for it. One the experiment cannot run
// on is skipped, with the loader's reason.
struct Trial {
  std::string fabric;
  LoadResult load;
  bool loaded() const { return load.config && load.errors.empty(); }
};

// Each column asked for, once, in order.
std::vector<Trial> load_trials(const Options& o) {
  std::vector<std::string> columns;
  for (const auto& f : o.fabrics.empty() ? default_compare_fabrics() : o.fabrics)
    if (std::find(columns.begin(), columns.end(), f) == columns.end()) columns.push_back(f);
  std::vector<Trial> trials;
  for (const auto& f : columns) {
    const auto [fabric, set] = compare_column(f);
    Options with = o;
    if (!set.empty()) with.sets.push_back(set);
    trials.push_back({f, load(with, fabric)});
  }
  // A kind compared on every fabric (kind: nvme) adds what compare leaves
  // out unless told: tcp, the kernel baseline (NVMe/TCP).
  auto every_fabric = [](const Trial& t) {
    return t.load.config &&
           std::any_of(t.load.config->workloads.begin(), t.load.config->workloads.end(),
                       [](const WorkloadConfig& w) { return workload_of(w).compared_on_every_fabric(); });
  };
  if (o.fabrics.empty() && std::any_of(trials.begin(), trials.end(), every_fabric))
    for (const Fabric* f : rdmasim::fabrics())
      if (std::find(columns.begin(), columns.end(), f->name()) == columns.end())
        trials.push_back({std::string(f->name()), load(o, std::string(f->name()))});
  return trials;
}

// Loaded on no fabric at all: the file itself is at fault. Each error once.
void print_every_error(const std::vector<Trial>& trials, std::ostream& err) {
  std::vector<std::string> seen;
  for (const auto& t : trials)
    for (const auto& e : t.load.errors)
      if (std::find(seen.begin(), seen.end(), e.format()) == seen.end()) seen.push_back(e.format());
  for (const auto& s : seen) err << s << "\n";
}

// compare.json's `fabrics` as the trials run, and how they ended.
struct Tally {
  json entries = json::array();
  bool any_ok = false, any_internal = false;
  std::vector<std::string> ops_failed;  // fabrics whose operations failed unexpectedly
};

// Runs one trial into `stage`/<fabric>; false when the output cannot be
// written (the other fabrics would not fare better), having said why.
bool run_trial(const Trial& t, const fs::path& stage, Tally& tally, std::ostream& out, std::ostream& err) {
  if (!t.loaded()) {
    std::vector<std::string> why;
    for (const auto& e : t.load.errors) why.push_back(e.format());
    tally.entries.push_back(compare_skipped(t.fabric, join(why, "; ")));
    return true;
  }
  out << "running on " << t.fabric << " ..." << std::endl;
  const fs::path fabric_dir = stage / t.fabric;
  const Outcome res = guarded([&] {
    fs::create_directory(fabric_dir);
    return Run(*t.load.config, fabric_dir).execute();
  });
  if (res.code == kExitOk) {
    tally.entries.push_back(compare_entry(t.fabric, res.results, t.fabric));
    if (const std::string f = unexpected_failure(*t.load.config, res.results); !f.empty()) {
      tally.ops_failed.push_back(t.fabric + ": " + f);
      tally.entries.back()["error"] = f;  // the run's exit 4, said in compare.json too
    }
    tally.any_ok = true;
    return true;
  }
  std::error_code ec;
  fs::remove_all(fabric_dir, ec);  // only complete runs are kept
  if (res.code == kExitOutput) {
    err << res.message << "\n";
    return false;
  }
  if (res.code == kExitBadInput) {
    tally.entries.push_back(compare_skipped(t.fabric, res.message));
  } else {
    tally.entries.push_back(compare_failed(t.fabric, res.message));
    tally.any_internal = true;
  }
  return true;
}

// compare.json, compare.csv and (--report) report.html into the stage,
// then the stage replaces `dir`. Returns the exit code so far.
int write_comparison(const Options& o, const json& compare, StagedDir& stage, const fs::path& dir,
                     std::ostream& out, std::ostream& err) {
  int report_code = kExitOk;
  const Outcome written = guarded([&] {
    write_file_atomic(stage.temp() / "compare.json", compare.dump(2) + "\n");
    write_file_atomic(stage.temp() / "compare.csv", compare_csv(compare));
    if (o.report)  // staged with the rest; a failed report keeps the comparison
      report_code =
          write_html_report({stage.temp()}, stage.temp() / "report.html", dir / "report.html", out, err);
    stage.commit();
    return json();
  });
  if (written.code != kExitOk) {
    err << written.message << "\n";
    return written.code;
  }
  out << format_compare_table(compare);
  out << "output: " << dir.string() << " (compare.json, one directory a fabric)\n";
  return report_code;
}

// The exit code once the comparison is written: a fabric's internal
// failure, then unexpected failed operations.
int compared(const Tally& tally, std::ostream& err) {
  for (const auto& e : tally.entries)
    if (e["status"] == "failed")
      err << e["fabric"].get<std::string>() << ": " << e["reason"].get<std::string>() << "\n";
  if (tally.any_internal) return kExitInternal;
  for (const auto& f : tally.ops_failed) err << "error: " << f << "\n";
  return tally.ops_failed.empty() ? kExitOk : kExitOpsFailed;
}

}  // namespace

int do_compare(const Options& o, std::ostream& out, std::ostream& err) {
  if (!check_file(o.file, err)) return kExitBadInput;
  const std::vector<Trial> trials = load_trials(o);
  const auto it = std::find_if(trials.begin(), trials.end(), [](const Trial& t) { return t.loaded(); });
  if (it == trials.end()) {
    print_every_error(trials, err);
    return kExitBadInput;
  }
  const ExperimentConfig& first = *it->load.config;
  print_warnings(it->load.warnings, err);
  // The whole set (a directory a fabric, compare.json) is staged and
  // replaces `dir` at once: never fabrics of two runs side by side.
  fs::path dir;
  std::optional<StagedDir> stage;
  if (const Outcome made = guarded([&] {
        dir = output_dir(o, first, "-compare");
        stage.emplace(dir, OutputKind::compare);
        return json();
      });
      made.code != kExitOk) {
    err << made.message << "\n";
    return made.code;
  }
  Tally tally;
  for (const auto& t : trials)
    if (!run_trial(t, stage->temp(), tally, out, err)) return kExitOutput;
  const json compare = {{"experiment", first.name},
                        {"file", o.file.string()},
                        {"seed", first.seed},
                        {"fabrics", tally.entries}};
  if (!tally.any_ok) {  // nothing to compare: report why, write nothing
    for (const auto& e : tally.entries)
      err << e["fabric"].get<std::string>() << ": " << e["reason"].get<std::string>() << "\n";
    return tally.any_internal ? kExitInternal : kExitBadInput;
  }
  if (const int code = write_comparison(o, compare, *stage, dir, out, err); code != kExitOk) return code;
  return compared(tally, err);
}

}  // namespace rdmasim::cli
