// `kind: compute`: a process on a host that needs `work` of CPU time and
// takes it a `chunk` at a time (the seed's "process 2"). It shares its core
// with the host's I/O programs as nodes/host/cpu/cpu.hpp schedules them, so
// how much it gets done, and when it finishes, shows what waiting for I/O
// by polling, by interrupt or by the hybrid leaves to other work.
#pragma once

#include "core/task.hpp"
#include "core/units.hpp"
#include "nodes/host/host.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

class ComputeJob {
 public:
  ComputeJob(Simulator& sim, Host& host, const WorkloadConfig& w);

  void start() {
    Simulator::Scope as(sim_, host_.context());  // runs as its host
    body();
  }
  bool finished() const { return finished_; }
  Time work_done() const { return done_; }
  Time started() const { return started_; }
  Time ended() const { return ended_; }

 private:
  Task body();

  Simulator& sim_;
  Host& host_;
  const WorkloadConfig& w_;
  Process& process_;
  Time done_, started_, ended_;
  bool finished_ = false;
};

}  // namespace rdmasim
