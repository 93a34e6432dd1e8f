#include "topologies/routing.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/topological_sort.hpp>
#include <boost/pending/disjoint_sets.hpp>
#include <climits>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

namespace rdmasim {

Graph::Graph(const TopologyConfig& t) {
  auto add = [&](const std::vector<std::string>& names, NodeKind k) {
    for (const std::string& n : names) {
      if (!index_.emplace(n, size()).second) throw std::invalid_argument("duplicate node name " + n);
      names_.push_back(n);
      kinds_.push_back(k);
    }
  };
  add(t.hosts, NodeKind::host);
  hosts_ = size();
  add(t.switches, NodeKind::switch_node);
  add(t.routers, NodeKind::router);
  ports_.resize(names_.size());
  for (const LinkSpec& l : t.links) {
    const auto a = find(l.a), b = find(l.b);
    if (!a || !b) throw std::invalid_argument("link " + l.a + " - " + l.b + " names an unknown node");
    const int li = link_count();
    if (ports_[*a].size() >= kMaxPortsPerNode || ports_[*b].size() >= kMaxPortsPerNode)
      throw std::invalid_argument("link " + l.a + " - " + l.b + ": more than 65536 links at one node");
    const auto pa = static_cast<uint16_t>(ports_[*a].size()), pb = static_cast<uint16_t>(ports_[*b].size());
    ports_[*a].push_back({*b, pb, li});
    ports_[*b].push_back({*a, pa, li});
    links_.push_back({*a, *b, pa, pb, l.config.bandwidth});
  }
}

std::optional<int> Graph::find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

std::optional<int> Graph::find_link(int a, int b) const {
  for (const Port& p : ports_[a])
    if (p.peer == b) return p.link;
  return std::nullopt;
}

namespace {

// Each link becomes two arcs, one per direction, so that filters can tell
// which end forwards.
struct Arc {
  int link = 0;
  uint64_t cost = 1;
};
using Digraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, Arc>;
using ArcId = boost::graph_traits<Digraph>::edge_descriptor;

Digraph to_digraph(const Graph& g) {
  Digraph d(static_cast<size_t>(g.size()));
  for (int l = 0; l < g.link_count(); ++l) {
    const Graph::Link& k = g.link(l);
    const uint64_t cost = stp_path_cost(k.bandwidth);
    boost::add_edge(k.a, k.b, Arc{l, cost}, d);
    boost::add_edge(k.b, k.a, Arc{l, cost}, d);
  }
  return d;
}

// Keeps the arcs `allow(from, to, link)` accepts.
struct ArcFilter {
  const Digraph* d = nullptr;
  const std::function<bool(int, int, int)>* allow = nullptr;
  bool operator()(const ArcId& e) const {
    return (*allow)(static_cast<int>(boost::source(e, *d)), static_cast<int>(boost::target(e, *d)),
                    (*d)[e].link);
  }
};

// Hop counts from `sources` over the arcs `allow` accepts; -1 where unreached.
std::vector<int32_t> bfs(const Digraph& d, std::span<const int> sources,
                         const std::function<bool(int, int, int)>& allow) {
  std::vector<int32_t> dist(boost::num_vertices(d), -1);
  if (sources.empty()) return dist;
  for (int s : sources) dist[s] = 0;
  boost::filtered_graph<Digraph, ArcFilter> fg(d, ArcFilter{&d, &allow});
  boost::queue<size_t> q;
  std::vector<boost::default_color_type> color(boost::num_vertices(d), boost::white_color);
  std::vector<size_t> src(sources.begin(), sources.end());
  boost::breadth_first_search(
      fg, src.begin(), src.end(), q,
      boost::make_bfs_visitor(boost::record_distances(dist.data(), boost::on_tree_edge())),
      boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, d)));
  return dist;
}

bool is_transit(const Graph& g, int n, bool through_routers) {
  const NodeKind k = g.kind(n);
  return k == NodeKind::switch_node || (k == NodeKind::router && through_routers);
}

}  // namespace

