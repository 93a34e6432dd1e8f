// What ib, roce_v1 and roce_v2 share on a host: the IBA transport's queue
// pairs, and the dispatch of arriving packets to them by destination QPN.
// Each fabric adds only its encapsulation (LRH, Ethernet+GRH, Ethernet+IP+UDP).
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>

#include "core/packet.hpp"
#include "fabrics/iba/transport/cc/congestion_control.hpp"
#include "fabrics/ip/wire/irn_option.hpp"
#include "nodes/host/rnic.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

// Where a received packet came from (for UD completions and the GRH).
struct IbaSource {
  bool has_grh = true;  // RoCE always carries one (GRH or IP header); native IB only when global
  uint16_t slid = 0;
  uint8_t sl = 0;
  std::array<uint8_t, 16> sgid{};
  std::array<uint8_t, 16> dgid{};
  // What the first 40 bytes of a UD receive buffer get (IBA 11.4.1.1): the
  // GRH as received; on RoCE v2 over IPv4 20 zero bytes then the IPv4
  // header, over IPv6 the IPv6 header (as rxe and mlx5 write them); zeros
  // when the packet had no GRH.
  std::array<std::byte, 40> grh{};
  bool ecn_ce = false;
  int hop_limit = -1;  // the IP TTL / hop limit it arrived with (-1: no IP header)
  // HPCC telemetry: the switches' samples (a request) or their echo (an ACK).
  std::optional<IntStack> telemetry;
  bool telemetry_echo = false;
  // IRN's extension header (loss_recovery: irn).
  std::optional<IrnExt> irn;
};

class IbaFabric : public NicFabric {
 public:
  explicit IbaFabric(Rnic& nic) : nic_(nic) {}

  std::unique_ptr<verbs::QueuePair> create_qp(verbs::Device& d, verbs::ProtectionDomain& pd, uint32_t qpn,
                                              const verbs::QpInitAttr& init) override;
  void receive(Packet p) override;
  bool supports_srq() const override { return true; }

  // Prepends this fabric's headers to transport headers + payload + pad +
  // ICRC room, towards `dest`.
  virtual void encap(Packet& p, const ibv_ah_attr& dest, uint32_t src_qpn, uint32_t dest_qpn) = 0;
  // Strips this fabric's headers and the ICRC; false drops the frame.
  virtual bool decap(Packet& p, IbaSource& src) = 0;
  // encap with HPCC's telemetry option: room for the switches' samples
  // (`echo` false, a data packet), or the echo of `t` (an ACK). Fabrics
  // without it encapsulate as usual.
  virtual void encap_telemetry(Packet& p, const ibv_ah_attr& dest, uint32_t src_qpn, uint32_t dest_qpn,
                               const IntStack& t, bool echo) {
    (void)t;
    (void)echo;
    encap(p, dest, src_qpn, dest_qpn);
  }
  // encap with IRN's extension header (fabrics/ip/wire/irn_option.hpp).
  // Fabrics without it encapsulate as usual.
  virtual void encap_irn(Packet& p, const ibv_ah_attr& dest, uint32_t src_qpn, uint32_t dest_qpn,
                         const IrnExt& e) {
    (void)e;
    encap(p, dest, src_qpn, dest_qpn);
  }
  // Link-level frames the port's MAC consumes (PFC PAUSE): not for the transport.
  virtual bool is_link_control(const Packet&) const { return false; }

  // Congestion control at this NIC's RC and UC QPs, or nullptr: none.
  const CcConfig* congestion_control() const { return cc_; }
  const CcFeedback& feedback() const { return feedback_; }
  void set_congestion_control(const CcConfig* c) {
    cc_ = c && c->algorithm != CcAlgorithm::none ? c : nullptr;
    feedback_ = cc_feedback(cc_ ? cc_->algorithm : CcAlgorithm::none);
  }

  // IRN loss recovery at this NIC's RC QPs, or nullptr: go-back-N.
  const IrnConfig* irn() const { return irn_; }
  void set_loss_recovery(LossRecovery r, const IrnConfig* c) { irn_ = r == LossRecovery::irn ? c : nullptr; }

  struct Stats {
    uint64_t unknown_qp = 0, malformed = 0;
  };
  const Stats& stats() const { return stats_; }

 protected:
  Rnic& nic_;
  Stats stats_;
  const CcConfig* cc_ = nullptr;
  const IrnConfig* irn_ = nullptr;
  CcFeedback feedback_;
};

}  // namespace rdmasim
