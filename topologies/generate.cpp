#include "topologies/generate.hpp"

namespace rdmasim {
namespace {

std::string indexed(const char* prefix, uint32_t i) { return prefix + std::to_string(i); }

void add_link(TopologyConfig& t, std::string a, std::string b, const LinkConfig& c) {
  t.links.push_back(LinkSpec{std::move(a), std::move(b), c});
}

}  // namespace

TopologyConfig generate_leaf_spine(uint32_t spines, uint32_t leaves, uint32_t hosts_per_leaf,
                                   const LinkConfig& host_link, const LinkConfig& fabric_link) {
  TopologyConfig t;
  t.generated = GeneratorKind::leaf_spine;
  for (uint32_t i = 0; i < leaves * hosts_per_leaf; ++i) t.hosts.push_back(indexed("h", i));
  for (uint32_t l = 0; l < leaves; ++l) t.switches.push_back(indexed("leaf", l));
  for (uint32_t s = 0; s < spines; ++s) t.switches.push_back(indexed("spine", s));
  for (uint32_t i = 0; i < leaves * hosts_per_leaf; ++i)
    add_link(t, indexed("h", i), indexed("leaf", i / hosts_per_leaf), host_link);
  for (uint32_t l = 0; l < leaves; ++l)
    for (uint32_t s = 0; s < spines; ++s) add_link(t, indexed("leaf", l), indexed("spine", s), fabric_link);
  return t;
}

TopologyConfig generate_fat_tree(uint32_t k, const LinkConfig& host_link, const LinkConfig& fabric_link) {
  const uint32_t half = k / 2;
  const uint32_t edges = k * half, hosts = edges * half, cores = half * half;
  TopologyConfig t;
  t.generated = GeneratorKind::fat_tree;
  for (uint32_t i = 0; i < hosts; ++i) t.hosts.push_back(indexed("h", i));
  for (uint32_t e = 0; e < edges; ++e) t.switches.push_back(indexed("edge", e));
  for (uint32_t a = 0; a < edges; ++a) t.switches.push_back(indexed("agg", a));
  for (uint32_t c = 0; c < cores; ++c) t.switches.push_back(indexed("core", c));
  for (uint32_t i = 0; i < hosts; ++i) add_link(t, indexed("h", i), indexed("edge", i / half), host_link);
  for (uint32_t e = 0; e < edges; ++e) {
    const uint32_t pod = e / half;
    for (uint32_t a = 0; a < half; ++a)
      add_link(t, indexed("edge", e), indexed("agg", pod * half + a), fabric_link);
  }
  for (uint32_t a = 0; a < edges; ++a) {
    const uint32_t i = a % half;  // position of the aggregation switch in its pod
    for (uint32_t c = 0; c < half; ++c)
      add_link(t, indexed("agg", a), indexed("core", i * half + c), fabric_link);
  }
  return t;
}

TopologyConfig generate_star(uint32_t hosts, const LinkConfig& host_link) {
  TopologyConfig t;
  t.generated = GeneratorKind::star;
  t.switches.push_back("s0");
  for (uint32_t i = 0; i < hosts; ++i) {
    t.hosts.push_back(indexed("h", i));
    add_link(t, indexed("h", i), "s0", host_link);
  }
  return t;
}

}  // namespace rdmasim