NextHops ecmp_next_hops(const Graph& g, const RouteOptions& options) {
  const Digraph d = to_digraph(g);
  auto usable = [&](int l) { return options.usable.empty() || options.usable[l]; };
  NextHops r;
  r.nodes_ = static_cast<size_t>(g.size());
  r.offset_.reserve(r.nodes_ * g.host_count() + 1);
  r.distance_.reserve(r.nodes_ * g.host_count());
  r.offset_.push_back(0);
  for (int dst = 0; dst < g.host_count(); ++dst) {
    // Distances towards dst: search outwards from it; a node passes the search
    // on only if it forwards (hosts do not).
    const std::function<bool(int, int, int)> allow = [&](int from, int, int link) {
      return usable(link) && (from == dst || is_transit(g, from, options.through_routers));
    };
    const int src[] = {dst};
    const std::vector<int32_t> dist = bfs(d, src, allow);
    for (int v = 0; v < g.size(); ++v) {
      r.distance_.push_back(dist[v]);
      if (dist[v] > 0) {
        for (size_t p = 0; p < g.ports(v).size(); ++p) {
          const Graph::Port& port = g.ports(v)[p];
          if (usable(port.link) && dist[port.peer] == dist[v] - 1 &&
              (port.peer == dst || is_transit(g, port.peer, options.through_routers)))
            r.ports_.push_back(static_cast<uint16_t>(p));
        }
      }
      r.offset_.push_back(static_cast<uint32_t>(r.ports_.size()));
    }
  }
  return r;
}

HostPaths::HostPaths(const Graph& g) : g_(g), row_(static_cast<size_t>(g.size()), -1) {
  std::vector<int> nodes;  // the forwarding nodes, by row
  for (int n = 0; n < g.size(); ++n)
    if (is_transit(g, n, true)) {
      row_[static_cast<size_t>(n)] = static_cast<int32_t>(nodes.size());
      nodes.push_back(n);
    }
  forwarding_ = nodes.size();
  std::map<std::vector<int>, int32_t> sets;
  std::vector<int> peers;
  attachment_.reserve(static_cast<size_t>(g.host_count()));
  for (int h = 0; h < g.host_count(); ++h) {
    peers.clear();
    for (const Graph::Port& p : g.ports(h)) peers.push_back(p.peer);
    std::sort(peers.begin(), peers.end());
    attachment_.push_back(sets.try_emplace(peers, static_cast<int32_t>(sets.size())).first->second);
  }
  attachments_ = sets.size();
  dist_.assign(forwarding_ * forwarding_, kUnreachable);
  std::vector<int> queue;
  for (size_t s = 0; s < forwarding_; ++s) {
    // Breadth first from nodes[s] over forwarding nodes.
    uint16_t* d = dist_.data() + s * forwarding_;
    d[s] = 0;
    queue.assign(1, nodes[s]);
    for (size_t i = 0; i < queue.size(); ++i) {
      const int v = queue[i];
      const uint16_t next = static_cast<uint16_t>(d[row_[static_cast<size_t>(v)]] + 1);
      for (const Graph::Port& p : g.ports(v)) {
        const int32_t r = row_[static_cast<size_t>(p.peer)];
        if (r < 0 || d[r] != kUnreachable) continue;
        d[r] = next;
        queue.push_back(p.peer);
      }
    }
  }
}

bool HostPaths::adjacent(int node, int host) const {
  for (const Graph::Port& p : g_.ports(host))
    if (p.peer == node) return true;
  return false;
}

uint32_t HostPaths::from_forwarding(int node, int host) const {
  uint32_t best = kUnreachable;
  for (const Graph::Port& p : g_.ports(host)) {
    if (p.peer == node) return 1;
    if (!forwards(p.peer)) continue;
    const uint32_t d = between(node, p.peer);
    if (d != kUnreachable) best = std::min(best, d + 1);
  }
  return best;
}

