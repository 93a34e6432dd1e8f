// `rdmasim sweep`: an experiment run over a grid of values (fabrics, loads,
// algorithms, seeds), each point in a process of its own, and one table of
// the results: DIR/sweep.csv and DIR/sweep.json, a row per run, and for
// seeds, means with 95% confidence intervals (DIR/sweep_summary.csv).
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmasim {

// One --vary KEY=V1,V2,...
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
};
// Parses "KEY=V1,V2,..."; nullopt and `why` when it is not that.
std::optional<SweepAxis> parse_vary(std::string_view text, std::string& why);

// Why the grid of `axes` is refused, or "": a key varied twice (its
// values would be two axes of one key, the last overriding), or more runs
// than kMaxSweepRuns (every point is loaded before any runs, and the grid
// is held whole: 10 axes of 10 values would be 10^10 points).
inline constexpr size_t kMaxSweepRuns = 10000;
std::string grid_error(const std::vector<SweepAxis>& axes);

// A point of the grid: a value per axis, and the `rdmasim run` options that
// set them (--fabric F, --seed N, --set KEY=V).
struct SweepPoint {
  std::string name;  // run-000, run-001, ...: its folder under DIR/runs/
  std::vector<std::string> values;
  std::vector<std::string> args;
};
// Every combination, the last axis varying fastest.
std::vector<SweepPoint> sweep_grid(const std::vector<SweepAxis>& axes);

// Runs `self` once per argument list, at most `jobs` at a time, each
// process's stdout and stderr into its `logs` file. Returns the exit codes
// (128 + signal for a killed process). The processes are started with
// spawn_child(), so an interrupt stops those running.
std::vector<int> run_processes(const std::filesystem::path& self,
                               const std::vector<std::vector<std::string>>& args,
                               const std::vector<std::filesystem::path>& logs, unsigned jobs);

// The table: {"axes": [...], "columns": [...], "rows": [[...], ...]}; a row
// is run, exit_code, a value per axis, then the headline figures of
// results.json (null where a run wrote none).
nlohmann::json sweep_table(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points,
                           const std::vector<nlohmann::json>& results, const std::vector<int>& codes);
// Over the seeds (when `seed` is an axis): per combination of the other
// axes, n and each numeric column's mean and 95% confidence half-width
// (Student's t). Same shape as the table, plus `seed_changes_nothing`:
// every configuration run over several seeds gave the same figures in
// each, so the intervals are 0; then `note` says so for the user.
nlohmann::json seed_summary(const nlohmann::json& table);
// RFC 4180 CSV of a table: a header of its columns, a line a row.
std::string table_csv(const nlohmann::json& table);

// A Slurm array job running the grid: task i runs point i into
// `dir`/runs/<name>, its output into `dir`/runs/<name>.log as a local sweep
// writes it (Slurm's own log of the task, before that, is
// `dir`/runs/slurm-<i>.log); `rdmasim sweep ... --collect` then makes the
// table.
std::string slurm_script(const std::filesystem::path& self, const std::filesystem::path& experiment,
                         const std::filesystem::path& dir, const std::vector<SweepPoint>& points,
                         const std::vector<std::string>& common_args);

}  // namespace rdmasim
