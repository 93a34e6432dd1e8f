#include "topologies/routing.hpp"

#include <doctest/doctest.h>

#include <climits>
#include <set>

#include "core/random.hpp"
#include "topologies/generate.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

TopologyConfig topology(std::vector<std::string> hosts, std::vector<std::string> switches,
                        std::vector<std::pair<std::string, std::string>> links,
                        std::vector<std::string> routers = {}) {
  TopologyConfig t;
  t.hosts = std::move(hosts);
  t.switches = std::move(switches);
  t.routers = std::move(routers);
  for (auto& [a, b] : links) t.links.push_back({a, b, {}});
  return t;
}

std::vector<uint16_t> ports(std::span<const uint16_t> s) { return {s.begin(), s.end()}; }

// A ring of n switches s0..s(n-1), host h(i) on s(i). Links: hosts first, then s(i) - s(i+1).
TopologyConfig ring(int n) {
  TopologyConfig t;
  for (int i = 0; i < n; ++i) {
    t.hosts.push_back("h" + std::to_string(i));
    t.switches.push_back("s" + std::to_string(i));
    t.links.push_back({t.hosts.back(), t.switches.back(), {}});
  }
  for (int i = 0; i < n; ++i)
    t.links.push_back({"s" + std::to_string(i), "s" + std::to_string((i + 1) % n), {}});
  return t;
}

void check_all_pairs_routed(const Graph& g, const ForwardingTable& t) {
  for (int a = 0; a < g.host_count(); ++a)
    for (int b = 0; b < g.host_count(); ++b) {
      if (a == b) continue;
      CAPTURE(g.name(a));
      CAPTURE(g.name(b));
      CHECK(ib_path(g, t, a, b));
    }
}

}  // namespace

TEST_CASE("routing: graph numbering") {
  const Graph g(topology({"a", "b"}, {"s1"}, {{"s1", "a"}, {"b", "s1"}}, {"r"}));
  CHECK(g.size() == 4);
  CHECK(g.host_count() == 2);
  CHECK(g.find("a") == 0);
  CHECK(g.find("s1") == 2);
  CHECK(g.find("r") == 3);
  CHECK_FALSE(g.find("zz"));
  CHECK(g.kind(3) == NodeKind::router);
  // Ports in link order: s1's port 0 goes to a, port 1 to b; a and b each have port 0.
  REQUIRE(g.ports(2).size() == 2);
  CHECK(g.ports(2)[0].peer == 0);
  CHECK(g.ports(2)[1].peer == 1);
  CHECK(g.ports(2)[1].peer_port == 0);
  CHECK(g.ports(1)[0].peer_port == 1);
  CHECK(g.link(1).a == 1);
  CHECK(g.link(1).port_b == 1);
  CHECK(g.find_link(2, 1) == 1);
  CHECK_FALSE(g.find_link(0, 1));
  CHECK(g.channel(1, 1) == 2);
  CHECK(g.channel(1, 2) == 3);
  CHECK(ib_lid(0) == 1);
}

TEST_CASE("routing: ECMP next hops on a leaf-spine") {
  const Graph g(generate_leaf_spine(4, 3, 2, {}, {}));  // leaf ports: 0,1 hosts; 2..5 spines
  const NextHops hops = ecmp_next_hops(g);
  const int h0 = *g.find("h0"), h1 = *g.find("h1"), h5 = *g.find("h5");
  const int leaf0 = *g.find("leaf0"), leaf2 = *g.find("leaf2"), spine3 = *g.find("spine3");
  // Across leaves every spine is on a shortest path; on the same leaf only the host port.
  CHECK(ports(hops(leaf0, h5)) == std::vector<uint16_t>{2, 3, 4, 5});
  CHECK(ports(hops(leaf0, h1)) == std::vector<uint16_t>{1});
  CHECK(ports(hops(spine3, h5)) == std::vector<uint16_t>{2});  // spine port 2 goes to leaf2
  CHECK(ports(hops(leaf2, h5)) == std::vector<uint16_t>{1});
  CHECK(ports(hops(h0, h5)) == std::vector<uint16_t>{0});
  CHECK(hops(h0, h0).empty());
  CHECK(hops.distance(h0, h5) == 4);
  CHECK(hops.distance(h0, h1) == 2);
  CHECK(hops.distance(spine3, h0) == 2);

  SUBCASE("a link marked unusable leaves the set") {
    RouteOptions o;
    o.usable.assign(static_cast<size_t>(g.link_count()), true);
    o.usable[*g.find_link(leaf0, *g.find("spine1"))] = false;
    const NextHops fewer = ecmp_next_hops(g, o);
    CHECK(ports(fewer(leaf0, h5)) == std::vector<uint16_t>{2, 4, 5});
    CHECK(ports(fewer(*g.find("spine1"), h0)) == std::vector<uint16_t>{1, 2});  // via another leaf and spine
    CHECK(fewer.distance(*g.find("spine1"), h0) == 4);
  }
}