int HostPaths::distance(int node, int host) const {
  if (node == host) return 0;
  if (forwards(node)) {
    const uint32_t d = from_forwarding(node, host);
    return d == kUnreachable ? -1 : static_cast<int>(d);
  }
  // A host: through a neighbour that forwards, or straight to `host`.
  uint32_t best = kUnreachable;
  for (const Graph::Port& p : g_.ports(node)) {
    if (p.peer == host) return 1;
    if (!forwards(p.peer)) continue;
    const uint32_t d = from_forwarding(p.peer, host);
    if (d != kUnreachable) best = std::min(best, d + 1);
  }
  return best == kUnreachable ? -1 : static_cast<int>(best);
}

bool HostPaths::on_path(int node, size_t p, int d, int host) const {
  const int peer = g_.ports(node)[p].peer;
  if (peer == host) return d == 1;
  return forwards(peer) && from_forwarding(peer, host) == static_cast<uint32_t>(d - 1);
}

void HostPaths::next_hops(int node, int host, std::vector<uint16_t>& out) const {
  out.clear();
  const int d = distance(node, host);
  if (d <= 0) return;
  if (d ==
      1) {  // node's own links to host, found from the host's few ports, not the node's (a star's 65,536)
    for (const Graph::Port& p : g_.ports(host))
      if (p.peer == node) out.push_back(p.peer_port);
    std::sort(out.begin(), out.end());
    return;
  }
  for (size_t p = 0; p < g_.ports(node).size(); ++p)
    if (on_path(node, p, d, host)) out.push_back(static_cast<uint16_t>(p));
}

int HostPaths::first_hop(int node, int host) const {
  const int d = distance(node, host);
  if (d <= 0) return -1;
  if (d == 1) {
    int first = -1;
    for (const Graph::Port& p : g_.ports(host))
      if (p.peer == node && (first < 0 || p.peer_port < first)) first = p.peer_port;
    return first;
  }
  for (size_t p = 0; p < g_.ports(node).size(); ++p)
    if (on_path(node, p, d, host)) return static_cast<int>(p);
  return -1;
}

bool BroadcastDomains::same_domain(int a, int b) const {
  for (const BroadcastDomain& d : domains)
    if (std::binary_search(d.nodes.begin(), d.nodes.end(), a) &&
        std::binary_search(d.nodes.begin(), d.nodes.end(), b))
      return true;
  return false;
}

BroadcastDomains broadcast_domains(const Graph& g) {
  // A bridge joins all the links it touches; nothing else joins links.
  const size_t n = static_cast<size_t>(g.link_count());
  std::vector<size_t> rank(n), parent(n);
  boost::disjoint_sets<size_t*, size_t*> sets(rank.data(), parent.data());
  for (size_t l = 0; l < n; ++l) sets.make_set(l);
  for (int v = 0; v < g.size(); ++v) {
    if (g.kind(v) != NodeKind::switch_node) continue;
    const auto ports = g.ports(v);
    for (size_t p = 1; p < ports.size(); ++p)
      sets.union_set(static_cast<size_t>(ports[0].link), static_cast<size_t>(ports[p].link));
  }
  BroadcastDomains r;
  r.of_link.assign(n, -1);
  std::vector<int> domain_of_set(n, -1);
  for (size_t l = 0; l < n; ++l) {
    int& dom = domain_of_set[sets.find_set(l)];
    if (dom < 0) {
      dom = static_cast<int>(r.domains.size());
      r.domains.emplace_back();
    }
    r.of_link[l] = dom;
    BroadcastDomain& bd = r.domains[dom];
    bd.links.push_back(static_cast<int>(l));
    bd.nodes.push_back(g.link(static_cast<int>(l)).a);
    bd.nodes.push_back(g.link(static_cast<int>(l)).b);
  }
  for (BroadcastDomain& bd : r.domains) {
    std::sort(bd.nodes.begin(), bd.nodes.end());
    bd.nodes.erase(std::unique(bd.nodes.begin(), bd.nodes.end()), bd.nodes.end());
    // Root: lowest bridge id among the switches, as STP elects it.
    auto lower = [&](int x, int y) { return g.name(x) < g.name(y); };
    for (int v : bd.nodes)
      if (g.kind(v) == NodeKind::switch_node && (bd.root < 0 || lower(v, bd.root))) bd.root = v;
    if (bd.root < 0) bd.root = *std::min_element(bd.nodes.begin(), bd.nodes.end(), lower);
  }
  return r;
}

