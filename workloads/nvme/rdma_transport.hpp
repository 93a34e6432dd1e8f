// NVMe-oF's RDMA transport binding (NVMe-oF 1.1, 7.3), as Linux's nvme-rdma
// host and an nvmet-rdma or SPDK target use it. Each queue is an RC QP,
// connected through the RDMA CM (rdma_cm.hpp: a CM REQ, REP and RTU on QP1
// with NVMe-oF's private data) on IB and RoCE, directly on iWARP (its MPA
// exchange). A command capsule is a SEND (a write's data in it when it fits
// the target's in-capsule size, else a keyed SGL to the host's buffer); the
// target reads a write's data with RDMA READ and writes a read's with RDMA
// WRITE, then SENDs the completion capsule. A host's command is over when
// both its SEND has completed and its response has come (as nvme-rdma's
// request is). A queue torn down is disconnected through the CM (a DREQ,
// answered by a DREP); a DREQ from the other side is the queue's end. On
// iWARP the QP's connection is its TCP connection: the QP to the error state
// closes it (a FIN), and the other side's close is the queue's end
// (verbs::QueuePair::on_connection_closed).
//
// The target's CPU: `cores` pollers, each with a completion queue its
// queues share (SPDK's poll groups, round robin), busy-polling; or, with
// cpu: interrupt, handlers woken by the completion queue's interrupt (the
// kernel target in softirq).
#pragma once

#include <memory>
#include <vector>

#include "workloads/nvme/initiator.hpp"
#include "workloads/nvme/rdma_cm.hpp"
#include "workloads/nvme/target.hpp"
#include "workloads/nvme/wire/cm_private.hpp"

namespace rdmasim::nvme {

class RdmaTargetPort final : public TargetPort {
 public:
  // `cm`: the hosts' connection managers (IBA fabrics); null where queues
  // are connected directly (iWARP: the host's accept()).
  RdmaTargetPort(NvmeTarget& t, CmDirectory* cm);
  ~RdmaTargetPort() override;

  // A host's connection for `req` (an RC QP in INIT with receives posted).
  TargetQueue& accept(Host& from, const CmRequest& req);
  verbs::QueuePair& qp_of(const TargetQueue& q) const;
  uint32_t psn_of(const TargetQueue& q) const;  // its starting PSN
  // The host disconnected the queue whose QP is `qp_num`
  // (RDMA_CM_EVENT_DISCONNECTED): its QP goes to the error state, what it
  // holds flushed (nvmet_rdma_queue_disconnect).
  void release(uint32_t qp_num);

  void fetch(TargetQueue& q, TargetCmd& c) override;
  bool send_data(TargetQueue& q, TargetCmd& c) override;
  void send_completion(TargetQueue& q, TargetCmd& c, std::span<const std::byte> cqe) override;
  void owe(TargetQueue& q, Time t) override;
  bool moves(const Sgl& sgl) const override { return sgl.keyed; }
  void prepare_buffer(TargetCmd& c) override;
  void disconnect(TargetQueue& q) override;

 private:
  struct Poller;
  struct Queue;
  Task poll(Poller& p);
  Task wait(Poller& p);
  void handle(const ibv_wc& wc);
  void post_recv(TargetQueue& q, uint32_t slot);
  void on_capsule(TargetQueue& q, uint32_t slot, uint32_t len);
  bool post_rdma(TargetQueue& q, TargetCmd& c, bool read);
  static Queue& rq(const TargetQueue& q);

  NvmeTarget& t_;
  Host& host_;
  CmDirectory* cm_;
  verbs::ProtectionDomain* pd_ = nullptr;
  std::vector<std::unique_ptr<Poller>> pollers_;
  size_t next_poller_ = 0;
};

std::unique_ptr<HostQueue> make_rdma_host_queue(WorkloadEnv& env, const HostQueueSpec& spec, Host& host,
                                                NvmeTarget& target, CmDirectory* cm,
                                                verbs::ProtectionDomain& pd, uint64_t seed);

}  // namespace rdmasim::nvme