TEST_CASE("routing: hosts never forward, routers only when allowed") {
  const Graph g(topology({"a", "b", "c"}, {"s1", "s2"},
                         {{"a", "s1"}, {"a", "b"}, {"b", "s2"}, {"s1", "r"}, {"r", "s2"}, {"c", "s2"}},
                         {"r"}));
  const NextHops routed = ecmp_next_hops(g);
  const int a = 0, b = 1, c = 2, s1 = 3;
  CHECK(routed.distance(a, c) == 4);                       // a s1 r s2 c, not through b
  CHECK(ports(routed(a, b)) == std::vector<uint16_t>{1});  // direct link
  CHECK(ports(routed(s1, c)) == std::vector<uint16_t>{1});
  RouteOptions l2;
  l2.through_routers = false;
  const NextHops bridged = ecmp_next_hops(g, l2);
  CHECK(bridged.distance(a, c) == -1);
  CHECK(bridged(s1, c).empty());
}

TEST_CASE("routing: broadcast domains end at routers") {
  const Graph g(topology(
      {"a", "b", "c", "d"}, {"s1", "s2", "s3"},
      {{"a", "s1"}, {"b", "s2"}, {"s1", "s2"}, {"s2", "r"}, {"r", "s3"}, {"c", "s3"}, {"c", "d"}}, {"r"}));
  const BroadcastDomains d = broadcast_domains(g);
  REQUIRE(d.domains.size() == 3);
  const int a = 0, b = 1, c = 2, dd = 3, r = *g.find("r");
  CHECK(d.same_domain(a, b));
  CHECK_FALSE(d.same_domain(a, c));
  CHECK(d.same_domain(c, dd));  // over their direct link
  CHECK(d.same_domain(r, a));   // the router's port lies in both domains
  CHECK(d.same_domain(r, c));
  const BroadcastDomain& first = d.domains[d.of_link[0]];
  CHECK(g.name(first.root) == "s1");
  CHECK(first.links == std::vector<int>{0, 1, 2, 3});
  CHECK(g.name(d.domains[d.of_link[6]].root) == "c");  // no switch: the lowest-named node
}

TEST_CASE("routing: the spanning tree blocks links - nodes + 1 per domain") {
  SUBCASE("leaf-spine, one domain") {
    const Graph g(generate_leaf_spine(2, 4, 8, {}, {}));
    const SpanningTree st = spanning_tree(g);
    REQUIRE(st.domains.domains.size() == 1);
    const int nodes = 32 + 6, links = 32 + 8;
    CHECK(st.blocked_count() == static_cast<size_t>(links - nodes + 1));
    // The root is the lowest-named switch, leaf0; all its links forward.
    CHECK(g.name(st.domains.domains[0].root) == "leaf0");
    for (const Graph::Port& p : g.ports(*g.find("leaf0"))) CHECK_FALSE(st.blocked[p.link]);
    // Host links always forward here (each host has one).
    for (int l = 0; l < 32; ++l) CHECK_FALSE(st.blocked[l]);
    // Each other leaf keeps one uplink: towards spine0 (lowest bridge id among equal-cost paths).
    const int leaf3 = *g.find("leaf3");
    CHECK_FALSE(st.blocked[*g.find_link(leaf3, *g.find("spine0"))]);
    CHECK(st.blocked[*g.find_link(leaf3, *g.find("spine1"))]);
  }
  SUBCASE("fat tree") {
    const Graph g(generate_fat_tree(4, {}, {}));
    const SpanningTree st = spanning_tree(g);
    CHECK(st.blocked_count() == static_cast<size_t>(48 - 36 + 1));
  }
  SUBCASE("two domains split by a router, each with a loop") {
    const Graph g(topology({"a", "b"}, {"s1", "s2", "s3", "t1", "t2"},
                           {{"a", "s1"},
                            {"s1", "s2"},
                            {"s2", "s3"},
                            {"s3", "s1"},
                            {"s3", "r"},
                            {"r", "t1"},
                            {"t1", "t2"},
                            {"t2", "t1x"},
                            {"b", "t2"}},
                           {"r", "t1x"}));
    // t1x is a router too, so t1 - t2 - t1x is no loop; only s1 s2 s3 is.
    const SpanningTree st = spanning_tree(g);
    REQUIRE(st.domains.domains.size() == 2);
    CHECK(st.blocked_count() == 1);
    for (const BroadcastDomain& d : st.domains.domains) {
      size_t blocked = 0;
      for (int l : d.links) blocked += st.blocked[l];
      CHECK(blocked == d.links.size() - d.nodes.size() + 1);
    }
    CHECK(st.blocked[*g.find_link(*g.find("s2"), *g.find("s3"))]);  // s2 and s3 both reach root s1 directly
  }
  SUBCASE("faster links win: path cost is 802.1D's 20 Tb/s / rate") {
    TopologyConfig t =
        topology({"a"}, {"s1", "s2", "s3"}, {{"a", "s3"}, {"s1", "s2"}, {"s2", "s3"}, {"s1", "s3"}});
    t.links[1].config.bandwidth = 400_Gbps;
    t.links[2].config.bandwidth = 400_Gbps;
    t.links[3].config.bandwidth = 10_Gbps;  // cost 2000 against 50 + 50
    const SpanningTree st = spanning_tree(Graph(t));
    CHECK(st.blocked == std::vector<bool>{false, false, false, true});
    CHECK(stp_path_cost(1_Gbps) == 20000);
    CHECK(stp_path_cost(100_Gbps) == 200);
  }
}

