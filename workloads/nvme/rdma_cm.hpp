// The RDMA connection manager of a host, as Linux's rdma_cm connects an RC
// QP over an IBA fabric: CM MADs (fabrics/iba/wire/cm.hpp) sent as UD
// SENDs between the hosts' GSI QPs (QP1, Q_Key 0x80010000). The active
// side sends a REQ (the RDMA IP CM service ID of the port, the IP CM header
// and the consumer's private data), the passive side answers with a REP
// (its QP, starting PSN and private data), the active side moves its QP to
// RTS and sends an RTU, on which the passive side moves its QP to RTS
// (IBA 12.9.6, 12.9.7). Wireshark learns the queue pair from this exchange.
//
// Lost MADs are sent again, as Linux's ib_cm has its MAD layer do (cm.c,
// mad.c): byte for byte, with the same transaction ID. The REQ waits for a
// REP 2 x PacketLifeTime + the Remote CM Response Timeout (the REQ's, 20:
// rdma_cm's CMA_CM_RESPONSE_TIMEOUT) and goes out again up to Max CM
// Retries times (the REQ's, 15: CMA_MAX_CM_RETRIES); after the last wait the
// connection is unreachable (IB_CM_REQ_ERROR, RDMA_CM_EVENT_UNREACHABLE).
// The REP waits for an RTU the REQ's Local CM Response Timeout and goes out
// again as often. A duplicate REQ is dropped (its REP, if lost, comes again
// on the REP's own timer: cm_dup_req_handler), so the passive QP is made
// once; a duplicate REP after the RTU is answered with the RTU again
// (cm_dup_rep_handler). With the RTU lost, the first packet the passive QP
// gets in RTR establishes the connection (the communication established
// event, IBA 12.9.7.2, 11.6.3.1: the consumer passes the QP's
// IB_EVENT_COMM_EST on, as nvmet-rdma does through rdma_notify).
//
// A connection ends with a DREQ and a DREP (IBA 12.9.8.4; ib_cm's
// ib_send_cm_dreq, cm_dreq_handler, ib_send_cm_drep): the side that
// disconnects (rdma_disconnect, its QP already in the error state) sends a
// DREQ (the transaction ID of the side's REQ or REP: ib_cm's cm_form_tid),
// sent again byte for byte while no DREP comes, after the wait of the
// side's REQ or REP, up to Max CM Retries times (then the connection is
// over: IB_CM_DREQ_ERROR). The peer tells its consumer
// (RDMA_CM_EVENT_DISCONNECTED), who disconnects in turn: that sends the
// DREP, echoing the DREQ's transaction ID. A DREQ again after the DREP (it
// was lost) gets the DREP again, and DREQs that cross are each answered
// (cm_dreq_handler in DREQ Sent and TimeWait).
//
// Not modelled: MRA, REJ on the wire (a refused REQ is a model error),
// the time wait's length (a QP number is not reused in a run).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/engine.hpp"
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
    std::function<void()> disconnected;  // a DREQ came (RDMA_CM_EVENT_DISCONNECTED)
  };
  using Listener = std::function<Accepted(const Incoming&)>;
  void listen(uint16_t port, Listener f) { listeners_[port] = std::move(f); }

  // What connect() ends with: the REP, once the QP is in RTS and the RTU is
  // on its way; or null, when no REP came for any of the REQ's sends
  // (IB_CM_REQ_ERROR: rdma_cm's RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT).
  using Connected = std::function<void(const CmRep* rep)>;
  // Connects `qp` (an RC QP in RESET or INIT, starting PSN `psn`) to the
  // listener on `to`'s `port`; `disconnected` is called if a DREQ comes for it.
  void connect(verbs::QueuePair& qp, uint32_t psn, Host& to, uint16_t port,
               std::span<const std::byte> consumer, Connected done, std::function<void()> disconnected = {});
  // rdma_disconnect of `qp`'s connection (its QP in the error state): a
  // DREQ, or the DREP when the peer's DREQ came first. Nothing for a QP
  // with no connection made.
  void disconnect(verbs::QueuePair& qp);
  // The REQ's Max CM Retries: how often a lost REQ (or REP) goes out again.
  static uint8_t max_cm_retries();

  // `qp`, a passive QP in RTR, got its first packet (IB_EVENT_COMM_EST; the
  // consumer passes it on, as with ib_cm_notify): with the RTU lost, this
  // establishes the connection.
  void notify_established(verbs::QueuePair& qp);

  struct Stats {
    uint64_t sent = 0, received = 0;
    uint64_t resent = 0;  // MADs sent again: a REQ or REP whose answer did not come, an RTU asked for again
    uint64_t duplicates = 0;  // MADs received again (a REQ, REP or RTU already acted on)
  };
  const Stats& stats() const { return stats_; }

 private:
  using Mad = std::array<std::byte, kMadLen>;
  // A MAD waiting for its answer: sent again on each timeout, `left` more times.
  struct Resend {
    Mad mad{};
    Time timeout;
    uint8_t left = 0;
    EventId timer;
  };
  // A connection's end (ib_cm's DREQ Sent, DREQ Rcvd, TimeWait).
  struct Close {
    enum class State { open, dreq_sent, dreq_received, closed } state = State::open;
    Resend dreq;
    uint64_t dreq_tid = 0;          // the peer's DREQ's, which the DREP echoes
    std::function<void()> on_dreq;  // the consumer's RDMA_CM_EVENT_DISCONNECTED
  };
  // Either side's connection as a disconnect needs it.
  struct Link {
    verbs::QueuePair* qp = nullptr;
    Host* peer = nullptr;
    uint32_t remote_comm_id = 0;
    Time wait;  // the side's REQ or REP wait, which its DREQ has too
    Close* close = nullptr;
  };
  // A connection we asked for (the active side), by our comm ID.
  struct Active {
    enum class State { req_sent, established } state = State::req_sent;
    verbs::QueuePair* qp = nullptr;
    uint32_t psn = 0;
    Host* to = nullptr;
    uint32_t remote_comm_id = 0;
    Resend req;
    Mad rtu{};  // sent again for a duplicate REP
    Connected done;
    Close close;
  };
  // A connection a REQ asked for (the passive side), by our comm ID.
  struct Passive {
    enum class State { rep_sent, established } state = State::rep_sent;
    verbs::QueuePair* qp = nullptr;
    Host* from = nullptr;
    uint32_t remote_comm_id = 0;
    uint64_t remote_ca_guid = 0;
    uint32_t psn = 0;                 // what RTS needs
    uint8_t responder_resources = 0;  // the REQ's
    Resend rep;
    std::function<void()> established;
    bool comm_est = false;  // IB_EVENT_COMM_EST came; not acted on yet
    Close close;
  };
  Task run();
  Task communication_established();
  Mad build(const MadHeader& h, const std::function<void(std::span<std::byte>)>& body) const;
  void post(Host& to, const Mad& mad);
  // Sends `r`'s MAD to `to` and starts its wait; `expired` is called with
  // `comm_id` when it is over.
  void send_awaiting(Host& to, Resend& r, uint32_t comm_id, void (CmAgent::*expired)(uint32_t));
  void on_req_timeout(uint32_t comm_id);
  void on_rep_timeout(uint32_t comm_id);
  void on_mad(std::span<const std::byte> mad);
  void on_req(const MadHeader& h, const CmReq& r);
  void on_rep(const MadHeader& h, const CmRep& r);
  void on_rtu(const CmRtu& r);
  void on_dreq(const MadHeader& h, const CmDreq& r);
  void on_drep(const CmDrep& r);
  void on_dreq_timeout(uint32_t comm_id);
  void send_drep(Host& to, uint64_t tid, uint32_t comm_id, uint32_t remote_comm_id);
  // The connection of our comm ID (an active one once its REP came), or of a QP.
  std::optional<Link> link(uint32_t comm_id);
  std::optional<std::pair<uint32_t, Link>> link_of(const verbs::QueuePair& qp);
  uint64_t tid(uint32_t comm_id) const { return uint64_t{index_ + 1} << 32 | comm_id; }
  void establish(Passive& p);
  // IB_EVENT_COMM_EST came for a passive QP still waiting for its RTU; acting on it.
  bool comm_est_pending() const;
  void establish_pending();
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
  bool busy_ = false;  // run() is between its interrupt and the end of its pass over the CQ
  uint64_t next_send_ = 0;
  uint32_t next_comm_id_ = 1;
  uint16_t next_port_ = 0;
  std::map<uint16_t, Listener> listeners_;
  std::map<uint32_t, Active> active_;    // by our comm id
  std::map<uint32_t, Passive> passive_;  // by our comm id
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
