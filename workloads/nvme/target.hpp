// An NVMe over Fabrics target on a host (NVMe-oF 1.1, RDMA transport,
// 7.3): it listens for RDMA CM connections on port 4420 (the admin queue
// and each I/O queue an RC QP), takes command capsules as SENDs, moves a
// command's data with RDMA WRITE (reads) and RDMA READ (writes, unless the
// data came in the capsule) through the keyed SGL the host gave, serves
// the I/O with its namespaces' SSD model, and answers with a completion
// capsule SENT back. Its CPU: `cores` pollers busy-polling their
// completion queues (SPDK-style), or handlers woken by interrupts (the
// kernel target); each command costs `io_cost` of the core's time.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/task.hpp"
#include "nodes/host/host.hpp"
#include "topologies/storage_config.hpp"
#include "workloads/nvme/rdma_cm.hpp"
#include "workloads/nvme/ssd.hpp"
#include "workloads/nvme/wire/cm_private.hpp"
#include "workloads/nvme/wire/command.hpp"
#include "workloads/nvme/wire/completion.hpp"

namespace rdmasim {
struct WorkloadEnv;
}

namespace rdmasim::nvme {

inline constexpr uint16_t kNvmePort = 4420;  // IANA: NVMe over Fabrics (RDMA service port and NVMe/TCP)

// A namespace's blocks: the generation each holds, and what hosts have
// asked for, against which reads are checked.
struct Namespace {
  NamespaceConfig cfg;
  uint64_t blocks = 0;
  std::unordered_map<uint64_t, uint32_t> stored;     // generation the target holds per LBA (absent: 0)
  std::unordered_map<uint64_t, uint32_t> issued;     // highest generation a write of it was issued with
  std::unordered_map<uint64_t, uint32_t> committed;  // highest generation whose write completed
  uint64_t bad_blocks = 0;  // blocks a write brought that did not carry the stamp its command named
  static uint32_t get(const std::unordered_map<uint64_t, uint32_t>& m, uint64_t lba) {
    auto it = m.find(lba);
    return it == m.end() ? 0 : it->second;
  }
};

class NvmeTarget {
 public:
  // `cm`: the hosts' connection managers (IBA fabrics); null where queues
  // are connected directly (iWARP: connect_direct()).
  NvmeTarget(WorkloadEnv& env, Host& h, const StorageTargetConfig& c, CmDirectory* cm, uint64_t seed);
  ~NvmeTarget();
  Host& host() const { return host_; }
  const StorageTargetConfig& config() const { return c_; }
  Namespace* ns(uint32_t nsid);
  // Where capsules may carry data: the admin queue takes none.
  uint32_t inline_data_size(uint16_t qid) const { return qid ? c_.inline_data_size : 0; }

  struct Queue;
  // A host's connection for `req` (an RC QP in INIT with receives posted).
  Queue& accept(Host& from, const CmRequest& req);
  verbs::QueuePair& qp_of(const Queue& q) const;
  // Its starting PSN.
  uint32_t psn_of(const Queue& q) const;

  struct Stats {
    uint64_t commands = 0, reads = 0, writes = 0, errors = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Poller;
  struct Cmd;
  Task poll(Poller& p);
  Task wait(Poller& p);
  void handle(Poller& p, const ibv_wc& wc);
  void on_command(Queue& q, uint32_t slot, uint32_t len);
  void execute(Queue& q, Cmd& c);
  void finish_connect(Queue& q, Cmd& c, std::span<const std::byte> data);
  void data_arrived(Queue& q, Cmd& c);
  void serve(Queue& q, Cmd& c);
  void respond(Queue& q, Cmd& c, Status s, uint32_t dw0 = 0, uint32_t dw1 = 0, uint8_t sct = 0);
  void post_recv(Queue& q, uint32_t slot);
  uint64_t bounce(Queue& q, Cmd& c, uint64_t len);
  Time io_cost() const;

  WorkloadEnv& env_;
  Host& host_;
  StorageTargetConfig c_;
  CmDirectory* cm_;
  Rng rng_;
  std::unique_ptr<Ssd> ssd_;
  std::vector<std::unique_ptr<Namespace>> namespaces_;
  std::vector<std::unique_ptr<Poller>> pollers_;
  std::vector<std::unique_ptr<Queue>> queues_;
  verbs::ProtectionDomain* pd_ = nullptr;
  uint16_t next_cntlid_ = 1;
  size_t next_poller_ = 0;
  Stats stats_;
};

}  // namespace rdmasim::nvme