uint64_t stp_path_cost(DataRate rate) {
  return std::max<uint64_t>(1, 20'000'000'000'000ull / std::max<uint64_t>(1, rate.bps()));
}

size_t SpanningTree::blocked_count() const {
  return static_cast<size_t>(std::count(blocked.begin(), blocked.end(), true));
}

SpanningTree spanning_tree(const Graph& g) {
  SpanningTree st;
  st.domains = broadcast_domains(g);
  st.blocked.assign(static_cast<size_t>(g.link_count()), true);
  const Digraph d = to_digraph(g);
  for (size_t di = 0; di < st.domains.domains.size(); ++di) {
    const BroadcastDomain& bd = st.domains.domains[di];
    auto bridges = [&](int v) { return v == bd.root || g.kind(v) == NodeKind::switch_node; };
    const std::function<bool(int, int, int)> allow = [&](int from, int, int link) {
      return st.domains.of_link[link] == static_cast<int>(di) && bridges(from);
    };
    boost::filtered_graph<Digraph, ArcFilter> fg(d, ArcFilter{&d, &allow});
    std::vector<uint64_t> cost(boost::num_vertices(d));
    boost::dijkstra_shortest_paths(fg, static_cast<size_t>(bd.root),
                                   boost::weight_map(boost::get(&Arc::cost, d))
                                       .distance_map(boost::make_iterator_property_map(
                                           cost.begin(), boost::get(boost::vertex_index, d))));
    // Each node other than the root keeps its root port (802.1D-2004 17.6:
    // root path cost, designated bridge id, designated port id, own port id).
    for (int v : bd.nodes) {
      if (v == bd.root) continue;
      std::optional<std::tuple<const std::string*, uint16_t, uint16_t, int>> best;
      for (size_t p = 0; p < g.ports(v).size(); ++p) {
        const Graph::Port& port = g.ports(v)[p];
        if (st.domains.of_link[port.link] != static_cast<int>(di) || !bridges(port.peer)) continue;
        if (cost[port.peer] + stp_path_cost(g.link(port.link).bandwidth) != cost[v]) continue;
        auto key = std::make_tuple(&g.name(port.peer), port.peer_port, static_cast<uint16_t>(p), port.link);
        auto less = [](const auto& x, const auto& y) {
          return std::tie(*std::get<0>(x), std::get<1>(x), std::get<2>(x)) <
                 std::tie(*std::get<0>(y), std::get<1>(y), std::get<2>(y));
        };
        if (!best || less(key, *best)) best = key;
      }
      if (best) st.blocked[std::get<3>(*best)] = false;
    }
  }
  return st;
}

// ---- InfiniBand ------------------------------------------------------------

std::vector<int> updown_default_roots(const Graph& g) {
  const Digraph d = to_digraph(g);
  std::vector<int> hosts(static_cast<size_t>(g.host_count()));
  for (int h = 0; h < g.host_count(); ++h) hosts[h] = h;
  const std::function<bool(int, int, int)> allow = [&](int, int to, int) { return !g.is_host(to); };
  const std::vector<int32_t> dist = bfs(d, hosts, allow);
  int32_t far = 0;
  for (int v = g.host_count(); v < g.size(); ++v) far = std::max(far, dist[v]);
  std::vector<int> roots;
  for (int v = g.host_count(); v < g.size(); ++v)
    if (far > 0 && dist[v] == far) roots.push_back(v);
  return roots;
}

std::vector<int32_t> updown_ranks(const Graph& g, std::span<const int> roots) {
  const Digraph d = to_digraph(g);
  const std::function<bool(int, int, int)> allow = [&](int from, int to, int) {
    return !g.is_host(from) && !g.is_host(to);
  };
  std::vector<int32_t> rank = bfs(d, roots, allow);
  for (int32_t& r : rank)
    if (r < 0) r = INT32_MAX;
  for (int h = 0; h < g.host_count(); ++h) rank[h] = INT32_MAX;
  return rank;
}

