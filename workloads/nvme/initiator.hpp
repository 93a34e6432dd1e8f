// The host side of an nvme workload, as fio with the io_uring or libaio
// engine drives Linux's nvme-rdma: one controller on the target (the admin
// queue: Connect, then CC.EN set and CSTS.RDY read, NVMe-oF 1.1, 3.5), one
// I/O queue per job (numjobs), each an RC QP connected through the RDMA CM
// with NVMe-oF's private data, then a Connect on it. Each job keeps
// `iodepth` commands in flight: a command capsule SENT (with the write's
// data in the capsule when it fits the target's in-capsule size, else a
// keyed SGL to the job's buffer), the target's RDMA WRITE or READ, and the
// completion capsule back. A command completes when both its SEND has
// completed and its response has come (as nvme-rdma's request does).
//
// Statistics in fio's terms: slat (issuing a command: building it and
// posting the SEND), clat (from then until the host program has the
// completion), lat (both); I/O completing before ramp_time is not counted.
// Data: every block written carries its LBA and a generation (block_pattern.hpp);
// every block read must carry one its LBA could hold then.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/random.hpp"
#include "core/task.hpp"
#include "nodes/host/host.hpp"
#include "topologies/storage_config.hpp"
#include "workloads/nvme/target.hpp"

namespace rdmasim {
struct WorkloadEnv;
}

namespace rdmasim::nvme {

// One direction's numbers (fio's read or write object).
struct DirStats {
  uint64_t ios = 0, bytes = 0;
  std::vector<int64_t> slat, clat, lat;  // ps, one per I/O
};

struct NvmeResult {
  DirStats read, write;
  Time measure_start, measure_end;  // the counted window: ramp end to the last counted completion
  uint64_t errors = 0;              // completions with an error status, failed work requests
  uint64_t bad_blocks = 0;          // blocks read that held no stamp their LBA could hold
  bool data_verified = true;
  bool finished = false;
  Time initiator_cpu, target_cpu;  // CPU time the hosts spent in the run (whole hosts)
};

class NvmeJob {
 public:
  NvmeJob(WorkloadEnv& env, std::string name, const NvmeJobConfig& c, Host& initiator, NvmeTarget& target,
          CmDirectory* cm, uint64_t seed);
  ~NvmeJob();
  void start();
  bool finished() const { return running_ == 0 && started_; }
  NvmeResult result() const;
  const NvmeJobConfig& config() const { return c_; }
  const std::string& name() const { return name_; }

  // One I/O as nvme.csv lists it.
  struct IoRecord {
    uint32_t job;
    bool write;
    uint64_t lba;
    uint32_t blocks;
    int64_t submit_ps, complete_ps;
    uint16_t status;
  };
  // Keeps a record of every I/O from now on (nvme.csv).
  void record_ios() { recording_ = true; }
  const std::vector<IoRecord>& records() const { return records_; }

 private:
  struct Queue;
  struct Slot;
  Task controller();
  Task connect(Queue& q);
  Task admin(Queue& q, Command cmd, Completion& out, std::span<const std::byte> data = {});
  Task io(Queue& q);
  void make_queue(Queue& q, uint16_t qid, uint32_t entries, uint32_t data_slots, uint64_t slot_bytes);
  void post_recv(Queue& q, uint32_t slot);
  int post_command(Queue& q, const Command& cmd, std::span<const std::byte> capsule_data, uint64_t data_addr);
  void complete(Queue& q, Slot& s);

  WorkloadEnv& env_;
  std::string name_;
  NvmeJobConfig c_;
  Host& host_;
  NvmeTarget& target_;
  CmDirectory* cm_;
  Namespace* ns_;
  uint64_t seed_;
  std::vector<std::unique_ptr<Queue>> queues_;  // [0]: admin; then one a job
  verbs::ProtectionDomain* pd_ = nullptr;
  uint16_t cntlid_ = 0;
  Time io_start_;
  int running_ = 0;
  bool started_ = false;
  bool failed_ = false;
  NvmeResult r_;
  bool recording_ = false;
  std::vector<IoRecord> records_;
};

}  // namespace rdmasim::nvme
