#include "apps/cli.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "apps/output_dir.hpp"
#include "apps/report.hpp"
#include "apps/runner.hpp"
#include "cost/bom.hpp"
#include "topologies/config.hpp"
#include "topologies/loader.hpp"

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
  std::string prices;  // --prices FILE
};

std::vector<std::string> fabric_names() {
  return {std::begin(EnumNames<FabricKind>::names), std::end(EnumNames<FabricKind>::names)};
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

// DIR: --out, or out/<experiment name>.
fs::path output_dir(const Options& o, const ExperimentConfig& cfg) {
  if (!o.out.empty()) return output_path(o.out);
  const fs::path name = cfg.name;
  if (cfg.name.empty() || name.has_parent_path() || name.has_root_path() || cfg.name == "." ||
      cfg.name == "..")
    throw InputError("the experiment name '" + cfg.name + "' cannot name a directory; give --out");
  return fs::path("out") / name;
}

// The experiment file must be a regular file before the loader sees it: a
// FIFO or a device would block or never end. There is no line to point at.
bool check_file(const fs::path& file, std::ostream& err) {
  std::error_code ec;
  const auto st = fs::status(file, ec);
  if (fs::is_regular_file(st)) return true;
  const char* what = fs::is_directory(st)          ? "is a directory, not an experiment file"
                     : fs::is_fifo(st)             ? "is a FIFO (named pipe), not an experiment file"
                     : fs::is_character_file(st)   ? "is a character device, not an experiment file"
                     : fs::is_block_file(st)       ? "is a block device, not an experiment file"
                     : fs::is_socket(st)           ? "is a socket, not an experiment file"
                     : fs::exists(st)              ? "is not a regular file"
                     : ec && ec != std::errc::no_such_file_or_directory ? nullptr
                                                                        : "no such file";
  err << file.string() << ": " << (what ? what : ec.message().c_str()) << "\n";
  return false;
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
    if (r.config) r.config->cost.insert(r.config->cost.begin(), prices.settings.begin(), prices.settings.end());
  }
  if (r.config) experiment_prices(*r.config, r.errors);
  if (!r.errors.empty()) r.config.reset();
  return r;
}

void print_errors(const std::vector<LoadError>& errors, std::ostream& err) {
  for (const auto& e : errors) err << e.format() << "\n";
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
  const json& end = results.value("end", json::object());
  if (end.value("reason", "") != "stalled") return;
  err << "warning: every workload had finished at " << ms(end["workloads_done_ps"])
      << ", but frames were still flowing; the run was stopped at " << ms(results["end_time_ps"]);
  if (end.contains("pfc_paused_ports"))
    err << ". PFC PAUSE frames were still flowing on " << end["pfc_paused_ports"].size() << " port(s) ("
        << end["pfc_paused_ports"][0].get<std::string>() << ", ...): a PFC deadlock";
  err << "\n";
}

// Runs `cfg` and writes its results.json and captures into `dir`, which exists.
json run_to(const ExperimentConfig& cfg, const fs::path& dir) {
  json results = run_experiment(cfg, dir);
  write_file_atomic(dir / "results.json", results.dump(2) + "\n");
  return results;
}

int do_validate(const Options& o, std::ostream& out, std::ostream& err) {
  if (!check_file(o.file, err)) return kExitBadInput;
  const LoadResult r = load(o, o.fabric.empty() ? std::nullopt : std::optional(o.fabric));
  if (!r.errors.empty() || !r.config) {
    print_errors(r.errors, err);
    return kExitBadInput;
  }
  out << "OK: " << o.file.string() << "\n";
  return kExitOk;
}

int do_run(const Options& o, std::ostream& out, std::ostream& err) {
  if (!check_file(o.file, err)) return kExitBadInput;
  const LoadResult r = load(o, o.fabric.empty() ? std::nullopt : std::optional(o.fabric));
  if (!r.errors.empty() || !r.config) {
    print_errors(r.errors, err);
    return kExitBadInput;
  }
  fs::path dir;
  try {
    dir = output_dir(o, *r.config);
  } catch (const InputError& e) {
    err << e.what() << "\n";
    return kExitBadInput;
  }
  // Through a staged directory: `dir` is replaced only by a complete output.
  const Outcome res = guarded([&] {
    StagedDir stage(dir);
    json results = run_to(*r.config, stage.temp());
    stage.commit();
    return results;
  });
  if (res.code != kExitOk) {
    err << res.message << "\n";
    return res.code;
  }
  out << format_run_summary(res.results, dir);
  warn_about_end(res.results, err);
  return kExitOk;
}

