// The simulated network of one run: the engine, the nodes at their graph
// indices, the links between their ports, and what each fabric adds (its
// switches, its addressing, how captures seal CRCs). The runner builds it
// in three steps: the fabric creates its switching nodes, the runner wires
// the links, then the fabric configures addresses and forwarding.
#pragma once

#include <infiniband/verbs.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "core/packet.hpp"
#include "nodes/host/host.hpp"
#include "nodes/node.hpp"
#include "pcap/pcap_writer.hpp"
#include "topologies/config.hpp"
#include "topologies/routing.hpp"

namespace rdmasim {

struct Network {
  explicit Network(const ExperimentConfig& c) : cfg(c), graph(c.topology) {}
  // Pending events hold frames (on the wire) and point at nodes: drop them
  // while the pool and the nodes still exist.
  ~Network() { sim.clear(); }
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  const ExperimentConfig& cfg;
  Graph graph;
  Simulator sim;
  PacketPool pool;
  std::vector<std::unique_ptr<Node>> nodes;  // by graph index; hosts first
  std::vector<Host*> hosts;                  // by host index
  struct LinkEnds {
    Port* a;
    Port* b;
  };
  std::vector<LinkEnds> links;  // by link index

  // Set by the fabric.
  Linktype linktype = Linktype::Ethernet;
  std::function<void(Packet&)> sealer;
  std::function<ibv_ah_attr(Host& from, Host& to)> address;
  uint32_t wire_overhead = 24;  // Ethernet: preamble and SFD 8, FCS 4, inter-frame gap 12
  uint32_t mtu = 4096;          // path MTU the QPs use

  // PFC deadlocks found during the run (fabrics/ethernet/pfc.hpp): ports
  // paused in a cycle, each with frames waiting, for the detection time.
  struct PfcDeadlock {
    Time at;
    std::vector<std::pair<std::string, uint16_t>> ports;  // node, port
  };
  std::vector<PfcDeadlock> pfc_deadlocks;
  std::shared_ptr<void> pfc_detector;  // keeps the detector alive with the network
  // PFC watchdog events (pfc.watchdog): a switch port's queue drained.
  struct PfcWatchdogEvent {
    Time at;
    std::string node;
    uint16_t port;
    size_t dropped;  // frames
  };
  std::vector<PfcWatchdogEvent> pfc_watchdog;

  Host& host(int i) { return *hosts[i]; }
  int host_index(const Host& h) const {
    for (size_t i = 0; i < hosts.size(); ++i)
      if (hosts[i] == &h) return static_cast<int>(i);
    return -1;
  }
};

// What a fabric does to a network. Nodes: create every non-host node in
// net.nodes (hosts exist already). Finish: after the links are wired, give
// hosts their NIC fabric and addresses, switches their forwarding state.
struct FabricBuilder {
  std::function<void(Network&)> create_nodes;
  std::function<void(Network&)> finish;
};

FabricBuilder roce_v2_builder();
FabricBuilder roce_v1_builder();
FabricBuilder ib_builder();  // fabrics/ib/ib_network.cpp
FabricBuilder iwarp_builder();  // fabrics/iwarp/iwarp_network.cpp

}  // namespace rdmasim
