// The RDMA NIC of a host: it pulls frames from its queue pairs when the port
// can take one (round robin, so one busy QP cannot starve the others),
// encapsulates them for the fabric, and hands arriving frames to the fabric's
// receive path. Host-side costs live here too: doorbells, WQE and payload
// DMA over PCIe, CQE writes, and how the CPU learns of completions.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/engine.hpp"
#include "core/packet.hpp"
#include "core/ring.hpp"
#include "core/units.hpp"
#include "nodes/host/host_config.hpp"
#include "nodes/port.hpp"

namespace rdmasim {

class SocketStack;

namespace verbs {
class CompletionQueue;
class Device;
class ProtectionDomain;
class QueuePair;
struct QpInitAttr;
}  // namespace verbs
class HostMemory;

// A source of frames the NIC schedules: an IBA QP, an iWARP connection.
class TxSource {
 public:
  virtual ~TxSource() = default;
  virtual bool has_tx() const = 0;
  virtual Packet next_frame() = 0;  // only called when has_tx()
  // The earliest time its next frame may go: a rate limiter (DCQCN) paces
  // it. Asked only of sources that set paced_source_.
  virtual Time not_before() const { return Time{}; }

 protected:
  bool paced_source_ = false;

 private:
  friend class Rnic;
  bool scheduled_ = false;
  EventId paced_;  // the wake-up of a source its pacing holds back
};

// How the frames of a fabric are built and taken apart; one per fabric.
class NicFabric {
 public:
  virtual ~NicFabric() = default;
  virtual size_t headroom() const = 0;
  // ibv_create_qp for this fabric: nullptr with errno set when it cannot.
  virtual std::unique_ptr<verbs::QueuePair> create_qp(verbs::Device& d, verbs::ProtectionDomain& pd,
                                                      uint32_t qpn, const verbs::QpInitAttr& init) = 0;
  // An arriving frame (the NIC owns it now).
  virtual void receive(Packet p) = 0;
  // Fills the CRC/checksum fields of a frame that someone observes.
  virtual void seal(Packet& p) const = 0;
  // Every address needs a GRH (RoCE, IBA annexes A16 and A17).
  virtual bool requires_grh() const { return false; }
  // A connected QP's peer is named by the GID of its address: RoCE's GRH,
  // or the IPv4 address iwarp opens the QP's TCP connection to. Without
  // one, ibv_modify_qp to RTR is refused (EINVAL), as siw and iw_cxgb4
  // refuse RTS to a QP the CM gave no connection.
  virtual bool connects_by_gid() const { return requires_grh(); }
  // Its QPs can take receives from a shared receive queue.
  virtual bool supports_srq() const { return false; }
  // What ibv_query_device and ibv_query_gid_ex tell a program of this NIC
  // (programs/): its transport, node type and the type of its GIDs.
  struct VerbsIdentity {
    ibv_transport_type transport = IBV_TRANSPORT_IB;
    ibv_node_type node = IBV_NODE_CA;
    ibv_gid_type gid_type = IBV_GID_TYPE_IB;
  };
  virtual VerbsIdentity verbs_identity() const { return {}; }

  // What a fabric's own host stack counted, beside the NIC's common
  // counters (results.json: hosts[i].stack and hosts[i][section]); an RNIC,
  // whose stack is the verbs layer, has none.
  struct StackReport {
    std::string_view stack;    // "kernel", "dpdk"
    std::string_view section;  // "kernel_rx", "dpdk_rx"
    std::vector<std::pair<std::string_view, uint64_t>> counters;
    uint64_t interrupts = 0;  // interrupts the stack raised on the host's CPU
  };
  virtual std::optional<StackReport> stack_report() const { return std::nullopt; }
  // Its network stack's sockets (nodes/host/kernel/socket_stack.hpp), null
  // on an RNIC: what a workload asks to run a socket program here.
  virtual SocketStack* sockets() { return nullptr; }

  // The host's kernel beside the RDMA engine, on a fabric whose wire
  // carries IP (roce_v2, iwarp): an arriving frame the RDMA engine does not
  // take (TCP to the host's own sockets) goes to `f`, the kernel's receive
  // path; without one such frames are dropped.
  void set_kernel_input(std::function<void(Packet)> f) { kernel_input_ = std::move(f); }

