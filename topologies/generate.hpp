// Topology generators. Names and link order are part of the contract
// (docs/design.md, docs/yaml.md): hosts h0, h1, ...; leaf_spine: leaf0.., spine0..;
// fat_tree: edge0.., agg0.., core0..; star: s0. Host links come first, then
// switch-to-switch links from the bottom tier up, so a switch's down ports
// have the lowest numbers and a host's only port is 0.
#pragma once

#include <cstdint>

#include "topologies/config.hpp"

namespace rdmasim {

// `leaves` leaf switches with `hosts_per_leaf` hosts each, every leaf linked
// to every spine. Host h(i) hangs off leaf(i / hosts_per_leaf).
TopologyConfig generate_leaf_spine(uint32_t spines, uint32_t leaves, uint32_t hosts_per_leaf,
                                   const LinkConfig& host_link, const LinkConfig& fabric_link);

// The k-ary fat tree of Al-Fares et al. (SIGCOMM 2008), k even: k pods of
// k/2 edge and k/2 aggregation switches, (k/2)^2 core switches, k^3/4 hosts.
// Edge e (pod e / (k/2)) holds hosts h(e*k/2) .. h(e*k/2 + k/2 - 1) and links
// to every aggregation switch of its pod; aggregation switch i of a pod
// (i = 0 .. k/2-1) links to core i*k/2 .. i*k/2 + k/2 - 1.
TopologyConfig generate_fat_tree(uint32_t k, const LinkConfig& host_link, const LinkConfig& fabric_link);

// `hosts` hosts on one switch s0.
TopologyConfig generate_star(uint32_t hosts, const LinkConfig& host_link);

}  // namespace rdmasim
