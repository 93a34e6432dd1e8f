// kind: compute: a process on one host needing CPU time, no I/O
// (compute_job.hpp), which competes for its core with what the host's
// stack and programs run there.
#include <nlohmann/json.hpp>

#include "topologies/key_table.hpp"
#include "workloads/compute/compute_job.hpp"
#include "workloads/workload.hpp"
#include "workloads/workload_kind.hpp"
#include "workloads/workload_reader.hpp"

namespace rdmasim {

namespace {

const KeyTable<WorkloadConfig>& compute_keys() {
  using namespace keys;
  using W = WorkloadConfig;
  static const KeyTable<W> t{
      "workloads.compute",
      "a workload",
      {
          declared<W>("on", "host name", "", "the host it runs on; required"),
          required(key("work", &W::work, positive_time(), "", "CPU time it needs"),
                   "the CPU time it needs, such as 500us"),
          key("chunk", &W::chunk,
              time_from(kShortestTimer,
                        "the core takes turns every chunk; Linux's CFS "
                        "gives at least 0.75 ms"),
              "10us", "it runs this long, then lets another compute process on its core run"),
          key("start", &W::start, time(), "0", "when it starts"),
      }};
  return t;
}

class Run final : public WorkloadRun {
 public:
  Run(WorkloadEnv& env, const WorkloadConfig& w) : WorkloadRun(w), env_(env) {}
  void start() override {
    Host* h = env_.host(w_.from.at(0));
    if (!h) throw std::logic_error("workload names an unknown host");
    job_ = std::make_unique<ComputeJob>(env_.sim, *h, w_);
    job_->start();
  }
  bool finished() const override { return job_->finished(); }
  FlowStats result() const override {
    FlowStats all;
    all.start = job_->started();
    all.end = job_->ended();
    all.work_done = job_->work_done();
    all.finished = job_->finished();
    return all;
  }

 private:
  WorkloadEnv& env_;
  std::unique_ptr<ComputeJob> job_;
};

class ComputeWorkload final : public Workload {
 public:
  std::vector<std::string_view> names() const override { return {"compute"}; }
  const KeyTableBase& keys() const override { return compute_keys(); }

  bool read(ExperimentDraft& d, const Fields& f, WorkloadConfig& w, const Entry&) const override {
    w.kind = WorkloadKind::compute;
    if (auto on = one_host(d, f, "on")) w.from = {*on};
    compute_keys().read(d.c, f, w);
    w.op = "compute";
    return true;
  }
  WorkloadMemory memory(const ExperimentConfig&, const WorkloadConfig& w) const override {
    return {0, 0, "of " + to_string(w.size) + " messages"};
  }
  std::unique_ptr<WorkloadRun> attach(WorkloadEnv& env, const WorkloadConfig& w, uint64_t) const override {
    return std::make_unique<Run>(env, w);
  }
  void results(const ExperimentConfig&, const WorkloadConfig& w, const FlowStats& s,
               nlohmann::json& j) const override {
    j["on"] = w.from.at(0);
    j["work_ps"] = w.work.count();
    j["work_done_ps"] = s.work_done.count();
    j["start_ps"] = s.start.count();
    j["end_ps"] = s.end.count();
    j["finished"] = s.finished;
  }
};

}  // namespace

const Workload& compute_workload() {
  static const ComputeWorkload k;
  return k;
}

}  // namespace rdmasim