 protected:
  // Hands `p` to the kernel; false (and `p` untouched) when there is none.
  bool to_kernel(Packet& p) {
    if (!kernel_input_) return false;
    kernel_input_(std::move(p));
    return true;
  }

 private:
  std::function<void(Packet)> kernel_input_;
};

// The NIC's own timing. What the CPU pays (posting, polling, interrupts) is
// the host's: HostConfig, in nodes/host/host.hpp.
struct NicConfig {
  Time pcie_latency = Time::ns(400);  // one PCIe transaction, one way
  Time rx_pipeline = Time::ns(250);   // NIC processing per frame received (tx and rx together)
  Doorbell doorbell = Doorbell::dma;  // dma: NIC fetches the WQE; pio: CPU writes it (BlueFlame)
  uint32_t max_inline = 256;          // bytes a PIO doorbell may carry inline
  uint32_t tx_queue_frames = 2;       // frames the NIC keeps queued at its port
};

class Rnic {
 public:
  Rnic(Simulator& sim, PacketPool& pool, HostMemory& memory, Port& port, const NicConfig& cfg);
  ~Rnic();
  Rnic(const Rnic&) = delete;
  Rnic& operator=(const Rnic&) = delete;

  Simulator& sim() const { return sim_; }
  PacketPool& pool() const { return pool_; }
  Port& port() const { return port_; }
  const NicConfig& config() const { return cfg_; }
  verbs::Device& device() const { return *device_; }

  void set_fabric(std::unique_ptr<NicFabric> f) { fabric_ = std::move(f); }

  // Addresses: LID (ib), GID (all IBA fabrics), MAC and IP (Ethernet fabrics).
  uint16_t lid() const { return lid_; }
  void set_lid(uint16_t l) { lid_ = l; }
  const ibv_gid& gid() const { return gid_; }
  // The port's active MTU (IBA MTU of the link).
  ibv_mtu active_mtu() const { return active_mtu_; }
  void set_active_mtu(ibv_mtu m) { active_mtu_ = m; }
  void set_gid(const ibv_gid& g) { gid_ = g; }
  NicFabric& fabric() const { return *fabric_; }

  // A packet with room in front for the fabric's and the transport's
  // headers, and behind for `payload` bytes and trailers (pad, ICRC, VCRC):
  // its buffer's size class follows from that.
  Packet alloc(size_t payload = PacketPool::kMaxCapacity) {
    return pool_.make(fabric_->headroom() + 64, payload + 64);
  }

  // `s` has frames to send: schedule it.
  void wake(TxSource& s);
  // `s` is going away: forget it.
  void forget(TxSource& s);

  // A frame arrived on the port (after the wire); the NIC pipeline follows.
  void receive(Packet p);

  // Latency from a post to the NIC having the WQE and its first data: the
  // doorbell over PCIe; for a DMA doorbell, the WQE fetch round trip; for
  // data not inline (`reads_payload`), the round trip of its DMA read.
  Time doorbell_delay(bool inline_pio, bool reads_payload = false) const;
  // Writes a CQE to host memory (a PCIe write) and tells the CQ.
  // `solicited`: a received message that asked for a solicited event.
  void deliver_cqe(verbs::CompletionQueue& cq, const ibv_wc& wc, bool solicited = false);
  // Sends a frame the NIC makes itself, outside any QP's turn (a DCQCN CNP).
  void send_cnp(Packet p);
  // A CNP arrived (counted here; the QP reacts).
  void note_cnp_received() { ++stats_.cnps_received; }

  // Port became able to take a frame.
  void pump();

  struct Stats {
    uint64_t frames_sent = 0, frames_received = 0, cqes = 0;
    uint64_t cnps_sent = 0, cnps_received = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  void rx_done();
  void pump_frames();

  Simulator& sim_;
  PacketPool& pool_;
  Port& port_;
  NicConfig cfg_;
  std::unique_ptr<verbs::Device> device_;
  std::unique_ptr<NicFabric> fabric_;
  uint16_t lid_ = 0;
  ibv_gid gid_{};
  ibv_mtu active_mtu_ = IBV_MTU_4096;
  Ring<TxSource*> ready_;
  Ring<Packet> rx_pipe_;
  struct CqeWrite {
    verbs::CompletionQueue* cq;
    ibv_wc wc;
    bool solicited;
  };
  Ring<CqeWrite> cqe_pipe_;  // CQE writes in flight over PCIe
  Stats stats_;
};

}  // namespace rdmasim
