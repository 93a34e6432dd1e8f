#include "workloads/compute/compute_job.hpp"

#include <algorithm>

namespace rdmasim {

ComputeJob::ComputeJob(Simulator& sim, Host& host, const WorkloadConfig& w)
    : sim_(sim), host_(host), w_(w), process_(host.spawn(w.name, Process::Kind::compute)) {}

Task ComputeJob::body() {
  co_await sleep_until(sim_, w_.start);
  started_ = sim_.now();
  while (done_ < w_.work) {
    const Time chunk = std::min(w_.chunk, w_.work - done_);
    co_await host_.cpu().run(process_, CpuUse::user, chunk);
    done_ += chunk;
    ended_ = sim_.now();
  }
  if (ended_ < started_) ended_ = started_;
  finished_ = true;
}

}  // namespace rdmasim