TEST_CASE("routing: roce_v1 forwarding over the spanning tree reaches every host once") {
  const Graph g(generate_leaf_spine(2, 3, 2, {}, {}));
  const SpanningTree st = spanning_tree(g);
  RouteOptions o;
  o.through_routers = false;
  o.usable.resize(st.blocked.size());
  for (size_t l = 0; l < st.blocked.size(); ++l) o.usable[l] = !st.blocked[l];
  const NextHops hops = ecmp_next_hops(g, o);
  for (int v = 0; v < g.size(); ++v)
    for (int h = 0; h < g.host_count(); ++h)
      if (v != h) CHECK(hops(v, h).size() == 1);  // a tree: one way only
}

TEST_CASE("routing: IB min_hop spreads destinations over equal ports") {
  const Graph g(generate_leaf_spine(4, 2, 8, {}, {}));
  const ForwardingTable t = ib_forwarding(g, IbRouting::min_hop);
  const int leaf0 = *g.find("leaf0");
  std::set<int> used;
  for (int h = 8; h < 16; ++h) {
    const int p = t.port(leaf0, h);
    CHECK(p == 8 + ib_lid(h) % 4);  // uplinks are ports 8..11
    used.insert(p);
  }
  CHECK(used.size() == 4);
  CHECK(t.port(leaf0, 3) == 3);
  CHECK(t.port(3, 3) == -1);
  check_all_pairs_routed(g, t);
}

namespace {
// The credit-loop check as it was: every host pair's whole path
// (ib_path), each two consecutive channels an arc; loop-free when the arcs
// can be ordered (Kahn's algorithm).
bool loop_free_by_pairs(const Graph& g, const ForwardingTable& t) {
  std::set<std::pair<int, int>> arcs;
  for (int s = 0; s < g.host_count(); ++s)
    for (int d = 0; d < g.host_count(); ++d) {
      if (s == d) continue;
      const auto path = ib_path(g, t, s, d);
      if (!path) continue;
      for (size_t i = 1; i < path->size(); ++i) arcs.insert({(*path)[i - 1], (*path)[i]});
    }
  std::vector<int> in(2 * static_cast<size_t>(g.link_count()));
  for (const auto& [a, b] : arcs) ++in[static_cast<size_t>(b)];
  std::vector<int> ready;
  for (size_t c = 0; c < in.size(); ++c)
    if (in[c] == 0) ready.push_back(static_cast<int>(c));
  size_t done = 0;
  while (!ready.empty()) {
    const int c = ready.back();
    ready.pop_back();
    ++done;
    for (auto it = arcs.lower_bound({c, INT_MIN}); it != arcs.end() && it->first == c; ++it)
      if (--in[static_cast<size_t>(it->second)] == 0) ready.push_back(it->second);
  }
  return done == in.size();
}
}  // namespace

