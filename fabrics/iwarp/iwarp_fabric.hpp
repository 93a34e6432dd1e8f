// iWARP on a host's RNIC: the NicFabric that builds and takes apart
// Ethernet + IPv4/IPv6 + TCP frames, hands arriving segments to the right
// connection by 4-tuple, and charges what TCP offload costs the NIC.
//
// Each RC queue pair (IwarpQp, iwarp_qp.hpp) owns one TcpConnection and the
// IwarpEndpoint on it. Frames leave by pull: the NIC asks the QP for its next
// segment when the port can take one, and this fabric prepends IP and
// Ethernet. TCP checksums, IPv4 header checksums aside, and MPA CRCs are
// left for whoever observes the frame (seal, meta.crc_pending).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <tuple>

#include "core/packet.hpp"
#include "core/units.hpp"
#include "fabrics/ip/l3_network.hpp"
#include "fabrics/ip/tcp/tcp_config.hpp"
#include "fabrics/iwarp/mpa_seal.hpp"
#include "nodes/host/rnic.hpp"

namespace rdmasim {

class IwarpQp;

// What the RNIC's TCP offload engine costs, on top of the NIC pipeline every
// fabric pays (NicConfig::rx_pipeline). docs/fabrics/iwarp.md explains the
// numbers. The engine is pipelined: these are latencies, not a rate limit.
struct IwarpNicCost {
  Time tx_message = Time::ns(150);  // a WQE to its first segment: TCB fetch, MPA framing, DDP/RDMAP headers
  Time rx_segment = Time::ns(150);  // a data segment: TCP reassembly check, MPA CRC, STag lookup, placement
  Time rx_ack = Time::ns(50);       // a segment without payload (ACK, SYN, FIN)
  // TCBs the NIC keeps on chip; beyond them every segment of a connection
  // whose state is not cached pays a context fetch over PCIe (a round trip).
  uint32_t cached_connections = 256;
  uint32_t tcb_bytes = 512;  // state per connection (TCP control block + MPA/DDP/RDMAP queue state)
};

// Options every connection of a host uses.
struct IwarpNicConfig {
  IpVersion ip = IpVersion::ipv4;
  IpEndpoint self;
  TcpEndpointConfig tcp;
  bool mpa_crc = true;
  bool mpa_markers = false;
  uint8_t mpa_revision = 2;      // RFC 6581 enhanced connection establishment; 1: RFC 5044
  uint16_t listen_port = 18515;  // where the passive end of every connection listens
  IwarpNicCost cost;
  uint8_t priority = 0;  // 802.1p class (and DSCP 8p + 2) when PFC protects it; 0 otherwise
  uint64_t seed = 1;     // initial sequence numbers come from it
  std::shared_ptr<MpaStreamRegistry> streams;  // shared with the network's sealer
};

// Seals an iWARP frame (Ethernet + IP + TCP): MPA CRCs then the TCP checksum.
void seal_iwarp(Packet& p, const MpaStreamRegistry& streams);

// Its port is the host's Ethernet interface too: segments of no iWARP
// connection go to the kernel beside it (IpNic, NicFabric::set_kernel_input).
class IwarpFabric final : public NicFabric, public IpNic {
 public:
  IwarpFabric(Rnic& nic, const IwarpNicConfig& cfg);
  ~IwarpFabric() override;

  size_t headroom() const override;
  std::unique_ptr<verbs::QueuePair> create_qp(verbs::Device& d, verbs::ProtectionDomain& pd, uint32_t qpn,
                                              const verbs::QpInitAttr& init) override;
  void receive(Packet p) override;
  void seal(Packet& p) const override;
  // A QP may take its receives from an SRQ (siw, iw_cxgb4 on T6).
  bool supports_srq() const override { return true; }
  bool connects_by_gid() const override { return true; }
  // An RNIC (the iWARP transport); its GID holds the IP address.
  VerbsIdentity verbs_identity() const override {
    return {IBV_TRANSPORT_IWARP, IBV_NODE_RNIC, IBV_GID_TYPE_IB};
  }

  // IpNic.
  const IpEndpoint& ip_self() const override { return cfg_.self; }
  IpVersion ip_version() const override { return cfg_.ip; }
  uint32_t ip_mtu() const override { return cfg_.tcp.mtu; }
  bool engine_port(uint16_t port) const override { return port == cfg_.listen_port; }
  void engine_syn(Packet p) override;

  Rnic& nic() const { return nic_; }
  const IwarpNicConfig& config() const { return cfg_; }

  // The ephemeral TCP port (RFC 6335 dynamic range) of the active end's
  // connection: rdma_cm's bind would pick one; the model derives it from the
  // QPN so both ends know it without a CM exchange. The passive end listens
  // on IwarpNicConfig::listen_port.
  static uint16_t port_of(uint32_t qpn) { return static_cast<uint16_t>(0xC000 | (qpn & 0x3FFF)); }

  // Connections by 4-tuple (the remote address and both ports).
  void attach(IwarpQp& qp, const std::array<uint8_t, 16>& remote, uint16_t remote_port, uint16_t local_port);
  void detach(IwarpQp& qp);
  size_t connections() const { return conns_.size(); }

  // Prepends IP and Ethernet to a TCP segment towards `remote`.
  void encap(Packet& p, const std::array<uint8_t, 16>& remote, bool ect);

  struct Stats {
    uint64_t segments_received = 0, no_connection = 0, malformed = 0, context_misses = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  using Key = std::tuple<std::array<uint8_t, 16>, uint16_t, uint16_t>;
  struct Pending {
    Packet p;
    IwarpQp* qp;
    bool ce;
  };
  void rx_done();
  bool hold_syn(const Key& key, uint8_t tcp_flags, Packet& p);

  Rnic& nic_;
  IwarpNicConfig cfg_;
  std::map<Key, IwarpQp*> conns_;
  std::map<Key, Packet> held_syns_;  // SYNs to listen_port that came before their QP listened
  std::deque<IwarpQp*> lru_;         // connections whose TCB is on chip, most recent first
  std::deque<Pending> rx_pipe_;      // segments in the TCP offload pipeline, oldest first
  Time rx_last_;                     // when the last of them leaves the pipeline (FIFO order)
  uint16_t ip_id_ = 0;
  Stats stats_;
};

}  // namespace rdmasim
