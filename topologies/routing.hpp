// Routing on the topology graph: ECMP next hops (roce_v2, iwarp), spanning
// tree and broadcast domains (roce_v1 bridges), and InfiniBand linear
// forwarding tables (min_hop, up*/down*) with a credit-loop check. The
// algorithms run on Boost.Graph inside routing.cpp; nothing of Boost shows
// here.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "topologies/config.hpp"

namespace rdmasim {

enum class NodeKind { host, switch_node, router };

// A read-only view of a TopologyConfig as a graph.
// Node indices: hosts first, in topology.hosts order (so a host's node index
// is its position there), then switches, then routers, each in file order.
// Ports: a node's ports are numbered in the order its links appear in
// topology.links, from 0. Link indices are positions in topology.links.
class Graph {
 public:
  struct Port {
    int peer;            // node at the other end
    uint16_t peer_port;  // its port number there
    int link;
  };
  struct Link {
    int a, b;  // as written: links[i] = [a, b]
    uint16_t port_a, port_b;
    DataRate bandwidth;
  };

  // Throws std::invalid_argument if a link names an unknown node or a name
  // repeats; the loader has already reported those as errors.
  explicit Graph(const TopologyConfig& t);

  int size() const { return static_cast<int>(names_.size()); }
  int host_count() const { return hosts_; }
  int link_count() const { return static_cast<int>(links_.size()); }
  std::optional<int> find(std::string_view name) const;
  const std::string& name(int n) const { return names_[n]; }
  NodeKind kind(int n) const { return kinds_[n]; }
  bool is_host(int n) const { return n < hosts_; }
  std::span<const Port> ports(int n) const { return ports_[n]; }
  const Link& link(int l) const { return links_[l]; }
  // The link between a and b in either direction.
  std::optional<int> find_link(int a, int b) const;
  // Channel (one direction of a link): 2 * link, plus 1 when it runs b -> a.
  int channel(int link, int from) const { return 2 * link + (links_[link].a == from ? 0 : 1); }

 private:
  int hosts_ = 0;
  std::vector<std::string> names_;
  std::vector<NodeKind> kinds_;
  std::unordered_map<std::string, int> index_;
  std::vector<std::vector<Port>> ports_;
  std::vector<Link> links_;
};

struct RouteOptions {
  std::vector<bool> usable;     // per link; empty: all. Mark down or STP-blocked links false.
  bool through_routers = true;  // false: routers do not forward (roce_v1 stays in its domain)
};

// For each node and each destination host, the local ports on a shortest
// path (hop count) towards it. Hosts never forward; a host's own entry is
// empty, as is an unreachable one. Ports are in ascending order.
class NextHops {
 public:
  std::span<const uint16_t> operator()(int node, int host) const {
    const size_t i = static_cast<size_t>(host) * nodes_ + node;
    return {ports_.data() + offset_[i], ports_.data() + offset_[i + 1]};
  }
  // Hops from node to host; -1 when unreachable.
  int distance(int node, int host) const { return distance_[static_cast<size_t>(host) * nodes_ + node]; }

 private:
  friend NextHops ecmp_next_hops(const Graph&, const RouteOptions&);
  size_t nodes_ = 0;
  std::vector<uint32_t> offset_;  // (host, node) -> first port in ports_
  std::vector<uint16_t> ports_;
  std::vector<int32_t> distance_;
};
NextHops ecmp_next_hops(const Graph& g, const RouteOptions& options = {});

// The same answers as ecmp_next_hops(g) (every link usable, routers
// forward), from a table of hop counts between the nodes that forward
// (switches and routers). A host forwards nothing, so every path towards
// a host runs through forwarding nodes to one of the host's own
// neighbours: (forwarding nodes)^2 entries answer for every (node, host),
// where NextHops holds nodes x hosts of each. A k = 16 fat tree: 320
// switches, 200 KiB, where NextHops took 17 MiB; k = 48: 17 MiB where it
// would take 8 GiB. Every rank of a split run holds one (docs/parallel.md).
class HostPaths {
 public:
  explicit HostPaths(const Graph& g);

  // Hops from node to host; 0 for the host itself, -1 when unreachable.
  int distance(int node, int host) const;
  // The local ports of node on a shortest path to host, ascending, into
  // `out` (emptied first): ecmp_next_hops(g)(node, host).
  void next_hops(int node, int host, std::vector<uint16_t>& out) const;
  // The first of them (ECMP's first choice), or -1 when there is none.
  int first_hop(int node, int host) const;
  // Hosts linked to the same nodes (a leaf's hosts) have the same next
  // hops from every node that is not one of those: attachment(host) numbers
  // such sets of neighbours 0 to attachments() - 1, so that a caller asking
  // for every host computes once per set (a k = 64 fat tree's switch: 2,048
  // sets for 65,536 hosts).
  int attachment(int host) const { return attachment_[static_cast<size_t>(host)]; }
  size_t attachments() const { return attachments_; }
  // Whether node is one of host's neighbours (its next hops are then its own).
  bool adjacent(int node, int host) const;
  // Heap bytes of the table.
  size_t bytes() const {
    return dist_.capacity() * sizeof(uint16_t) + row_.capacity() * sizeof(int32_t) +
           attachment_.capacity() * sizeof(int32_t);
  }