namespace {

// Picks the port for destination lid among equal choices (ascending ports).
int spread(std::span<const uint16_t> choices, int dst) {
  if (choices.empty()) return -1;
  return choices[ib_lid(dst) % choices.size()];
}

ForwardingTable updown_forwarding(const Graph& g, std::span<const int> roots) {
  const std::vector<int32_t> rank = updown_ranks(g, roots);
  // Hosts sit below every switch: a hop from a host is up, a hop to one down.
  auto below = [&](int x, int y) {  // is x lower in the hierarchy than y?
    if (g.is_host(x) != g.is_host(y)) return g.is_host(x);
    return std::tie(rank[x], g.name(x)) > std::tie(rank[y], g.name(y));
  };
  std::vector<int> switches_up;  // non-hosts from the top of the hierarchy down
  for (int v = g.host_count(); v < g.size(); ++v) switches_up.push_back(v);
  std::sort(switches_up.begin(), switches_up.end(), [&](int x, int y) { return below(y, x); });

  const Digraph d = to_digraph(g);
  ForwardingTable t(g.size(), g.host_count());
  std::vector<uint16_t> choices;
  for (int dst = 0; dst < g.host_count(); ++dst) {
    // down[v]: hops from v to dst going only down. Search from dst: v reaches
    // x by a down hop when v is a switch above x, and x forwards (or is dst).
    const std::function<bool(int, int, int)> allow = [&](int x, int v, int) {
      return (x == dst || !g.is_host(x)) && !g.is_host(v) && below(x, v);
    };
    const int src[] = {dst};
    const std::vector<int32_t> down = bfs(d, src, allow);
    // best[v]: hops of v's legal path, down if there is one, else up first.
    std::vector<int32_t> best(static_cast<size_t>(g.size()), -1);
    best[dst] = 0;
    for (int v : switches_up) {
      choices.clear();
      const auto ports = g.ports(v);
      if (down[v] >= 0) {
        best[v] = down[v];
        for (size_t p = 0; p < ports.size(); ++p)
          if (below(ports[p].peer, v) && (ports[p].peer == dst || !g.is_host(ports[p].peer)) &&
              down[ports[p].peer] == down[v] - 1)
            choices.push_back(static_cast<uint16_t>(p));
      } else {
        for (const Graph::Port& p : ports)
          if (below(v, p.peer) && best[p.peer] >= 0 && (best[v] < 0 || best[p.peer] + 1 < best[v]))
            best[v] = best[p.peer] + 1;
        for (size_t p = 0; p < ports.size(); ++p)
          if (below(v, ports[p].peer) && best[v] >= 0 && best[ports[p].peer] == best[v] - 1)
            choices.push_back(static_cast<uint16_t>(p));
      }
      t.set(v, dst, spread(choices, dst));
    }
    // A source host: straight to dst over a direct link, else up to the
    // switch with the shortest legal path.
    for (int h = 0; h < g.host_count(); ++h) {
      if (h == dst) continue;
      const auto ports = g.ports(h);
      choices.clear();
      for (size_t p = 0; p < ports.size(); ++p)
        if (ports[p].peer == dst) choices.push_back(static_cast<uint16_t>(p));
      if (choices.empty()) {
        int32_t least = -1;
        for (const Graph::Port& p : ports)
          if (!g.is_host(p.peer) && best[p.peer] >= 0 && (least < 0 || best[p.peer] < least))
            least = best[p.peer];
        for (size_t p = 0; p < ports.size(); ++p)
          if (least >= 0 && !g.is_host(ports[p].peer) && best[ports[p].peer] == least)
            choices.push_back(static_cast<uint16_t>(p));
      }
      t.set(h, dst, spread(choices, dst));
    }
  }
  return t;
}

}  // namespace