TEST_CASE(
    "routing: the credit-loop check, a destination's ways walked once, agrees with every pair's paths") {
  Rng rng(5);
  int free = 0, looped = 0;
  for (const Graph& g :
       {Graph(ring(5)), Graph(generate_leaf_spine(2, 3, 2, {}, {})), Graph(generate_fat_tree(4, {}, {}))}) {
    // up*/down* (loop-free) and min_hop (loops on the ring) tables with a few
    // entries changed to another port or none: dead ends, paths through
    // hosts or back to the source, loops made or broken.
    for (const IbRouting routing : {IbRouting::updown, IbRouting::min_hop})
      for (int trial = 0; trial < 100; ++trial) {
        ForwardingTable t = ib_forwarding(g, routing);
        const int changes = static_cast<int>(rng.between(0, 4));
        for (int i = 0; i < changes; ++i) {
          const int v = static_cast<int>(rng.between(0, g.size() - 1));
          const int d = static_cast<int>(rng.between(0, g.host_count() - 1));
          const int ports = static_cast<int>(g.ports(v).size());
          t.set(v, d, ports == 0 ? -1 : static_cast<int>(rng.between(-1, ports - 1)));
        }
        const bool want = loop_free_by_pairs(g, t);
        CHECK(credit_loop_free(g, t) == want);
        (want ? free : looped) += 1;
      }
  }
  CHECK(free > 50);  // both answers were asked for
  CHECK(looped > 50);
}

TEST_CASE("routing: up*/down* roots and ranks") {
  SUBCASE("leaf-spine: the spines") {
    const Graph g(generate_leaf_spine(2, 4, 2, {}, {}));
    const auto roots = updown_default_roots(g);
    CHECK(roots == std::vector<int>{*g.find("spine0"), *g.find("spine1")});
    const auto rank = updown_ranks(g, roots);
    CHECK(rank[*g.find("spine1")] == 0);
    CHECK(rank[*g.find("leaf3")] == 1);
  }
  SUBCASE("fat tree: the cores") {
    const Graph g(generate_fat_tree(4, {}, {}));
    const auto roots = updown_default_roots(g);
    REQUIRE(roots.size() == 4);
    for (int r : roots) CHECK(g.name(r).rfind("core", 0) == 0);
    const auto rank = updown_ranks(g, roots);
    CHECK(rank[*g.find("agg5")] == 1);
    CHECK(rank[*g.find("edge5")] == 2);
  }
}

TEST_CASE("routing: up*/down* has no credit loops on leaf-spine and fat tree") {
  for (const TopologyConfig& topo :
       {generate_leaf_spine(2, 4, 4, {}, {}), generate_leaf_spine(3, 5, 2, {}, {}),
        generate_fat_tree(4, {}, {}), generate_fat_tree(6, {}, {})}) {
    const Graph g(topo);
    CAPTURE(g.size());
    const ForwardingTable t = ib_forwarding(g, IbRouting::updown);
    check_all_pairs_routed(g, t);
    CHECK(credit_loop_free(g, t));
    // On these trees the legal paths are also shortest ones.
    const NextHops hops = ecmp_next_hops(g);
    for (int a = 0; a < g.host_count(); ++a)
      for (int b = 0; b < g.host_count(); ++b)
        if (a != b) CHECK(static_cast<int>(ib_path(g, t, a, b)->size()) == hops.distance(a, b));
  }
}

TEST_CASE("routing: a ring has a credit loop under min_hop and none under up*/down*") {
  // Five switches: every two-hop path is unique and they chase each other round the ring.
  const Graph g(ring(5));
  const ForwardingTable min_hop = ib_forwarding(g, IbRouting::min_hop);
  check_all_pairs_routed(g, min_hop);
  CHECK_FALSE(credit_loop_free(g, min_hop));
  const ForwardingTable updown = ib_forwarding(g, IbRouting::updown);
  check_all_pairs_routed(g, updown);
  CHECK(credit_loop_free(g, updown));
  // With an explicit root as well.
  const int root[] = {*g.find("s2")};
  const ForwardingTable rooted = ib_forwarding(g, IbRouting::updown, root);
  check_all_pairs_routed(g, rooted);
  CHECK(credit_loop_free(g, rooted));
}

TEST_CASE("routing: ib_path refuses tables that loop or dead-end") {
  const Graph g(ring(3));
  ForwardingTable t(g.size(), g.host_count());
  CHECK_FALSE(ib_path(g, t, 0, 1));  // nothing set
  // h0 -> s0 -> s1 -> s0 -> ...
  t.set(0, 2, 0);
  t.set(*g.find("s0"), 2, 1);
  t.set(*g.find("s1"), 2, 1);
  CHECK(g.ports(*g.find("s1"))[1].peer == *g.find("s0"));
  CHECK_FALSE(ib_path(g, t, 0, 2));
}

