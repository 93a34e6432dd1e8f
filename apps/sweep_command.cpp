// rdmasim sweep: the experiment over a grid of values, a process a run
// (or a Slurm array job: --emit slurm, then --collect), and the tables of
// their results (apps/sweep.hpp).
#include <algorithm>
#include <fstream>
#include <iostream>
#include <set>

#include "apps/commands.hpp"
#include "apps/output_dir.hpp"
#include "apps/report_html.hpp"
#include "apps/sweep.hpp"

namespace rdmasim::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The options of `rdmasim run` every point of a sweep shares (make_grid
// refused a --fabric or --seed beside a --vary of the same).
std::vector<std::string> common_run_args(const Options& o) {
  std::vector<std::string> a;
  for (const auto& s : o.sets) a.insert(a.end(), {"--set", s});
  if (o.seed) a.insert(a.end(), {"--seed", *o.seed});
  if (!o.fabric.empty()) a.insert(a.end(), {"--fabric", o.fabric});
  if (!o.prices.empty()) a.insert(a.end(), {"--prices", fs::absolute(o.prices).string()});
  if (!o.memory_limit.empty()) a.insert(a.end(), {"--memory-limit", o.memory_limit});
  return a;
}

// The options of one point, as load() takes them: each varied key's value
// as the --vary that gave it (errors quote it so).
Options point_options(const Options& o, const std::vector<SweepAxis>& axes, const SweepPoint& p) {
  Options po = o;
  for (size_t k = 0; k < axes.size(); ++k) po.point.push_back(axes[k].key + "=" + p.values[k]);
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

// A sweep once its points have loaded.
struct Sweep {
  std::vector<SweepAxis> axes;
  std::vector<SweepPoint> points;
  std::string name;  // the experiment's
  fs::path dir;
  std::vector<int> codes;  // each run's exit code; -1: no results.json
  json summary;            // over seeds (sweep.json's)
  int report_code = 0;     // --report's
};

// --vary's axes and their grid into `s`; false, having said why, when refused.
bool make_grid(const Options& o, Sweep& s, std::ostream& err) {
  for (const auto& v : o.vary) {
    std::string why;
    auto a = parse_vary(v, why);
    if (!a) {
      err << "rdmasim sweep: --vary " << why << "\n";
      return false;
    }
    s.axes.push_back(std::move(*a));
  }
  if (const std::string why = grid_error(s.axes); !why.empty()) {
    err << "rdmasim sweep: --vary " << why << "\n";
    return false;
  }
  // --fabric or --seed beside a --vary of the same: the vary would win
  // without a word, and the option the user typed would not be what ran.
  for (const SweepAxis& a : s.axes) {
    const bool both = (a.key == "fabric" && !o.fabric.empty()) || (a.key == "seed" && o.seed);
    if (!both) continue;
    err << "rdmasim sweep: --" << a.key << " and --vary " << a.key << "=... both set the " << a.key
        << "; give one of them\n";
    return false;
  }
  s.points = sweep_grid(s.axes);
  s.codes.assign(s.points.size(), 0);
  return true;
}

// Every point must load before any runs: the first point's experiment, or
// nothing with every error said once.
std::optional<ExperimentConfig> load_points(const Options& o, const Sweep& s, std::ostream& err) {
  std::vector<std::string> errors;
  std::optional<ExperimentConfig> first;
  std::vector<LoadError> warnings;  // the first point's
  try {
    for (const auto& p : s.points) {
      const Options po = point_options(o, s.axes, p);
      LoadResult r = load(po);
      for (const auto& e : r.errors)
        if (std::find(errors.begin(), errors.end(), e.format()) == errors.end()) errors.push_back(e.format());
      if (r.config && !first) first = r.config, warnings = std::move(r.warnings);
    }
  } catch (const InputError& e) {
    errors.push_back(e.what());
  }
  if (!errors.empty() || !first) {
    for (const auto& e : errors) err << e << "\n";
    return std::nullopt;
  }
  print_warnings(warnings, err);
  return first;
}

// The files --collect writes at the top of the sweep's folder.
constexpr std::string_view kCollected[] = {"sweep.csv", "sweep_summary.csv", "sweep.json", "report.html"};

// --collect writes only into a sweep's folder (its manifest lists
// sweep.json: `--emit slurm` or a sweep made it), and over none of the
// user's files there. Throws InputError naming the folder or the file.
void check_collect_folder(const fs::path& dir, bool report) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  const std::string what = "; --collect makes the tables in the folder `rdmasim sweep --emit slurm` wrote";
  if (!fs::exists(st)) throw InputError(dir.string() + ": no such folder" + what);
  if (!fs::is_directory(st)) throw InputError(dir.string() + ": not a folder" + what);
  check_output_kind(dir, OutputKind::sweep);
  const std::set<std::string> listed = manifest_entries(dir);
  if (!listed.contains("sweep.json"))
    throw InputError(dir.string() + ": not a sweep folder of rdmasim's (its " + std::string(kManifest) +
                     " lists no sweep.json)" + what + ", and writes nowhere else");
  for (const std::string_view f : kCollected) {
    if (f == "report.html" && !report) continue;
    if (fs::exists(fs::symlink_status(dir / f, ec)) && !listed.contains(std::string(f)))
      throw InputError((dir / f).string() + ": rdmasim did not write it (not in the folder's " +
                       std::string(kManifest) + "); refusing to write over it: move it away first");
  }
}

// What a collected sweep's folder holds of rdmasim's, for its manifest: the
// tables, the Slurm logs its script asked for, and each run's folder as far
// as the run's own manifest lists it, with its log.
bool collected(const std::string& rel, const Sweep& s, const std::vector<std::set<std::string>>& run_files,
               bool report) {
  for (const std::string_view f : kCollected)
    if (rel == f && (f != "report.html" || report)) return true;
  if (rel.starts_with("runs/slurm-") && rel.ends_with(".log") &&
      rel.find_first_not_of("0123456789", 11) == rel.size() - 4)
    return true;
  for (size_t i = 0; i < s.points.size(); ++i) {
    const std::string run = "runs/" + s.points[i].name;
    if (rel == run + ".log" || rel == run + "/" || rel == run + "/" + std::string(kManifest)) return true;
    if (rel.starts_with(run + "/") && run_files[i].contains(rel.substr(run.size() + 1))) return true;
  }
  return false;
}

// --collect: the runs are there (a Slurm array job made them): only the tables.
void collect_runs(const Options& o, Sweep& s, std::ostream& out, std::ostream& err) {
  check_collect_folder(s.dir, o.report);
  for (size_t i = 0; i < s.points.size(); ++i)
    s.codes[i] = fs::exists(s.dir / "runs" / s.points[i].name / "results.json") ? 0 : -1;
  s.summary = write_sweep_tables(s.dir, o, s.name, s.axes, s.points, s.codes);
  if (o.report)
    s.report_code = write_html_report({s.dir}, s.dir / "report.html", s.dir / "report.html", out, err);
  // The tables and the runs are rdmasim's: a later sweep into `dir` may replace them.
  std::vector<std::set<std::string>> run_files;
  for (const auto& p : s.points) run_files.push_back(manifest_entries(s.dir / "runs" / p.name));
  add_to_manifest(s.dir, [&](const std::string& rel) { return collected(rel, s, run_files, o.report); });
}

// --emit slurm: DIR/sweep.slurm, run nothing.
void emit_slurm(const Options& o, const Sweep& s, const fs::path& self,
                const std::vector<std::string>& common) {
  StagedDir stage(s.dir, OutputKind::sweep);
  fs::create_directories(stage.temp() / "runs");
  write_file_atomic(stage.temp() / "sweep.slurm",
                    slurm_script(self, fs::absolute(o.file), fs::absolute(s.dir), s.points, common));
  write_file_atomic(stage.temp() / "sweep.json",
                    json{{"experiment", s.name}, {"runs", s.points.size()}}.dump(2) + "\n");
  stage.commit();
}

// A run's log names the folder the run wrote (its `output:` line), which is
// under the staged sweep: name the one it is in once the sweep is committed.
void name_committed_runs(const fs::path& log, const fs::path& staged, const fs::path& dir) {
  std::ifstream in(log);
  if (!in) return;
  std::string text{std::istreambuf_iterator<char>(in), {}};
  const std::string from = (staged / "runs").string() + "/", to = (dir / "runs").string() + "/";
  size_t at = text.find(from);
  if (at == std::string::npos) return;
  for (; at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  write_file_atomic(log, text);
}

// Each point as `rdmasim run` in a process of its own, -j at a time, then the tables.
void run_points(const Options& o, Sweep& s, const fs::path& self, const std::vector<std::string>& common,
                std::ostream& out, std::ostream& err) {
  StagedDir stage(s.dir, OutputKind::sweep);
  fs::create_directories(stage.temp() / "runs");
  out << "sweep: " << s.points.size() << " runs, " << std::max(1u, o.jobs) << " at a time ..." << std::endl;
  std::vector<std::vector<std::string>> args;
  std::vector<fs::path> logs;
  for (const auto& p : s.points) {
    std::vector<std::string> a{"run", o.file.string(), "--out", (stage.temp() / "runs" / p.name).string()};
    a.insert(a.end(), p.args.begin(), p.args.end());
    a.insert(a.end(), common.begin(), common.end());
    args.push_back(std::move(a));
    logs.push_back(stage.temp() / "runs" / (p.name + ".log"));
  }
  s.codes = run_processes(self, args, logs, o.jobs);
  for (const fs::path& log : logs) name_committed_runs(log, stage.temp(), s.dir);
  s.summary = write_sweep_tables(stage.temp(), o, s.name, s.axes, s.points, s.codes);
  if (o.report)  // staged with the rest; a failed report keeps the sweep
    s.report_code =
        write_html_report({stage.temp()}, stage.temp() / "report.html", s.dir / "report.html", out, err);
  stage.commit();
}

// The exit code: the first failed run's (a run without results.json: internal), each failure said.
int swept(const Sweep& s, std::ostream& out, std::ostream& err) {
  int code = kExitOk;
  for (size_t i = 0; i < s.points.size(); ++i)
    if (s.codes[i] != 0) {
      err << s.points[i].name << ": "
          << (s.codes[i] < 0 ? "no results.json" : "exit " + std::to_string(s.codes[i])) << " ("
          << (s.dir / "runs" / (s.points[i].name + ".log")).string() << ")\n";
      if (code == kExitOk) code = s.codes[i] < 0 ? kExitInternal : s.codes[i];
    }
  if (s.summary.is_object() && s.summary.contains("note"))
    out << "note: " << s.summary["note"].get<std::string>() << "\n";
  out << "output: " << s.dir.string() << " (sweep.csv, sweep.json, runs/ a folder a run)\n";
  return code == kExitOk ? s.report_code : code;
}

}  // namespace

int do_sweep(const Options& o, std::ostream& out, std::ostream& err) {
  if (!check_file(o.file, err)) return kExitBadInput;
  Sweep s;
  if (!make_grid(o, s, err)) return kExitBadInput;
  const std::optional<ExperimentConfig> first = load_points(o, s, err);
  if (!first) return kExitBadInput;
  s.name = first->name;
  try {
    s.dir = output_dir(o, *first, "-sweep");
  } catch (const InputError& e) {
    err << e.what() << "\n";
    return kExitBadInput;
  }
  const fs::path self = fs::read_symlink("/proc/self/exe");
  const std::vector<std::string> common = common_run_args(o);
  const Outcome res = guarded([&] {
    if (o.collect)
      collect_runs(o, s, out, err);
    else if (o.emit == "slurm")
      emit_slurm(o, s, self, common);
    else
      run_points(o, s, self, common, out, err);
    return json();
  });
  if (res.code != kExitOk) {
    err << res.message << "\n";
    return res.code;
  }
  if (o.emit == "slurm" && !o.collect) {
    out << "wrote " << (s.dir / "sweep.slurm").string() << " (" << s.points.size()
        << " runs); submit it with sbatch, then run this command with --collect instead of --emit\n";
    return kExitOk;
  }
  return swept(s, out, err);
}

}  // namespace rdmasim::cli
