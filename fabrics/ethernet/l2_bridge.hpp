// An Ethernet bridge (IEEE 802.1Q, the relay of 802.1D): roce_v1's switch.
//
// - Learning (802.1Q 8.7): the source MAC of every frame received on a
//   forwarding port is recorded against that port, keyed by (VID, MAC) as an
//   IVL bridge does; entries age out after the ageing time (default 300 s,
//   802.1Q 8.8.3) without a frame from that source.
// - Forwarding (802.1Q 8.6): a known unicast destination goes to its port
//   (and is filtered if that is the port it came in on); broadcast,
//   multicast and unknown unicast are flooded to every other forwarding port.
// - Reserved group addresses 01:80:C2:00:00:00..0F (802.1Q 8.6.3, Table 8-1:
//   BPDUs, PAUSE/PFC, LACP, LLDP) are never relayed; PFC frames are acted on
//   by the port machinery (fabrics/ethernet/pfc.hpp) before they get here.
// - Ports the spanning tree blocks (topologies/routing.hpp spanning_tree,
//   what 802.1D STP converges to) neither learn, forward nor flood, so a
//   topology with loops is one loop-free broadcast domain and its extra
//   links stand idle, as in a real L2 network.
// The frame is not changed: VLAN tags pass through as they came.
// Latency: as the L3 switch, cut-through or store-and-forward (SwitchConfig).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ring.hpp"
#include "fabrics/ethernet/wire/ethernet.hpp"
#include "nodes/node.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

class L2Bridge final : public Node {
 public:
  static constexpr Time kDefaultAgeing = Time::s(300);

  // Port p's own MAC is MacAddress::switch_port(mac_base, p) (PFC frames' source).
  L2Bridge(Simulator& sim, std::string name, uint32_t mac_base, const SwitchConfig& cfg,
           Time ageing = kDefaultAgeing);

  // The spanning tree's verdict for a port (ports forward by default).
  void set_blocked(uint16_t port, bool blocked);
  // An access port carries one VLAN (802.1Q): frames of other VLANs are not
  // flooded to it. Ports not set are trunks and carry every VLAN.
  void set_access_vlan(uint16_t port, uint16_t vid);
  bool blocked(uint16_t port) const { return port < blocked_.size() && blocked_[port]; }
  // Does `port` carry VLAN `vid`? (VID 0, priority tagged, belongs to every VLAN.)
  bool carries(uint16_t port, uint16_t vid) const {
    return vid == 0 || port >= access_vlan_.size() || access_vlan_[port] == 0 || access_vlan_[port] == vid;
  }
  MacAddress port_mac(uint16_t port) const { return MacAddress::switch_port(mac_base_, port); }

  // Filtering database: the port a (VID, MAC) was learned on, if not aged out.
  // Untagged and priority-tagged frames (VID 0) share VID 0.
  std::optional<uint16_t> lookup(uint16_t vid, const MacAddress& mac) const;

  // Told of every received frame the bridge drops instead of relaying
  // (ingress accounting for PFC forgets it).
  void on_discard(std::function<void(const Packet&)> f) { on_discard_ = std::move(f); }

  void receive(Port& in, Packet p) override;

  struct Stats {
    uint64_t forwarded = 0;  // known unicast, relayed to one port
    uint64_t flooded = 0;    // broadcast, multicast and unknown unicast frames (not copies)
    uint64_t filtered = 0;   // the destination is on the port the frame came in on
    uint64_t blocked = 0;    // arrived on a blocked port
    uint64_t reserved = 0;   // to a reserved group address: not relayed
    uint64_t learned = 0;    // new or moved filtering database entries
  };
  const Stats& stats() const { return stats_; }

 private:
  struct FdbEntry {
    uint16_t port;
    Time seen;
  };
  static uint64_t key(uint16_t vid, const MacAddress& m);
  void learn(uint16_t vid, const MacAddress& src, uint16_t port);
  void discard(Port& in, Packet& p);
  void relay(Port& in, uint16_t out, Packet p);
  void egress(uint16_t out);

  SwitchConfig cfg_;
  uint32_t mac_base_;
  Time ageing_;
  std::vector<uint16_t> access_vlan_;  // per port: 0 for a trunk
  std::vector<bool> blocked_;
  std::unordered_map<uint64_t, FdbEntry> fdb_;  // looked up only, never iterated
  std::function<void(const Packet&)> on_discard_;
  struct Pending {
    Ring<Packet> frames;  // nothing until a frame: a port that forwards none costs its handle
    Time last;
  };
  std::deque<Pending> pipeline_;  // per egress port; a deque so growing never moves a queue
  std::vector<uint16_t> flood_;   // scratch: the ports of one flood
  Stats stats_;
};

}  // namespace rdmasim
