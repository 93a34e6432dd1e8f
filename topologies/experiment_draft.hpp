// One experiment file while it is read: the reader that collects errors,
// the config being filled, and what the validate pass needs to find again.
// The section readers (experiment/sections/, and each fabric's in its
// folder) fill it. Only readers include this (it brings in yaml-cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topologies/config.hpp"
#include "topologies/routing.hpp"
#include "topologies/yaml_reader.hpp"

namespace rdmasim {

struct ExperimentDraft {
  ExperimentDraft(YamlReader& reader, ExperimentConfig& config) : c(reader), x(config) {}
  YamlReader& c;
  ExperimentConfig& x;
  std::optional<Graph> graph;  // the topology's, once it is read and has hosts
  // A link was left out for naming an unknown node or being malformed: what
  // follows from the missing link (a host without one, a pair that cannot
  // reach) is not reported, so the first error is the link's own.
  bool links_incomplete = false;

  // For the validate pass.
  std::optional<Entry> topology;       // the topology key
  std::vector<YAML::Node> link_nodes;  // per topology.links: where it was written
  std::optional<Entry> capture_list;
  std::optional<Entry> timeseries_ports;  // capture.timeseries.ports, when a list
  std::optional<Entry> timeseries_qps;    // capture.timeseries.qps, when a list
  std::optional<Entry> cc_algorithm;      // congestion_control.algorithm, when given
  std::optional<Entry> cc_control;        // congestion_control.control_priority, when given
  std::optional<Entry> ecn_enabled;       // ecn.enabled, when given
  std::optional<Entry> ip_version;        // ip, when given
  std::optional<Entry> completion;        // host.completion, when given
  std::optional<Entry> loss_recovery;     // loss_recovery, when given
  std::optional<Entry> stack;             // host.stack, when given
  std::optional<Entry> dpdk_cores;        // host.dpdk_cores, when given
  struct ReadWorkload {
    YAML::Node node;
    std::string path;
    size_t index;  // in x.workloads
  };
  std::vector<ReadWorkload> workloads_read;  // the workloads read without error

  // "unknown node 'x' (did you mean ...)" against the topology's names.
  std::string unknown_node(const std::string& n) const;
};

}  // namespace rdmasim