ForwardingTable ib_forwarding(const Graph& g, IbRouting routing, std::span<const int> roots) {
  if (routing == IbRouting::updown) {
    if (!roots.empty()) return updown_forwarding(g, roots);
    return updown_forwarding(g, updown_default_roots(g));
  }
  const HostPaths paths(g);
  ForwardingTable t(g.size(), g.host_count());
  std::vector<uint16_t> hops;
  for (int dst = 0; dst < g.host_count(); ++dst)
    for (int v = 0; v < g.size(); ++v) {
      paths.next_hops(v, dst, hops);
      t.set(v, dst, spread(hops, dst));
    }
  return t;
}

std::optional<std::vector<int>> ib_path(const Graph& g, const ForwardingTable& t, int from, int to) {
  std::vector<int> channels;
  int at = from;
  while (at != to) {
    const int p = t.port(at, to);
    if (p < 0 || static_cast<int>(channels.size()) >= g.size()) return std::nullopt;
    const Graph::Port& port = g.ports(at)[p];
    if (at != from && g.is_host(at)) return std::nullopt;  // hosts do not forward
    channels.push_back(g.channel(port.link, at));
    at = port.peer;
  }
  return channels;
}

bool credit_loop_free(const Graph& g, const ForwardingTable& t) {
  // Vertices are channels; an arc c1 -> c2 says a packet holding buffer
  // space on c1 waits for credits on c2: the consecutive channels of every
  // host pair's path (ib_path). Forwarding is by destination, so towards
  // one destination every path that meets a node goes on as the first one
  // through it did: each node's way on is walked once a destination (its
  // arcs added then; a later path adds only the arc into it), where every
  // pair's whole path was walked and added (hosts^2: a k = 32 fat tree's
  // set-up spent most of its 29 s here).
  using Cdg = boost::adjacency_list<boost::setS, boost::vecS, boost::directedS>;
  Cdg cdg(2 * static_cast<size_t>(g.link_count()));
  enum : uint8_t { kUnknown, kReaches, kFails };
  std::vector<uint8_t> way(static_cast<size_t>(g.size()));  // a forwarding node's, towards dst
  std::vector<bool> walked(static_cast<size_t>(g.size()));
  std::vector<int> nodes, channels;
  auto out_channel = [&](int at, int dst) {
    return g.channel(g.ports(at)[static_cast<size_t>(t.port(at, dst))].link, at);
  };
  for (int dst = 0; dst < g.host_count(); ++dst) {
    std::fill(way.begin(), way.end(), kUnknown);
    for (int s = 0; s < g.host_count(); ++s) {
      if (s == dst) continue;
      nodes.clear();
      channels.clear();
      // As ib_path: from s, over nodes that forward, to dst; a node known
      // to reach dst ends the walk (joined), one known not to fails it.
      int at = s;
      bool reaches = false, joined = false;
      for (;;) {
        if (at == dst) {
          reaches = true;
          break;
        }
        if (!channels.empty()) {
          if (at == s || g.is_host(at) || way[static_cast<size_t>(at)] == kFails ||
              walked[static_cast<size_t>(at)])
            break;  // back at the source, a host that does not forward, a dead end, a loop
          if (way[static_cast<size_t>(at)] == kReaches) {
            reaches = joined = true;
            break;
          }
          walked[static_cast<size_t>(at)] = true;
          nodes.push_back(at);
        }
        const int p = t.port(at, dst);
        if (p < 0) break;
        const Graph::Port& port = g.ports(at)[static_cast<size_t>(p)];
        channels.push_back(g.channel(port.link, at));
        at = port.peer;
      }
      for (int n : nodes) {
        walked[static_cast<size_t>(n)] = false;
        way[static_cast<size_t>(n)] = reaches ? kReaches : kFails;
      }
      if (!reaches) continue;
      for (size_t i = 1; i < channels.size(); ++i) boost::add_edge(channels[i - 1], channels[i], cdg);
      if (joined) boost::add_edge(channels.back(), out_channel(at, dst), cdg);
    }
  }
  std::vector<size_t> order;
  try {
    boost::topological_sort(cdg, std::back_inserter(order));
  } catch (const boost::not_a_dag&) {
    return false;
  }
  return true;
}

}  // namespace rdmasim