namespace {
// HostPaths answers what ecmp_next_hops does, for every node and host.
void check_host_paths(const Graph& g) {
  const NextHops full = ecmp_next_hops(g);
  const HostPaths paths(g);
  const ForwardingTable ib = ib_forwarding(g, IbRouting::min_hop);
  std::vector<uint16_t> got;
  for (int h = 0; h < g.host_count(); ++h)
    for (int n = 0; n < g.size(); ++n) {
      CAPTURE(g.name(n));
      CAPTURE(g.name(h));
      CHECK(paths.distance(n, h) == full.distance(n, h));
      paths.next_hops(n, h, got);
      CHECK(got == ports(full(n, h)));
      CHECK(paths.first_hop(n, h) == (full(n, h).empty() ? -1 : full(n, h)[0]));
      // IB's min_hop table: among the equal ports, the one for the LID
      // (a host's entry towards itself -1).
      CHECK(ib.port(n, h) == (got.empty() ? -1 : got[ib_lid(h) % got.size()]));
    }
  // Hosts of one attachment have one set of next hops from every node not
  // among their neighbours (finish_l3 computes it once); other hosts are
  // attached elsewhere.
  std::vector<int> first_of(paths.attachments(), -1);
  for (int h = 0; h < g.host_count(); ++h) {
    CAPTURE(g.name(h));
    int& first = first_of.at(static_cast<size_t>(paths.attachment(h)));
    if (first < 0) {
      first = h;
      continue;
    }
    for (int n = 0; n < g.size(); ++n) {
      CHECK(paths.adjacent(n, h) == paths.adjacent(n, first));
      if (!paths.adjacent(n, h) && n != h && n != first) CHECK(ports(full(n, h)) == ports(full(n, first)));
    }
  }
  for (int h = 0; h + 1 < g.host_count(); ++h)
    for (int n = 0; n < g.size(); ++n)
      if (paths.adjacent(n, h) != paths.adjacent(n, h + 1))
        CHECK(paths.attachment(h) != paths.attachment(h + 1));
}
}  // namespace

TEST_CASE("routing: HostPaths gives ECMP's next hops and distances from the switches' table alone") {
  SUBCASE("fat tree") { check_host_paths(Graph(generate_fat_tree(4, {}, {}))); }
  SUBCASE("leaf-spine") { check_host_paths(Graph(generate_leaf_spine(4, 3, 2, {}, {}))); }
  SUBCASE("ring") { check_host_paths(Graph(ring(7))); }
  SUBCASE("routers forward, hosts do not, a host with two links, an unreachable host") {
    check_host_paths(Graph(topology({"a", "b", "c", "d", "e"}, {"s1", "s2", "s3"},
                                    {{"a", "s1"},
                                     {"a", "b"},
                                     {"b", "s2"},
                                     {"s1", "r"},
                                     {"r", "s2"},
                                     {"c", "s2"},
                                     {"c", "s2"},
                                     {"d", "e"},
                                     {"s3", "e"}},
                                    {"r"})));
  }
  SUBCASE("the table is (switches and routers)^2, not nodes x hosts") {
    const Graph g(generate_fat_tree(16, {}, {}));  // 1,024 hosts, 320 switches
    const HostPaths paths(g);
    CHECK(paths.bytes() <= 320 * 320 * 2 + g.size() * 4 + g.host_count() * 4);
    const int h0 = *g.find("h0"), h1023 = *g.find("h1023");
    CHECK(paths.distance(h0, h1023) == 6);
    CHECK(paths.distance(*g.find("edge0"), h1023) == 5);
  }
}

// Port numbers are 16-bit: a star of 65,536 hosts has a switch whose ports
// are numbered 0..65535, and a loop over them with a 16-bit counter never
// ended (the set-up of such a run hung).
TEST_CASE("routing: the 65,536th port of a star's switch") {
  const Graph g(generate_star(65536, {}));
  const int s0 = *g.find("s0"), last = *g.find("h65535");
  REQUIRE(g.ports(s0).size() == 65536);
  const HostPaths paths(g);
  std::vector<uint16_t> got;
  paths.next_hops(s0, last, got);
  CHECK(got == std::vector<uint16_t>{65535});
  CHECK(paths.first_hop(s0, last) == 65535);
  CHECK(paths.first_hop(*g.find("h0"), last) == 0);

  TopologyConfig more = generate_star(65536, {});
  more.switches.push_back("s1");
  more.links.push_back({"s0", "s1", {}});
  CHECK_THROWS_AS(Graph{more}, std::invalid_argument);
}
