// Native InfiniBand on the host (IBA chapters 7 and 8): the IBA transport's
// packets in an LRH, with a GRH when the address handle asks for one, and
// the two CRCs. A packet on the wire is
//
//   LRH (8) [GRH (40)] BTH (12) [extension headers] payload pad ICRC (4) VCRC (2)
//
// LRH.PktLen counts 4-byte words from the LRH through the ICRC (IBA 7.7.8);
// GRH.PayLen counts bytes from the BTH through the ICRC (IBA 8.3.1). The ICRC
// (IBA 7.8.1) masks LRH.VL and BTH byte 4, and with a GRH the whole LRH and
// the GRH's TClass, FlowLabel and HopLmt; the VCRC (IBA 7.8.2) covers LRH
// through ICRC and changes on every hop that changes the VL. Both are filled
// lazily (meta.crc_pending): a capture seals what it writes.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "fabrics/ib/virtual_lanes.hpp"
#include "fabrics/iba/iba_fabric.hpp"

namespace rdmasim {

// The bytes a native IB packet adds around the transport: LRH, GRH, ICRC, VCRC.
inline constexpr size_t kIbLrhLen = 8;
inline constexpr size_t kIbGrhLen = 40;
inline constexpr size_t kIbCrcLen = 4 + 2;
// The largest native IB packet for a path MTU: LRH, GRH, BTH, the largest
// extension headers (AtomicETH 28; RETH + ImmDt 20 with a payload), payload,
// ICRC, VCRC.
constexpr size_t ib_max_packet(uint32_t mtu) { return kIbLrhLen + kIbGrhLen + 12 + 28 + mtu + kIbCrcLen; }

// Link-level bytes a packet costs beyond what a capture shows: its start
// delimiter (SDP) and end delimiter (EGP), one symbol each, which with the
// packet's 4k + 2 bytes fill whole columns of a 4x link's lanes (IBA volume
// 2, lane striping): 4 byte times a packet.
inline constexpr uint32_t kIbWireOverhead = 4;

// Fills the ICRC and VCRC of a native IB frame whose meta.crc_pending is
// set, and clears it: the sealer captures call.
void seal_ib(Packet& p);

class IbFabric final : public IbaFabric {
 public:
  // `sl_to_vl`: the HCA port's SL-to-VL table (IBA 7.6.6). The LID and GID
  // are read from the NIC when a packet is built: the subnet manager sets them.
  // control_sl >= 0: ACKs, NAKs and CNPs go in that SL (the control class:
  // its VL is served first at every port), data in the address's SL.
  IbFabric(Rnic& nic, const SlToVl& sl_to_vl, int control_sl = -1);

  size_t headroom() const override { return kIbLrhLen + kIbGrhLen; }
  // LRH from dest.dlid, dest.sl, dest.src_path_bits; a GRH when dest.is_global.
  void encap(Packet& p, const ibv_ah_attr& dest, uint32_t src_qpn, uint32_t dest_qpn) override;
  // Accepts a packet for this port's LID (IBA 7.11.1 checks: LNH, PktLen,
  // DLID); strips LRH, GRH, ICRC and VCRC.
  bool decap(Packet& p, IbaSource& src) override;
  void seal(Packet& p) const override { seal_ib(p); }

  struct IbStats {
    uint64_t wrong_dlid = 0;  // not addressed to this port (IBA 7.11.1: silently dropped)
    uint64_t bad_header = 0;  // LNH not IBA, PktLen not the frame's length, GRH not followed by a BTH
  };
  const IbStats& ib_stats() const { return ib_stats_; }

 private:
  SlToVl sl_to_vl_;
  int control_sl_;
  IbStats ib_stats_;
};

}  // namespace rdmasim
