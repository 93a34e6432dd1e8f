// rdmasim run (one process, or a rank's part under mpirun) and rdmasim validate.
#include <unistd.h>

#include <memory>
#include <sstream>

#include "apps/commands.hpp"
#include "apps/output_dir.hpp"
#include "apps/report.hpp"
#include "apps/run_extensions.hpp"
#include "apps/runner.hpp"
#include "parallel/cluster.hpp"

namespace rdmasim::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The load step for one run: false, having printed the errors, when the
// file is refused; else its warnings are printed.
bool load_checked(const Options& o, LoadResult& r, std::ostream& err) {
  if (!check_file(o.file, err)) return false;
  r = load(o);
  if (!r.errors.empty() || !r.config) {
    print_errors(r.errors, err);
    return false;
  }
  print_warnings(r.warnings, err);
  return true;
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
    json results = Run(*r.config, where, {{}, mode}).execute();
    if (stage) stage->commit();
    return results;
  });
  code = res.code;
  if (res.code != kExitOk) {
    say << res.message << "\n";
  } else if (root) {
    out << format_run_summary(res.results, stage->dir()) << run_features_summary(res.results);
    warn_about_end(res.results, err);
    if (const std::string f = unexpected_failure(*r.config, res.results); !f.empty()) {
      err << "error: " << f << "; the experiment did not ask for failures (exit " << kExitOpsFailed << ")\n";
      code = kExitOpsFailed;
    }
  }
  // Every rank exits as rank 0 does.
  return std::stoi(cluster.broadcast(std::to_string(code)));
}

}  // namespace

int do_validate(const Options& o, std::ostream& out, std::ostream& err) {
  LoadResult r;
  if (!load_checked(o, r, err)) return kExitBadInput;
  out << "OK: " << o.file.string() << "\n";
  return kExitOk;
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
    return do_run_ranks(o, load(o), out, err);
  }
  // One process: a partition has nothing to split, but a wrong one is
  // still a mistake (docs/parallel.md).
  if (!o.partition.empty()) {
    try {
      partition_mode(o.partition);
    } catch (const InputError& e) {
      err << e.what() << "\n";
      return kExitBadInput;
    }
    err << "note: --partition " << o.partition
        << " splits a run over the ranks mpirun starts; started without it, this run is one process\n";
  }
  LoadResult r;
  if (!load_checked(o, r, err)) return kExitBadInput;
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
    json results = Run(*r.config, stage.temp(), {progress, std::nullopt}).execute();
    stage.commit();
    return results;
  });
  if (res.code != kExitOk) {
    err << res.message << "\n";
    return res.code;
  }
  out << format_run_summary(res.results, dir) << run_features_summary(res.results);
  warn_about_end(res.results, err);
  if (const std::string f = unexpected_failure(*r.config, res.results); !f.empty()) {
    err << "error: " << f << "; the experiment did not ask for failures (exit " << kExitOpsFailed << ")\n";
    return kExitOpsFailed;
  }
  return kExitOk;
}

}  // namespace rdmasim::cli
