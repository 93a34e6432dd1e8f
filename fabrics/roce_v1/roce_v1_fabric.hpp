// RoCE v1 (IBA annex A16): the IBA transport carried directly in Ethernet,
// EtherType 0x8915, inside one L2 broadcast domain:
//
//   Ethernet [802.1Q tag] | GRH | BTH | extension headers | payload | pad | ICRC
//
// There is no LRH and no VCRC (A16.4.1): the GRH is always present and the
// ICRC is computed with 8 bytes of ones in place of the LRH
// (fabrics/iba/icrc.hpp). A port's GID is its link-local IPv6 address,
// fe80::/64 and the modified EUI-64 of its MAC (RFC 4291 appendix A), as
// RoCE v1 NICs derive GID 0. The 802.1Q tag carries the priority (PCP)
// that PFC acts on; with PFC and no VLAN the frames are priority-tagged
// (VID 0, 802.1Q 9.6).
//
// A QP's frames to a link-local GID go to the MAC the GID is made of, as
// Linux sets a RoCE QP's destination MAC at RTR (ib_resolve_eth_dmac, which
// calls rdma_get_ll_mac for fe80::/64): nothing is asked of the network.
// To any other GID, and for rdma_resolve_addr (resolve() below), the host
// finds the MAC with IPv6 neighbour discovery (RFC 4861 NS/NA, on the wire
// and in captures): frames wait in the neighbour cache until the
// advertisement comes, then leave in order.
#pragma once

#include <cstdint>
#include <optional>

#include "core/ring.hpp"
#include "fabrics/ethernet/neighbor_cache.hpp"
#include "fabrics/ethernet/wire/ethernet.hpp"
#include "fabrics/iba/iba_fabric.hpp"
#include "fabrics/iba/wire/grh.hpp"

namespace rdmasim {

struct NdMessage;  // fabrics/roce_v1/wire/icmpv6_nd.hpp

// fe80::/64 + modified EUI-64 of `mac` (the U/L bit flipped, ff:fe in the middle).
Gid roce_v1_gid(const MacAddress& mac);
// The MAC inside a link-local GID (fe80::/64): the interface identifier's
// bytes 8-10 and 13-15, the U/L bit flipped back (rdma_get_ll_mac; like
// rdma_link_local_addr, only the prefix is checked). None for other GIDs.
std::optional<MacAddress> link_local_mac(const Gid& g);
ibv_gid to_ibv_gid(const Gid& g);
Gid from_ibv_gid(const ibv_gid& g);

// Fills the ICRC of a RoCE v1 frame whose CRC field is still a placeholder;
// captures call it on what they write. Other frames are left alone.
void seal_roce_v1(Packet& p);

struct RoceV1Port {
  MacAddress mac;
  Gid gid;                      // usually roce_v1_gid(mac)
  uint8_t priority = 0;         // 802.1p priority of RDMA frames: the PCP, and the PFC class
  std::optional<uint16_t> vid;  // set: frames carry an 802.1Q tag with this VID (0: priority tag only)
};

// The QP's frames wait for the MAC, as a host's frames wait for a
// neighbour, in a queue bounded as Linux bounds it (unres_qlen_bytes,
// 208 KiB a neighbour): the QP's send window does not bound what waits,
// since each retransmission of frames still waiting queues them again (a
// neighbour that never answers held size x outstanding x retries).
// Frames past the bound are lost, and the QP retransmits them once the
// address is known.
inline NeighborCache::Params roce_v1_neighbor_params() { return NeighborCache::Params{}; }

class RoceV1Fabric final : public IbaFabric, private TxSource {
 public:
  RoceV1Fabric(Rnic& nic, const RoceV1Port& self, NeighborCache::Params nd = roce_v1_neighbor_params());
  ~RoceV1Fabric() override;

  size_t headroom() const override;  // Ethernet, 802.1Q, GRH
  void encap(Packet& p, const ibv_ah_attr& dest, uint32_t src_qpn, uint32_t dest_qpn) override;
  bool decap(Packet& p, IbaSource& src) override;
  void seal(Packet& p) const override { seal_roce_v1(p); }
  bool requires_grh() const override { return true; }
  VerbsIdentity verbs_identity() const override {
    return {IBV_TRANSPORT_IB, IBV_NODE_CA, IBV_GID_TYPE_ROCE_V1};
  }
  // RoCE v1 frames to the IBA transport, neighbour discovery to the cache;
  // frames for another MAC (a bridge floods unknown unicast) are dropped.
  void receive(Packet p) override;

  const RoceV1Port& self() const { return self_; }
  // Starts resolving `g` now (rdma_resolve_addr) so the connection's first
  // frame need not wait.
  void resolve(const Gid& g);
  std::optional<MacAddress> neighbor(const Gid& g) const { return cache_.lookup(g); }
  const NeighborCache& neighbors() const { return cache_; }

  struct RxStats {
    uint64_t not_for_us = 0;   // destination MAC not ours
    uint64_t wrong_gid = 0;    // RoCE v1 frame for another DGID
    uint64_t nd_received = 0;  // valid NS and NA
    uint64_t nd_invalid = 0;   // bad checksum, hop limit, code or options
    uint64_t advertisements_sent = 0;
    uint64_t other = 0;  // neither RoCE v1 nor neighbour discovery
  };
  const RxStats& rx_stats() const { return rx_; }

 private:
  // TxSource: neighbour discovery frames, and frames that waited for an
  // address, in the order they were made.
  bool has_tx() const override { return !out_.empty(); }
  Packet next_frame() override;
  void queue_out(Packet p);

  bool accepts(const MacAddress& dst) const;
  // Prepends Ethernet (and the tag) with `ethertype` to p.
  void push_ethernet(Packet& p, const MacAddress& dst, uint16_t ethertype, uint8_t pcp, bool data) const;
  void send_solicitation(const Gid& target);
  void send_advertisement(const Gid& to, const MacAddress& to_mac);
  void send_nd(const NdMessage& m, const Ipv6Address& dst, const MacAddress& dst_mac);
  void on_ipv6(std::span<const std::byte> ip, const MacAddress& eth_src);
  void release(const Gid& g, const MacAddress& mac);

  RoceV1Port self_;
  NeighborCache cache_;
  Ring<Packet> out_;
  RxStats rx_;
};

}  // namespace rdmasim
