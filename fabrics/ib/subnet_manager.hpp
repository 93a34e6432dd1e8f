// The subnet manager (IBA chapter 14): at time 0 it sweeps the fabric from
// its own port, gives every port a LID and every HCA port its GID, computes
// the linear forwarding tables on the topology graph (topologies/routing.hpp:
// min-hop, or up*/down* which is free of credit loops on trees), and programs
// the switches' tables and SL-to-VL maps. There is no management traffic on
// the wire (no SMPs on VL 15): the sweep reads the ports directly and the
// results appear at once. Routes are not recomputed when a link goes down.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "fabrics/ib/virtual_lanes.hpp"
#include "nodes/node.hpp"
#include "topologies/config.hpp"
#include "topologies/routing.hpp"

namespace rdmasim {

// Port GUIDs: an EUI-64 with the locally administered bit set and graph node
// index + 1 (the LID the SM gives the node) in the low bytes.
constexpr uint64_t ib_port_guid(int node) {
  return 0x0200'0000'0000'0000ull | static_cast<uint64_t>(node + 1);
}
// A port's GID 0: the default subnet prefix fe80::/64 and the port GUID (IBA 4.1.1).
ibv_gid ib_gid(uint64_t port_guid);

class SubnetManager {
 public:
  SubnetManager(const Graph& g, const IbConfig& cfg);

  // Sweeps, assigns and programs. `nodes` are the network's nodes by graph
  // index: Hosts (their NIC gets LID and GID) and IbSwitches (LID, LFT,
  // SL-to-VL), their ports wired as the graph says. Throws std::logic_error
  // when the ports are wired otherwise.
  void bring_up(std::span<const std::unique_ptr<Node>> nodes);

  uint16_t lid(int node) const { return ib_lid(node); }
  const ForwardingTable& forwarding() const { return table_; }
  // Nodes the sweep reached from the SM's port (the subnet), in sweep order.
  const std::vector<int>& discovered() const { return discovered_; }
  // Whether the routes can deadlock under credit flow control (Dally and Seitz).
  bool credit_loop_free() const { return loop_free_; }
  const SlToVl& sl_to_vl() const { return sl2vl_; }

 private:
  void sweep(std::span<const std::unique_ptr<Node>> nodes);

  const Graph& g_;
  IbConfig cfg_;
  SlToVl sl2vl_;
  ForwardingTable table_;
  std::vector<int> discovered_;
  bool loop_free_ = true;
};

}  // namespace rdmasim
