#include "topologies/generate.hpp"

#include <doctest/doctest.h>

#include <map>
#include <set>

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

// Links per node.
std::map<std::string, int> degrees(const TopologyConfig& t) {
  std::map<std::string, int> d;
  for (const LinkSpec& l : t.links) ++d[l.a], ++d[l.b];
  return d;
}

std::set<std::string> neighbours(const TopologyConfig& t, const std::string& n) {
  std::set<std::string> s;
  for (const LinkSpec& l : t.links) {
    if (l.a == n) s.insert(l.b);
    if (l.b == n) s.insert(l.a);
  }
  return s;
}

}  // namespace

TEST_CASE("generate: leaf_spine counts, names and link order") {
  LinkConfig host, fabric;
  host.bandwidth = 25_Gbps;
  fabric.bandwidth = 400_Gbps;
  const TopologyConfig t = generate_leaf_spine(2, 4, 8, host, fabric);
  CHECK(t.generated == GeneratorKind::leaf_spine);
  CHECK(t.hosts.size() == 32);
  CHECK(t.switches == std::vector<std::string>{"leaf0", "leaf1", "leaf2", "leaf3", "spine0", "spine1"});
  CHECK(t.routers.empty());
  REQUIRE(t.links.size() == 32 + 4 * 2);
  CHECK(t.hosts.front() == "h0");
  CHECK(t.hosts.back() == "h31");
  // Host links first: h(i) on leaf(i / hosts_per_leaf), then leaf-spine links.
  CHECK(t.links[0].a == "h0");
  CHECK(t.links[0].b == "leaf0");
  CHECK(t.links[9].a == "h9");
  CHECK(t.links[9].b == "leaf1");
  CHECK(t.links[32].a == "leaf0");
  CHECK(t.links[32].b == "spine0");
  CHECK(t.links[33].b == "spine1");
  CHECK(t.links[0].config.bandwidth == 25_Gbps);
  CHECK(t.links[32].config.bandwidth == 400_Gbps);
  const auto d = degrees(t);
  CHECK(d.at("leaf2") == 8 + 2);
  CHECK(d.at("spine1") == 4);
  CHECK(d.at("h5") == 1);
}

TEST_CASE("generate: fat_tree k=4 has 16 hosts, 20 switches and 48 links") {
  const TopologyConfig t = generate_fat_tree(4, {}, {});
  CHECK(t.generated == GeneratorKind::fat_tree);
  CHECK(t.hosts.size() == 16);
  CHECK(t.switches.size() == 20);
  CHECK(t.links.size() == 48);
  CHECK(t.switches[0] == "edge0");
  CHECK(t.switches[8] == "agg0");
  CHECK(t.switches[16] == "core0");
  CHECK(t.switches[19] == "core3");
  // Edge switches hold k/2 hosts and reach the k/2 aggregation switches of their pod.
  CHECK(neighbours(t, "edge3") == std::set<std::string>{"h6", "h7", "agg2", "agg3"});
  // Aggregation switch i of a pod reaches cores i*k/2 .. i*k/2 + k/2 - 1.
  CHECK(neighbours(t, "agg3") == std::set<std::string>{"edge2", "edge3", "core2", "core3"});
  // Each core reaches one aggregation switch in every pod.
  CHECK(neighbours(t, "core1") == std::set<std::string>{"agg0", "agg2", "agg4", "agg6"});
  for (const auto& [node, degree] : degrees(t)) {
    CAPTURE(node);
    CHECK(degree == (node[0] == 'h' ? 1 : 4));  // every switch has k ports
  }
}

TEST_CASE("generate: fat_tree sizes follow k") {
  for (uint32_t k : {2u, 6u, 8u}) {
    CAPTURE(k);
    const TopologyConfig t = generate_fat_tree(k, {}, {});
    CHECK(t.hosts.size() == k * k * k / 4);
    CHECK(t.switches.size() == 5 * k * k / 4);
    CHECK(t.links.size() == 3 * k * k * k / 4);
  }
}

TEST_CASE("generate: star") {
  const TopologyConfig t = generate_star(3, {});
  CHECK(t.hosts == std::vector<std::string>{"h0", "h1", "h2"});
  CHECK(t.switches == std::vector<std::string>{"s0"});
  CHECK(t.links.size() == 3);
}
