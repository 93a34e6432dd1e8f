// The RDMA connection manager of a host, as Linux's rdma_cm connects an RC
// QP over an IBA fabric: CM MADs (fabrics/iba/wire/cm.hpp) sent as UD
// SENDs between the hosts' GSI QPs (QP1, Q_Key 0x80010000). The active
// side sends a REQ (the RDMA IP CM service ID of the port, the IP CM header
// and the consumer's private data), the passive side answers with a REP
// (its QP, starting PSN and private data), the active side moves its QP to
// RTS and sends an RTU, on which the passive side moves its QP to RTS
// (IBA 12.9.6, 12.9.7). Wireshark learns the queue pair from this exchange.
//
// Not modelled: MRA, REJ on the wire (a refused REQ is a model error),
// retries of lost MADs (the CM response timeout), DREQ/DREP.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/task.hpp"
#include "fabrics/iba/wire/cm.hpp"
#include "nodes/host/host.hpp"
#include "workloads/path_mtu.hpp"

namespace rdmasim {
struct WorkloadEnv;
}

namespace rdmasim::nvme {

class CmDirectory;

class CmAgent {
 public:
  CmAgent(WorkloadEnv& env, Host& h, CmDirectory& dir, uint32_t index);
  ~CmAgent();
  Host& host() const { return host_; }

  // A REQ that came for a port we listen on.
  struct Incoming {
    Host* from = nullptr;
    CmReq req;
    std::span<const std::byte> consumer;  // the private data after the IP CM header (56 bytes)
  };
  // The listener's answer: its QP (in INIT, or RESET), its starting PSN, the
  // REP's private data, and what to call when the RTU comes (its QP is in RTS).
  struct Accepted {
    verbs::QueuePair* qp = nullptr;
    uint32_t psn = 0;
    std::vector<std::byte> private_data;
    std::function<void()> established;
  };
  using Listener = std::function<Accepted(const Incoming&)>;
  void listen(uint16_t port, Listener f) { listeners_[port] = std::move(f); }

  // Connects `qp` (an RC QP in RESET or INIT, starting PSN `psn`) to the
  // listener on `to`'s `port`; `done` is called with the REP once the QP is
  // in RTS and the RTU is on its way.
  void connect(verbs::QueuePair& qp, uint32_t psn, Host& to, uint16_t port,
               std::span<const std::byte> consumer, std::function<void(const CmRep&)> done);

  struct Stats {
    uint64_t sent = 0, received = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Active {
    verbs::QueuePair* qp;
    uint32_t psn;
    Host* to;
    uint32_t comm_id;
    uint64_t tid;
    std::function<void(const CmRep&)> done;
  };
  struct Passive {
    verbs::QueuePair* qp;
    std::function<void()> established;
  };
  Task run();
  void send(Host& to, const MadHeader& h, const std::function<void(std::span<std::byte>)>& body);
  void on_mad(std::span<const std::byte> mad);
  void on_req(const MadHeader& h, const CmReq& r);
  void on_rep(const MadHeader& h, const CmRep& r);
  void on_rtu(const CmRtu& r);
  void post_recv(uint64_t slot);
  uint64_t guid() const;

  WorkloadEnv& env_;
  Host& host_;
  CmDirectory& dir_;
  uint32_t index_;
  verbs::ProtectionDomain* pd_ = nullptr;
  verbs::CompletionQueue* cq_ = nullptr;
  verbs::QueuePair* qp_ = nullptr;
  verbs::MemoryRegion* mr_ = nullptr;
  uint64_t buf_ = 0;
  Process* process_ = nullptr;
  uint64_t next_send_ = 0;
  uint32_t next_comm_id_ = 1;
  uint16_t next_port_ = 0;
  std::map<uint16_t, Listener> listeners_;
  std::map<uint32_t, Active> active_;    // by our comm id
  std::map<uint32_t, Passive> passive_;  // by our comm id
  struct PassivePsn {
    uint32_t psn;
    uint8_t responder_resources;
  };
  std::map<uint32_t, PassivePsn> pending_psn_;  // by our comm id: what RTS needs at the RTU
  std::map<Host*, verbs::AddressHandle*> ahs_;
  Stats stats_;
};

// Every host's agent, made when first asked for.
class CmDirectory {
 public:
  explicit CmDirectory(WorkloadEnv& env) : env_(env) {}
  // Whether `h`'s port speaks IBA management: a LID (InfiniBand) or GIDs
  // it must address by (RoCE). iWARP has neither, and no GSI QP.
  static bool supported(Host& h) { return h.nic().lid() != 0 || h.nic().fabric().requires_grh(); }
  ~CmDirectory();
  CmAgent& agent(Host& h);
  // The host whose port has GID `gid` (the REQ's primary local GID), or null.
  Host* by_gid(const std::array<uint8_t, 16>& gid) const;
  void add_host(Host& h) { hosts_.push_back(&h); }

 private:
  WorkloadEnv& env_;
  std::map<Host*, std::unique_ptr<CmAgent>> agents_;
  std::vector<Host*> hosts_;
};

}  // namespace rdmasim::nvme