 private:
  static constexpr uint16_t kUnreachable = UINT16_MAX;
  // Hops between two forwarding nodes through forwarding nodes only.
  uint32_t between(int a, int b) const {
    return dist_[static_cast<size_t>(row_[static_cast<size_t>(a)]) * forwarding_ +
                 row_[static_cast<size_t>(b)]];
  }
  bool forwards(int n) const { return row_[static_cast<size_t>(n)] >= 0; }
  // Hops from a node that forwards to host; kUnreachable when none.
  uint32_t from_forwarding(int node, int host) const;
  // Whether port `p` of node, its distance `d` to host, is on a shortest path.
  bool on_path(int node, size_t p, int d, int host) const;

  const Graph& g_;
  std::vector<int32_t> row_;  // by node: its row among the forwarding nodes, -1 for a host
  size_t forwarding_ = 0;
  std::vector<uint16_t> dist_;       // forwarding_ x forwarding_
  std::vector<int32_t> attachment_;  // by host
  size_t attachments_ = 0;
};

// L2 broadcast domains. Bridges (switches) join the links they touch into
// one domain; hosts and routers end a domain (a router's ports lie in
// different domains, which is why roce_v1 cannot cross one). A node with
// links in several domains belongs to each.
struct BroadcastDomain {
  int root = -1;           // lowest-named switch; lowest-named node when there is no switch
  std::vector<int> nodes;  // ascending
  std::vector<int> links;  // ascending
};
struct BroadcastDomains {
  std::vector<BroadcastDomain> domains;
  std::vector<int> of_link;  // domain of each link
  bool same_domain(int a, int b) const;
};
BroadcastDomains broadcast_domains(const Graph& g);

// The spanning tree 802.1D STP converges to, per broadcast domain: root =
// lowest bridge id (here the lowest-named switch); every other node keeps its
// root port (least path cost to the root, then lowest designated bridge id,
// then lowest designated port, then lowest own port, IEEE 802.1D-2004 17.6)
// and every other link is blocked, so each domain is a tree: a domain with
// N nodes and L links blocks L - N + 1. Hosts and routers never bridge.
struct SpanningTree {
  BroadcastDomains domains;
  std::vector<bool> blocked;  // per link
  size_t blocked_count() const;
};
SpanningTree spanning_tree(const Graph& g);
// 802.1D-2004 Table 17-3 recommended port path cost: 20 Tb/s / rate, at least 1.
uint64_t stp_path_cost(DataRate rate);

// InfiniBand. The subnet manager here gives node n the LID n + 1: hosts get
// 1..H in topology.hosts order, then switches.
constexpr uint16_t ib_lid(int node) { return static_cast<uint16_t>(node + 1); }

// A linear forwarding table for every node: the one output port towards each
// destination host, as a switch's linear forwarding table holds. A host's entry names the port it sends
// on. -1: none (the host itself, or unreachable).
class ForwardingTable {
 public:
  ForwardingTable() = default;
  ForwardingTable(int nodes, int hosts) : nodes_(nodes), port_(static_cast<size_t>(nodes) * hosts, -1) {}
  int port(int node, int host) const { return port_[static_cast<size_t>(host) * nodes_ + node]; }
  void set(int node, int host, int port) {
    port_[static_cast<size_t>(host) * nodes_ + node] = static_cast<int16_t>(port);
  }

 private:
  size_t nodes_ = 0;
  std::vector<int16_t> port_;
};

// up*/down* roots when none are named: the switches farthest from every host
// (spines of a leaf-spine, cores of a fat tree).
std::vector<int> updown_default_roots(const Graph& g);
// BFS distance of each switch from the root set; hosts and switches the roots
// do not reach get INT32_MAX. A link's "up" end is the one with the lower
// (rank, name).
std::vector<int32_t> updown_ranks(const Graph& g, std::span<const int> roots);

// min_hop: among the ports on a shortest path, port number
//   choices[dlid % choices.size()], spreading destinations over equal paths.
// updown: the same choice among ports of legal up*/down* paths (no hop goes
//   up after one went down, Schroeder et al., Autonet 1991), preferring a
//   down path when one exists so that every table is consistent. `roots`
//   empty means updown_default_roots(g).
ForwardingTable ib_forwarding(const Graph& g, IbRouting routing, std::span<const int> roots = {});

// The channels (Graph::channel) a packet from host `from` to host `to` uses,
// following `t`; nullopt if the tables lose it or send it round in a loop.
std::optional<std::vector<int>> ib_path(const Graph& g, const ForwardingTable& t, int from, int to);

// Builds the channel dependency graph of every host-to-host path (Dally and
// Seitz 1987): credit-based flow control cannot deadlock when it is acyclic.
bool credit_loop_free(const Graph& g, const ForwardingTable& t);

}  // namespace rdmasim
