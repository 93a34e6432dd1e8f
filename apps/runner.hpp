// One run of an experiment, in named steps (docs/architecture.md, "The
// life of a run"): build the network, attach captures and workloads, start
// them, run the engine, finish, collect the results, write the outputs.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apps/csv.hpp"
#include "apps/progress.hpp"
#include "core/units.hpp"
#include "parallel/partition.hpp"

namespace rdmasim {

struct ExperimentConfig;
struct ExperimentPricing;
struct Network;
struct BuiltFabric;
struct CpuSegment;
struct WorkloadEnv;
class WorkloadRun;
class CaptureSet;
class ParallelRun;
class SpanningFlows;
class SpanningPairs;
class PfcDeadlockFinder;
class TimeSeries;
class RunExtension;

struct RunOptions {
  // Where to show a progress line (apps/progress.hpp); it does not change the run.
  ProgressOptions progress;
  // Split over mpirun's ranks this way (parallel/partition.hpp), when
  // there is more than one; nothing: one process.
  std::optional<PartitionMode> split;
};

// How a run ended (results.json "end").
struct RunEnd {
  // idle: nothing left to do; stop: the `stop` time; done: the workloads had
  // finished and only timers were left; stalled: ... and frames still flowed.
  const char* reason = "idle";
  Time workloads_done = Time::max();  // when every workload had finished, if it came to that
  std::vector<std::string> pausing;   // stalled: ports that sent or received PFC PAUSE frames meanwhile
};

// Runs `cfg` and writes its outputs into `dir`, which exists: results.json
// and its tables (workloads.csv, ports.csv, hosts.csv, bom.csv), the
// captures under pcap/, and what the experiment asks for beside them.
// A step throws InputError for a connect-time failure the YAML could not
// show, OutputError when an output cannot be written, and anything else
// for an internal failure (core/errors.hpp); what it had written is the
// caller's to discard (apps/output_dir.hpp's StagedDir).
//
// Split over ranks (Cluster, started by mpirun), every rank makes its Run
// and takes every step: each simulates its part of the network and writes
// the captures of its nodes; rank 0 collects the results of all (the same
// as one process gives) and writes the rest, with parallel.json (what the
// synchronisation cost each rank, docs/parallel.md); the others collect null.
class Run {
 public:
  Run(const ExperimentConfig& cfg, std::filesystem::path dir, RunOptions options = {});
  ~Run();  // kills what still waits on the engine first (programs, coroutines)
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  // Every step, in order; returns results.json's content (null on ranks but
  // 0), but for the port table of a run in one process, which went to
  // results.json and ports.csv straight from the network ("drops" sums it).
  // In one process the network is gone when it returns (the host table is
  // made after it, so as not to add to the run's peak memory).
  nlohmann::json execute();

  // The steps, in the order execute() takes them; each needs those before it.
  void build_network();      // hosts, switches and links; split over ranks first
  void attach_captures();    // capture points, CPU timelines, faults
  void attach_workloads();   // workloads, the ranks they run on, run extensions
  void start();              // workloads, then extensions, start
  void run();                // the engine, until done, stopped or stalled, with progress
  void finish();             // extensions end; time series, captures, CPU traces written
  nlohmann::json collect();  // results.json's content
  void write_outputs(const nlohmann::json& results);  // results.json and the files beside it
  // The ports' counters, as results.json lists them (a split run's added up).
  RecordSource port_records() const;
  // The hosts' records of a run in one process, once collected (a split
  // run's are in collect()'s content, merged from the ranks).
  RecordSource host_records() const;

  const Network& network() const { return *net_; }
  const RunEnd& end() const { return end_; }
  // Split: what the synchronisation cost each rank (parallel.json), on rank 0 once collected.
  const nlohmann::json* parallel_stats() const { return parallel_stats_.get(); }

 private:
  template <typename Step>
  void together(Step&& step);
  void advance(Time t, std::optional<ProgressLine>& line);
  uint64_t run_through(Time t, std::optional<ProgressLine>& line);
  bool all_finished();
  std::vector<uint64_t> port_counts();
  void drained(const std::vector<uint64_t>& seen);
  void make_env();
  void assign_ranks();
  nlohmann::json workloads_json();
  void add_budgets(nlohmann::json& out) const;
  void release();  // resets the members below from net_ to merged_ports_: a new one goes there too
  void keep_host_records();

  const ExperimentConfig& cfg_;
  std::filesystem::path dir_;
  RunOptions options_;
  std::unique_ptr<const ExperimentPricing> pricing_;  // made before the network
  std::unique_ptr<Network> net_;
  std::unique_ptr<ParallelRun> par_;  // split over ranks
  std::unique_ptr<BuiltFabric> fabric_;
  std::unique_ptr<CaptureSet> captures_;
  std::vector<std::vector<CpuSegment>> traces_;  // by host, when capture.cpu_trace
  std::unique_ptr<WorkloadEnv> env_;
  std::vector<std::unique_ptr<WorkloadRun>> runs_;
  // The rank that runs each workload; whether this one does; whether its ends are on several.
  std::vector<int> workload_rank_;
  std::vector<bool> runs_here_, spans_;
  std::unique_ptr<SpanningFlows> spanning_;
  std::unique_ptr<SpanningPairs> pairs_;
  std::vector<std::unique_ptr<RunExtension>> extensions_;
  std::unique_ptr<TimeSeries> series_;
  std::unique_ptr<PfcDeadlockFinder> deadlocks_;
  std::function<void()> check_;  // after every slice of the run
  RunEnd end_;
  std::vector<std::string> flows_csv_, latency_csv_;  // by workload
  std::unique_ptr<nlohmann::json> parallel_stats_;
  // A split run's port counters, added up across ranks (runner.cpp's
  // merged_port_counters); empty in one process.
  std::vector<uint64_t> merged_ports_;
  // In one process, each host's record of results.json's `hosts` as
  // compact JSON text (about 256 bytes), from collect() on: JSON objects
  // are several times that, for 65,536 hosts at k = 64.
  std::vector<std::string> host_text_;
};

}  // namespace rdmasim
