#include "apps/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "apps/commands.hpp"
#include "fabrics/registry.hpp"
#include "parallel/cluster.hpp"
#include "topologies/config.hpp"
#include "topologies/yaml_reader.hpp"

namespace rdmasim {

namespace {

using namespace cli;

std::vector<std::string> fabric_list() {
  const auto names = fabric_names();
  return {names.begin(), names.end()};
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

// --out given an empty path (`--out "$DIR"` with DIR unset) meant the
// default folder without a word; the option's default is to leave it out.
std::string path_given(const std::string& path) {
  return path.empty() ? "an empty path; leave --out out for the default" : std::string();
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

CLI::App& add_run(CLI::App& app, Options& o) {
  CLI::App* run = app.add_subcommand("run", "run an experiment: DIR/results.json and captures in DIR/pcap/");
  add_experiment_options(*run, o);
  run->add_option("--out,-o", o.out, "output directory (default out/<experiment name>)")
      ->type_name("DIR")
      ->check(path_given);
  run->add_option(
         "--partition", o.partition,
         "under mpirun: how to split the network over the ranks: pods (default for a generated topology), "
         "spread, or graph (a balanced graph partition; default for a topology written link by link) "
         "(docs/parallel.md)")
      ->type_name("MODE");
  run->add_option("--fabric", o.fabric, "run on this fabric instead of the file's")
      ->check(one_of(fabric_list(), "fabric"))
      ->type_name("FABRIC");
  run->add_flag("--quiet,-q", o.quiet, "no progress line");
  run->add_flag("--progress", o.progress,
                "show the progress line from the start, even when stderr is not a terminal");
  return *run;
}

CLI::App& add_compare(CLI::App& app, Options& o) {
  CLI::App* compare = app.add_subcommand("compare", "run an experiment on several fabrics and compare them");
  add_experiment_options(*compare, o);
  compare
      ->add_option(
          "--out,-o", o.out,
          "output directory: DIR/<fabric>/ each, DIR/compare.json (default out/<experiment name>-compare)")
      ->type_name("DIR")
      ->check(path_given);
  compare
      ->add_option("--fabrics", o.fabrics,
                   "fabrics to compare (default: " + join(default_compare_fabrics(), ",") +
                       ", and the others for kind: nvme" + variants_help() + ")")
      ->delimiter(',')
      ->check(one_of(compare_columns(), "fabric"))
      ->type_name("F,F,...");

  compare->add_flag("--report", o.report, "also write DIR/report.html (as rdmasim report DIR)");
  return *compare;
}

CLI::App& add_report(CLI::App& app, Options& o) {
  CLI::App* report = app.add_subcommand("report", "an HTML page with figures from output folders");
  report->add_option("dirs", o.dirs, "output folders of run, compare or sweep")
      ->required()
      ->type_name("DIR...");
  report->add_option("--out,-o", o.out, "the page (default DIR/report.html of the first DIR)")
      ->type_name("FILE.html")
      ->check(path_given);
  return *report;
}

CLI::App& add_sweep(CLI::App& app, Options& o) {
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
      ->type_name("DIR")
      ->check(path_given);
  sweep->add_option("--fabric", o.fabric, "run on this fabric instead of the file's")
      ->check(one_of(fabric_list(), "fabric"))
      ->type_name("FABRIC");
  sweep->add_option("--emit", o.emit, "write DIR/sweep.slurm, a Slurm array job of the grid, and run nothing")
      ->check(CLI::IsMember({"slurm"}))
      ->type_name("slurm");
  sweep->add_flag("--collect", o.collect,
                  "make the tables from DIR/runs/ (after the Slurm job), run nothing");
  sweep->add_flag("--report", o.report, "also write DIR/report.html (as rdmasim report DIR)")
      ->excludes("--emit");
  return *sweep;
}

CLI::App& add_validate(CLI::App& app, Options& o) {
  CLI::App* validate =
      app.add_subcommand("validate", "check an experiment file and print its errors; run nothing");
  add_experiment_options(*validate, o);
  validate->add_option("--fabric", o.fabric, "check it for this fabric instead of the file's")
      ->check(one_of(fabric_list(), "fabric"))
      ->type_name("FABRIC");
  return *validate;
}

// "rdmasim frobnicate" or "rdmasim --frobnicate": said plainly, where
// CLI11 would say that a subcommand is required. False when it was.
bool known_command(int argc, const char* const* argv, std::ostream& err) {
  if (argc <= 1) return true;
  const std::string_view first = argv[1];
  const bool option = first.starts_with('-');
  if (option ? first == "-h" || first == "--help" || first == "--version"
             : first == "run" || first == "compare" || first == "validate" || first == "sweep" ||
                   first == "report")
    return true;
  const std::string guess =
      option
          ? suggestion(first, std::vector<std::string_view>{"--help", "--version"})
          : suggestion(first, std::vector<std::string_view>{"run", "compare", "validate", "sweep", "report"});
  err << "rdmasim: unknown " << (option ? "option" : "command") << " '" << first << "'" << guess
      << " (expected run, compare, sweep, report or validate)\nRun 'rdmasim --help' for usage.\n";
  return false;
}

// The first option a command was given that it does not have ("--sed" for
// "--set"), named with the one meant and the command's options; empty when
// nothing the user typed looks like an option (CLI11's own message then).
std::string unknown_option_message(const CLI::App& app) {
  for (const CLI::App* cmd : app.get_subcommands()) {
    for (const std::string& arg : cmd->remaining()) {
      if (!arg.starts_with('-') || arg == "-") continue;
      const std::string typed = arg.substr(0, arg.find('='));
      std::vector<std::string> names;
      for (const CLI::Option* opt : cmd->get_options()) {
        for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
        for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
      }
      return "unknown option '" + typed + "' for 'rdmasim " + cmd->get_name() + "'" +
             suggestion(typed, names) + "; its options are " + join(names, ", ");
    }
  }
  return {};
}

}  // namespace

int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  Options o;
  CLI::App app{"rdmasim: a packet-level emulator of RDMA networks (InfiniBand, RoCE v1, RoCE v2, iWARP)",
               "rdmasim"};
  app.set_version_flag("--version", "rdmasim " + std::string(kVersion));
  app.footer(
      "Run 'rdmasim COMMAND --help' for a command's options, 'man rdmasim' for the manual once installed.\n"
      "Exit status: 0 done; 2 bad input (file:line:column: message; nothing run) or out of memory;\n"
      "3 output not written; 4 operations failed that the experiment did not ask for; 1 an internal error;\n"
      "128+N signal N.\n"
      "Example: rdmasim run examples/quickstart.yaml, then rdmasim compare examples/quickstart.yaml");
  app.require_subcommand(1);
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    std::string message = dynamic_cast<const CLI::ExtrasError*>(&e) ? unknown_option_message(*a) : "";
    if (message.empty()) message = e.what();
    return "rdmasim: " + message + "\nRun 'rdmasim --help' for usage.\n";
  });
  const CLI::App& run = add_run(app, o);
  const CLI::App& compare = add_compare(app, o);
  const CLI::App& report = add_report(app, o);
  const CLI::App& sweep = add_sweep(app, o);
  add_validate(app, o);
  if (!known_command(argc, argv, err)) return kExitBadInput;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e, out, err);  // prints help, version or the error
    return code == 0 ? kExitOk : kExitBadInput;
  }
  if (Cluster::get().parallel() && !run) {
    if (Cluster::get().rank() == 0) err << "rdmasim: only 'rdmasim run' runs over several ranks (mpirun)\n";
    return kExitBadInput;
  }
  try {
    if (run) return do_run(o, out, err);
    if (compare) return do_compare(o, out, err);
    if (sweep) return do_sweep(o, out, err);
    if (report) return do_report(o, out, err);
    return do_validate(o, out, err);
  } catch (const std::bad_alloc&) {
    err << out_of_memory_message() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << "internal error: " << e.what() << "\n";
  } catch (...) {
    err << "internal error: unknown exception\n";
  }
  return kExitInternal;
}

}  // namespace rdmasim
