#include "apps/runner.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "apps/cli.hpp"
#include "apps/run_extensions.hpp"
#include "core/errors.hpp"
#include "experiment/loader.hpp"
#include "fabrics/fabric.hpp"
#include "fabrics/network.hpp"
#include "programs/programs_extension.hpp"
#include "workloads/workload.hpp"

using namespace rdmasim;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kTiny = R"(
name: tiny
fabric: roce_v2
topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}
workloads:
  - {name: w, kind: send, from: a, to: b, size: 2KiB, count: 3}
capture: {pcap: hosts, latency_samples: true}
)";

ExperimentConfig tiny(const std::vector<SetOverride>& sets = {}) {
  LoadResult r = load_experiment_text(kTiny, "tiny.yaml", sets);
  for (const LoadError& e : r.errors) FAIL(e.format());
  REQUIRE(r.config);
  return *r.config;
}

// An empty folder of its own, removed when the test ends.
struct Scratch {
  fs::path dir;
  explicit Scratch(const std::string& name)
      : dir(fs::temp_directory_path() / ("rdmasim-runner-test-" + std::to_string(getpid()) + "-" + name)) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
  size_t files() const {
    return static_cast<size_t>(std::distance(fs::recursive_directory_iterator(dir), {}));
  }
};

std::string read(const fs::path& f) {
  std::ifstream in(f);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("Run: each step does its part, and only write_outputs writes results.json") {
  const ExperimentConfig cfg = tiny();
  Scratch scratch("steps");
  Run run(cfg, scratch.dir);
  run.build_network();
  CHECK(run.network().hosts.size() == 2);
  CHECK(run.network().nodes.size() == 3);
  CHECK(scratch.files() == 0);
  run.attach_captures();
  CHECK(fs::exists(scratch.dir / "pcap" / "a-0.pcap"));
  CHECK(fs::exists(scratch.dir / "pcap" / "b-0.pcap"));
  CHECK_FALSE(fs::exists(scratch.dir / "pcap" / "s1-0.pcap"));  // capture: hosts
  run.attach_workloads();
  run.start();
  CHECK(run.network().sim.pending() > 0);
  run.run();
  CHECK(std::string(run.end().reason) == "idle");
  CHECK(run.network().sim.now() > Time{});
  run.finish();
  const json results = run.collect();
  CHECK(results["experiment"] == "tiny");
  CHECK(results["end"]["reason"] == "idle");
  CHECK(results["workloads"][0]["completions"]["IBV_WC_SUCCESS"] == 3);
  CHECK(results["workloads"][0]["data_verified"] == true);
  CHECK(results.contains("cost"));
  CHECK_FALSE(fs::exists(scratch.dir / "results.json"));
  run.write_outputs(results);
  // The file is the results with the port table, written from the
  // network, and the host table, from the records collect() kept.
  CHECK_FALSE(results.contains("hosts"));
  json written = json::parse(read(scratch.dir / "results.json"));
  CHECK(read(scratch.dir / "results.json") == written.dump(2) + "\n");
  CHECK(written["ports"].size() == 4);  // a, b and the switch's two
  CHECK(written["ports"][0]["tx_frames"].get<uint64_t>() > 0);
  CHECK(written["hosts"].size() == 2);
  CHECK(written["hosts"][1]["name"] == "b");
  CHECK(written["hosts"][1]["nic_frames_received"].get<uint64_t>() > 0);
  written.erase("ports");
  written.erase("hosts");
  CHECK(written == results);
  for (const char* f : {"workloads.csv", "ports.csv", "hosts.csv", "bom.csv", "latency.csv"})
    CHECK_MESSAGE(fs::exists(scratch.dir / f), f);
  CHECK_FALSE(fs::exists(scratch.dir / "flows.csv"));  // no flows workload
  CHECK_FALSE(fs::exists(scratch.dir / "parallel.json"));
}

TEST_CASE("Run: execute() takes the steps in order, with the same results and files") {
  const ExperimentConfig cfg = tiny();
  Scratch by_steps("by-steps"), whole("whole");
  Run a(cfg, by_steps.dir);
  a.build_network();
  a.attach_captures();
  a.attach_workloads();
  a.start();
  a.run();
  a.finish();
  json stepped = a.collect();
  a.write_outputs(stepped);
  json executed = Run(cfg, whole.dir).execute();
  // execute() adds the host table once the network is gone: the file's.
  CHECK(executed["hosts"] == json::parse(read(whole.dir / "results.json"))["hosts"]);
  executed.erase("hosts");
  CHECK(stepped == executed);
  for (const auto& e : fs::recursive_directory_iterator(by_steps.dir)) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = fs::relative(e.path(), by_steps.dir);
    CHECK_MESSAGE(read(e.path()) == read(whole.dir / rel), rel.string());
  }
  CHECK(by_steps.files() == whole.files());
}

TEST_CASE("Run: a stop time ends the run as `stop`; a run given up half-way is torn down cleanly") {
  Scratch scratch("stop");
  const ExperimentConfig cfg = tiny({"stop=2us", "workloads.0.count=1000"});
  {
    Run run(cfg, scratch.dir);
    run.build_network();
    run.attach_captures();
    run.attach_workloads();
    run.start();
    run.run();
    CHECK(std::string(run.end().reason) == "stop");
    CHECK(run.network().sim.now() <= Time::us(2));
    // Destroyed with events still pending and no outputs written.
  }
  const json results = Run(cfg, scratch.dir).execute();
  CHECK(results["end"]["reason"] == "stop");
  CHECK(results["workloads"][0]["finished"] == false);
}

TEST_CASE("Run: an experiment the load step refuses writes nothing") {
  Scratch scratch("refused");
  const fs::path file = scratch.dir / "tiny.yaml", out = scratch.dir / "out";
  std::ofstream(file) << kTiny;
  std::vector<std::string> args{"rdmasim",        "run", file.string(), "--out", out.string(),
                                "--memory-limit", "1KiB"};
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream sout, serr;
  CHECK(cli_main(static_cast<int>(argv.size()), argv.data(), sout, serr) == kExitBadInput);
  CHECK(serr.str().find("memory") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  // The same experiment, within the limit, writes its output.
  args[6] = "1GiB";
  argv.clear();
  for (const auto& a : args) argv.push_back(a.c_str());
  serr.str("");
  CHECK(cli_main(static_cast<int>(argv.size()), argv.data(), sout, serr) == kExitOk);
  CAPTURE(serr.str());
  CHECK(fs::exists(out / "results.json"));
}

TEST_CASE("run extensions: programs take part only when listed, and never in a split run") {
  ExperimentConfig cfg = tiny();
  Network net(cfg);
  BuiltFabric fabric{};
  WorkloadEnv env{net.sim, cfg, nullptr, nullptr, nullptr, 4096, nullptr, nullptr, 0, nullptr};
  const fs::path dir = fs::temp_directory_path();
  CHECK(programs_extension(RunContext{cfg, net, fabric, env, dir, false}) == nullptr);
  CHECK(make_run_extensions(RunContext{cfg, net, fabric, env, dir, false}).empty());
  cfg.programs.emplace_back();
  CHECK_THROWS_AS(programs_extension(RunContext{cfg, net, fabric, env, dir, true}), InputError);
  // What the command line says of a run's programs comes through the registry.
  CHECK(run_features_summary(json::object()).empty());
  CHECK(run_features_failure(json::object()).empty());
}
