// A workload kind: what `kind: NAME` in `workloads:` means, from the keys it
// reads to the statistics it writes. Each kind is a class in its own folder
// (workloads/<kind>/) and one line in workloads/registry.cpp, as a fabric is;
// the loader, the validate pass, the memory estimate, the run and a split
// run's partition ask the kind, never its name (docs/architecture.md, "How
// to add a workload kind").
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/config.hpp"
#include "topologies/key_spec.hpp"

namespace rdmasim {

struct ExperimentDraft;  // topologies/experiment_draft.hpp
class Fields;            // topologies/yaml_reader.hpp
struct Entry;
struct WorkloadEnv;  // workloads/workload.hpp
struct FlowStats;
class WorkloadRun;

// What a kind's workload adds to the memory estimate (experiment/memory_estimate.hpp).
struct WorkloadMemory {
  uint64_t connections = 0;   // QP pairs (a connection each)
  uint64_t buffer_bytes = 0;  // message buffers its ends commit
  std::string buffers;        // what those are, for the estimate's detail: "of flows", "of 4KiB messages"
  uint64_t flows = 0;         // flows of `kind: flows` started (each its record and programs beyond its QPs)
  double sending = 0;         // senders' worth of frames it keeps in the network while it sends
  // Connections with messages posted at once, and the bytes each keeps
  // posted (what a byte stream's send buffer holds: MemoryCosts::stream_buffer_limit).
  double posting = 0;
  uint64_t posted_per_connection = 0;
};

class Workload {
 public:
  virtual ~Workload() = default;

  // ---- reading (the loader, experiment/sections/workloads.cpp) ----

  // The `kind:` values this class takes (the verbs class takes every
  // operation, pattern and perftest kind).
  virtual std::vector<std::string_view> names() const = 0;
  // Its keys beyond `name` and `kind`, each declared once as a row of its
  // table (topologies/key_table.hpp, named "workloads.<first name>"): the
  // loader allows the union of every kind's, says which kinds take a key
  // another kind was given, docs/yaml.md lists them, and `read` reads
  // them with it.
  virtual const KeyTableBase& keys() const = 0;
  // Reads its keys of `f` into `w` (name, kind_name, kind, line and column
  // are filled), reporting errors through `d.c`: its table's rows, then
  // what needs more than one key (checks across keys, defaults that depend
  // on the kind or the fabric). `kind` is the `kind:` entry, for errors
  // about the kind as a whole. False: `w` is unusable.
  virtual bool read(ExperimentDraft& d, const Fields& f, WorkloadConfig& w, const Entry& kind) const = 0;
  // The validate pass, once every section is read, for the workload
  // d.workloads_read[read] (read without error).
  virtual void validate(ExperimentDraft& d, size_t read) const;

  // ---- before building (the memory estimate, a split run's partition) ----

  virtual WorkloadMemory memory(const ExperimentConfig& x, const WorkloadConfig& w) const = 0;
  // May its ends be on different ranks of a split run (docs/parallel.md)?
  virtual bool spans_ranks(const WorkloadConfig& w, const ExperimentConfig& x) const;

  // ---- the run (apps/runner.cpp) ----

  // Its run on a built network; nothing starts before WorkloadRun::start.
  virtual std::unique_ptr<WorkloadRun> attach(WorkloadEnv& env, const WorkloadConfig& w,
                                              uint64_t seed) const = 0;
  // Its entry in results.json beyond `name` and `kind`, from its statistics.
  virtual void results(const ExperimentConfig& x, const WorkloadConfig& w, const FlowStats& s,
                       nlohmann::json& j) const = 0;
  // Are s.latency_ps samples latency.csv lists (capture.latency_samples)?
  virtual bool latency_samples() const { return false; }
  // Does `compare` run it on every fabric unless told otherwise, the
  // non-RDMA baseline (tcp) too? kind: nvme: storage is RDMA against NVMe/TCP.
  virtual bool compared_on_every_fabric() const { return false; }
  // Files of its own beside results.json (kind: nvme: fio.json, nvme.csv),
  // by name, once per run on the rank that writes the outputs: `workloads`
  // is results.json's list (merged over ranks), `runs` this kind's runs here
  // in order, `end` the time the run ended. None by default.
  virtual std::map<std::string, std::string> outputs(const ExperimentConfig& x,
                                                     const nlohmann::json& workloads,
                                                     const std::vector<const WorkloadRun*>& runs,
                                                     Time end) const;
};

}  // namespace rdmasim