int do_compare(const Options& o, std::ostream& out, std::ostream& err) {
  if (!check_file(o.file, err)) return kExitBadInput;
  std::vector<std::string> fabrics;
  for (const auto& f : o.fabrics.empty() ? fabric_names() : o.fabrics)
    if (std::find(fabrics.begin(), fabrics.end(), f) == fabrics.end()) fabrics.push_back(f);

  // A fabric the experiment cannot run on is skipped, with the loader's reason.
  struct Trial {
    std::string fabric;
    LoadResult load;
  };
  std::vector<Trial> trials;
  for (const auto& f : fabrics) trials.push_back({f, load(o, f)});
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

  fs::path dir;
  try {
    dir = output_dir(o, *first);
  } catch (const InputError& e) {
    err << e.what() << "\n";
    return kExitBadInput;
  }

  // The whole set (a directory a fabric, compare.json) is staged and
  // replaces `dir` at once: never fabrics of two runs side by side.
  std::optional<StagedDir> stage;
  if (const Outcome o = guarded([&] {
        stage.emplace(dir);
        return json();
      });
      o.code != kExitOk) {
    err << o.message << "\n";
    return o.code;
  }

  json entries = json::array();
  bool any_ok = false, any_internal = false;
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
  if (const Outcome o = guarded([&] {
        write_file_atomic(stage->temp() / "compare.json", compare.dump(2) + "\n");
        stage->commit();
        return json();
      });
      o.code != kExitOk) {
    err << o.message << "\n";
    return o.code;
  }
  out << format_compare_table(compare);
  out << "output: " << dir.string() << " (compare.json, one directory a fabric)\n";
  for (const auto& e : entries)
    if (e["status"] == "failed")
      err << e["fabric"].get<std::string>() << ": " << e["reason"].get<std::string>() << "\n";
  return any_internal ? kExitInternal : kExitOk;
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
}

}  // namespace

int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  Options o;
  CLI::App app{"rdmasim: a packet-level emulator of RDMA networks (InfiniBand, RoCE v1, RoCE v2, iWARP)",
               "rdmasim"};
  app.set_version_flag("--version", "rdmasim " + std::string(kVersion));
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "rdmasim: " + std::string(e.what()) + "\nRun 'rdmasim --help' for usage.\n";
  });
  const auto fabrics = fabric_names();

  CLI::App* run = app.add_subcommand("run", "run an experiment: DIR/results.json and captures in DIR/pcap/");
  add_experiment_options(*run, o);
  run->add_option("--out,-o", o.out, "output directory (default out/<experiment name>)")->type_name("DIR");
  run->add_option("--fabric", o.fabric, "run on this fabric instead of the file's")
      ->check(CLI::IsMember(fabrics))
      ->type_name("FABRIC");

  CLI::App* compare = app.add_subcommand("compare", "run an experiment on several fabrics and compare them");
  add_experiment_options(*compare, o);
  compare
      ->add_option("--out,-o", o.out,
                   "output directory: DIR/<fabric>/ each, DIR/compare.json (default out/<experiment name>)")
      ->type_name("DIR");
  compare->add_option("--fabrics", o.fabrics, "fabrics to compare (default: " + join(fabrics, ",") + ")")
      ->delimiter(',')
      ->check(CLI::IsMember(fabrics))
      ->type_name("F,F,...");

  CLI::App* validate =
      app.add_subcommand("validate", "check an experiment file and print its errors; run nothing");
  add_experiment_options(*validate, o);
  validate->add_option("--fabric", o.fabric, "check it for this fabric instead of the file's")
      ->check(CLI::IsMember(fabrics))
      ->type_name("FABRIC");

  // "rdmasim frobnicate" or "rdmasim --frobnicate": say so plainly, where
  // CLI11 would say that a subcommand is required.
  if (argc > 1) {
    const std::string_view first = argv[1];
    const bool option = first.starts_with('-');
    if (option ? first != "-h" && first != "--help" && first != "--version"
               : first != "run" && first != "compare" && first != "validate") {
      err << "rdmasim: unknown " << (option ? "option" : "command") << " '" << first
          << "' (expected run, compare or validate)\nRun 'rdmasim --help' for usage.\n";
      return kExitBadInput;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e, out, err);  // prints help, version or the error
    return code == 0 ? kExitOk : kExitBadInput;
  }

  try {
    if (*run) return do_run(o, out, err);
    if (*compare) return do_compare(o, out, err);
    return do_validate(o, out, err);
  } catch (const std::exception& e) {
    err << "internal error: " << e.what() << "\n";
  } catch (...) {
    err << "internal error: unknown exception\n";
  }
  return kExitInternal;
}

}  // namespace rdmasim
