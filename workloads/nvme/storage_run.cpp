#include "workloads/nvme/storage_run.hpp"

#include <stdexcept>

#include "workloads/workload.hpp"

namespace rdmasim::nvme {

StorageRun::StorageRun(WorkloadEnv& env) : env_(env) {}
StorageRun::~StorageRun() = default;

NvmeTarget& StorageRun::target(const std::string& host) {
  auto it = targets_.find(host);
  if (it != targets_.end()) return *it->second;
  const StorageTargetConfig* c = env_.cfg.storage.target(host);
  Host* h = env_.host(host);
  if (!c || !h) throw std::logic_error("nvme: no storage target on " + host);
  if (!probed_) {
    probed_ = true;
    // The connection managers talk over the GSI QP; a fabric without UD has none.
    if (CmDirectory::supported(*h)) {
      cm_ = std::make_unique<CmDirectory>(env_);
      for (const std::string& name : env_.cfg.topology.hosts)
        if (Host* x = env_.host(name)) cm_->add_host(*x);
    }
  }
  const uint64_t seed = Rng::stream(env_.cfg.seed, "nvme target " + host).next();
  return *targets_.emplace(host, std::make_unique<NvmeTarget>(env_, *h, *c, cm_.get(), seed)).first->second;
}

StorageRun& storage_of(WorkloadEnv& env) {
  if (!env.storage) env.storage = std::make_shared<StorageRun>(env);
  return *env.storage;
}

}  // namespace rdmasim::nvme
