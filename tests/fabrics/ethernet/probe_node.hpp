// A node with one port that records what it receives, and a helper to
// build plain Ethernet frames: enough to drive bridges and PFC in tests.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/packet.hpp"
#include "fabrics/ethernet/wire/ethernet.hpp"
#include "fabrics/ethernet/wire/vlan.hpp"
#include "nodes/node.hpp"

namespace rdmasim::test {

class ProbeNode final : public Node {
public:
  ProbeNode(Simulator& sim, std::string name) : Node(sim, std::move(name)) { add_port(); }

  struct Got {
    Time at;
    std::vector<std::byte> bytes;
    uint8_t priority;
  };
  std::vector<Got> got;

  void receive(Port& in, Packet p) override {
    in.release_ingress(p.meta().priority, p.size());
    got.push_back({sim_.now(), {p.bytes().begin(), p.bytes().end()}, p.meta().priority});
  }
};

// An Ethernet frame of `size` bytes (at least 60) from src to dst with a
// made-up EtherType, optionally 802.1Q-tagged, in class `priority`.
inline Packet eth_frame(PacketPool& pool, const MacAddress& dst, const MacAddress& src, size_t size = 100,
                        uint8_t priority = 0, int vid = -1) {
  Packet p = pool.make();
  auto b = p.push_back(std::max<size_t>(size, EthernetView::kMinFrameLen));
  std::fill(b.begin(), b.end(), std::byte{0x5A});
  uint16_t type = 0x88B5;  // IEEE 802 local experimental EtherType
  if (vid >= 0) {
    VlanTag{priority, false, static_cast<uint16_t>(vid), type}.emit(*VlanView::check(b.subspan(EthernetView::kLen)));
    type = ethertype::kVlan;
  }
  EthernetHeader{dst, src, type}.emit(*EthernetView::check(b));
  p.meta().priority = priority;
  return p;
}

inline MacAddress dst_of(const std::vector<std::byte>& frame) { return ConstEthernetView::check(frame)->dst(); }
inline MacAddress src_of(const std::vector<std::byte>& frame) { return ConstEthernetView::check(frame)->src(); }

}  // namespace rdmasim::test
