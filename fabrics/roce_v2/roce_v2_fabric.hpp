// RoCE v2 (IBA annex A17): the IBA transport in UDP (destination port 4791)
// over IPv4 or IPv6 over Ethernet. The UDP source port carries flow entropy
// for ECMP; the IP ECN bits carry congestion marks.
#pragma once

#include "fabrics/ethernet/wire/ethernet.hpp"
#include "fabrics/iba/iba_fabric.hpp"
#include "fabrics/ip/l3_network.hpp"
#include "fabrics/ip/wire/address.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

// The GID a RoCE v2 host has for an address (IBA A17.8: IPv4-mapped for v4).
ibv_gid roce_v2_gid(IpVersion v, const IpEndpoint& e);

// Fills the ICRC (and the IPv6 UDP checksum) of a RoCE v2 frame whose CRC
// fields are still placeholders; a capture calls it on what it writes.
void seal_roce_v2(Packet& p);

// Its port is the host's Ethernet interface too: TCP frames to the host go
// to the kernel beside it (IpNic, NicFabric::set_kernel_input).
class RoceV2Fabric final : public IbaFabric, public IpNic {
 public:
  // control_priority >= 0: ACKs, NAKs and CNPs go in that priority (DSCP
  // 8 x it), the rest in `priority`.
  RoceV2Fabric(Rnic& nic, IpVersion ip, const IpEndpoint& self, uint8_t priority, bool ecn_capable,
               int control_priority = -1);

  size_t headroom() const override;
  void encap(Packet& p, const ibv_ah_attr& dest, uint32_t src_qpn, uint32_t dest_qpn) override;
  // HPCC: an IPv4 header with the telemetry option (fabrics/ip/wire/int_option.hpp).
  void encap_telemetry(Packet& p, const ibv_ah_attr& dest, uint32_t src_qpn, uint32_t dest_qpn,
                       const IntStack& t, bool echo) override;
  void encap_irn(Packet& p, const ibv_ah_attr& dest, uint32_t src_qpn, uint32_t dest_qpn,
                 const IrnExt& e) override;
  bool decap(Packet& p, IbaSource& src) override;
  // RoCE to the transport; IPv4 TCP to the host's kernel, when it has one.
  void receive(Packet p) override;
  bool is_link_control(const Packet& p) const override;
  // The ICRC, and over IPv6 the UDP checksum (mandatory there, RFC 8200 8.1).
  void seal(Packet& p) const override;
  bool requires_grh() const override { return true; }
  VerbsIdentity verbs_identity() const override {
    return {IBV_TRANSPORT_IB, IBV_NODE_CA, IBV_GID_TYPE_ROCE_V2};
  }

  // IpNic.
  const IpEndpoint& ip_self() const override { return self_; }
  IpVersion ip_version() const override { return ip_; }
  // The smallest netdev MTU at which the kernel gives the port its active
  // IBA MTU (mlx5's iboe_get_mtu: that MTU plus 96 bytes of RoCE headers).
  uint32_t ip_mtu() const override;

  // UDP source port for a QP pair: 0xC000 | 14-bit hash (A17.5.1.1: entropy).
  static uint16_t source_port(uint32_t src_qpn, uint32_t dest_qpn);

 private:
  IpVersion ip_;
  IpEndpoint self_;
  uint8_t priority_;
  int control_priority_;
  bool ecn_capable_;
  uint16_t ip_id_ = 0;
};

}  // namespace rdmasim
