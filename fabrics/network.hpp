// The simulated network of one run: the engine, the nodes at their graph
// indices and the links between their ports. build_network assembles it
// for a fabric in three steps: the fabric creates its switching nodes, the
// links are wired, then the fabric configures addresses and forwarding and
// says what it built (BuiltFabric, fabrics/fabric.hpp).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/engine.hpp"
#include "core/packet.hpp"
#include "fabrics/fabric.hpp"
#include "nodes/host/host.hpp"
#include "nodes/node.hpp"
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

  // A PFC deadlock (fabrics/ethernet/pfc.hpp, PfcDeadlockFinder): ports
  // paused in a cycle, each with frames waiting, for the detection time.
  struct PfcDeadlock {
    Time at;
    std::vector<std::pair<std::string, uint16_t>> ports;  // node, port
  };
  // The ports the deadlock detector found stuck, each at a time of its grid,
  // in the order the checks ran, until the run hands them to a
  // PfcDeadlockFinder (at each of its checks), which turns them into cycles.
  struct PfcStuck {
    Time at;
    int node;
    uint16_t port;
  };
  std::vector<PfcStuck> pfc_stuck;
  // PFC watchdog events (pfc.watchdog): a switch port's queue drained.
  struct PfcWatchdogEvent {
    Time at;
    std::string node;
    uint16_t port;
    size_t dropped;  // frames
  };
  std::vector<PfcWatchdogEvent> pfc_watchdog;

  // Shortest paths between the graph's hosts (HostPaths), made on first
  // use and shared: the fabric's routes and the workloads' path costs ask
  // the same table (at k = 64 its making is seconds).
  const HostPaths& paths() const {
    if (!paths_) paths_ = std::make_unique<const HostPaths>(graph);
    return *paths_;
  }

  Host& host(int i) { return *hosts[i]; }
  // The host's index in `hosts`, or -1; hosts are only ever appended, so
  // the map catches up with the ones added since it last looked.
  int host_index(const Host& h) const {
    for (; indexed_ < hosts.size(); ++indexed_) host_at_.emplace(hosts[indexed_], static_cast<int>(indexed_));
    const auto it = host_at_.find(&h);
    return it == host_at_.end() ? -1 : it->second;
  }

 private:
  mutable std::unique_ptr<const HostPaths> paths_;
  mutable std::unordered_map<const Host*, int> host_at_;
  mutable size_t indexed_ = 0;
};

// Builds `net` for `fabric`: hosts (graph order), the fabric's switches,
// the links in file order (a node's ports numbered in the order its links
// appear), then the fabric's finish; IBA fabrics set every NIC's active MTU
// to the path MTU.
// `before_finish`, when given, runs once the links are wired and before the
// fabric's finish schedules anything (a split run takes its nodes there).
BuiltFabric build_network(Network& net, const Fabric& fabric,
                          const std::function<void()>& before_finish = {});

}  // namespace rdmasim
