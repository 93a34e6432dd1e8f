// What the nvme workloads of a run share: the targets of `storage:` (made
// when a job first names one) and the hosts' RDMA connection managers
// (none where the fabric has no GSI QP: iWARP, whose connection set-up is
// its MPA exchange).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "workloads/nvme/rdma_cm.hpp"
#include "workloads/nvme/target.hpp"

namespace rdmasim {
struct WorkloadEnv;
}

namespace rdmasim::nvme {

class StorageRun {
 public:
  explicit StorageRun(WorkloadEnv& env);
  ~StorageRun();
  NvmeTarget& target(const std::string& host);
  CmDirectory* cm() { return cm_.get(); }
  const std::map<std::string, std::unique_ptr<NvmeTarget>>& targets() const { return targets_; }

 private:
  WorkloadEnv& env_;
  std::unique_ptr<CmDirectory> cm_;
  bool probed_ = false;
  std::map<std::string, std::unique_ptr<NvmeTarget>> targets_;
};

// The run's, made on first use (WorkloadEnv::storage).
StorageRun& storage_of(WorkloadEnv& env);

}  // namespace rdmasim::nvme
