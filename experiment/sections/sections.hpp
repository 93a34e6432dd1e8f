// The readers of an experiment file's sections, one a file, and the
// validate pass that runs once every section is read. Each reader checks
// its section's keys and values and fills its part of ExperimentConfig;
// checks that need several sections (names against the topology, paths
// between hosts, what a fabric's links must hold) are the validate pass's.
// Only the loader includes this (it brings in yaml-cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topologies/config.hpp"
#include "topologies/routing.hpp"
#include "topologies/yaml_reader.hpp"

namespace rdmasim {

// One experiment while it is read: the reader that collects errors, the
// config being filled, and what the validate pass needs to find again.
struct ExperimentDraft {
  ExperimentDraft(YamlReader& reader, ExperimentConfig& config) : c(reader), x(config) {}
  YamlReader& c;
  ExperimentConfig& x;
  std::optional<Graph> graph;  // the topology's, once it is read and has hosts

  // For the validate pass.
  std::optional<Entry> topology;       // the topology key
  std::vector<YAML::Node> link_nodes;  // per topology.links: where it was written
  std::optional<Entry> ib_roots, capture_list;
  std::optional<Entry> cc_algorithm;  // congestion_control.algorithm, when given
  std::optional<Entry> ecn_enabled;   // ecn.enabled, when given
  std::optional<Entry> ip_version;    // ip, when given
  std::vector<Entry> vlan_hosts;  // vlan.hosts' keys
  struct ReadWorkload {
    YAML::Node node;
    std::string path;
    size_t index;  // in x.workloads
  };
  std::vector<ReadWorkload> workloads_read;  // the workloads read without error
  std::optional<Entry> completion;           // host.completion, when given
  std::optional<Entry> stack;                // host.stack, when given
  std::optional<Entry> dpdk_cores;           // host.dpdk_cores, when given

  // "unknown node 'x' (did you mean ...)" against the topology's names.
  std::string unknown_node(const std::string& n) const;
};

// The whole file: its top-level keys, each section in turn, then validate().
void read_experiment(ExperimentDraft& d, const YAML::Node& root);

// `link:` and a link's own settings, on top of `base`.
LinkConfig read_link(ExperimentDraft& d, const YAML::Node& v, const std::string& path, LinkConfig base);
// Ethernet: `flow_control:`, `pfc:`, `ecn:`, `vlan:`.
void read_flow_control(ExperimentDraft& d, const Entry& e);
void read_pfc(ExperimentDraft& d, const Entry& e);
void read_ecn(ExperimentDraft& d, const Entry& e);
void read_vlan(ExperimentDraft& d, const Entry& e);
// `congestion_control:`; the old top-level `dcqcn:` is an error naming the new place.
void read_congestion_control(ExperimentDraft& d, const Entry& e);
void read_old_dcqcn(ExperimentDraft& d, const Entry& e);
void read_ib(ExperimentDraft& d, const Entry& e);
void read_tcp(ExperimentDraft& d, const Entry& e);  // iwarp
void read_mpa(ExperimentDraft& d, const Entry& e);  // iwarp
void read_switch(ExperimentDraft& d, const Entry& e);
void read_host(ExperimentDraft& d, const Entry& e);
void read_capture(ExperimentDraft& d, const Entry& e);
void read_topology(ExperimentDraft& d, const Entry& e);
void read_workloads(ExperimentDraft& d, const Entry& e);
void read_faults(ExperimentDraft& d, const Entry& e);
// `cost:`, and the whole of a --prices file (loader.hpp, load_cost_file).
void read_cost(YamlReader& c, const YAML::Node& v, const std::string& path, std::vector<CostSetting>& out);

// Every check that needs more than one section, and every check a run could
// otherwise only make once it has started.
void validate(ExperimentDraft& d);

}  // namespace rdmasim
