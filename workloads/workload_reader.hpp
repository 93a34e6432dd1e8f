// What every workload kind's reader shares: its hosts, by name, checked
// against the topology. Only readers include this (it brings in yaml-cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/experiment_draft.hpp"

namespace rdmasim {

// A host name for a workload endpoint (an unknown name, or a switch's, is an error).
std::optional<std::string> host_name(ExperimentDraft& d, const YAML::Node& v, const std::string& path);
// The one host `key` names; missing, or a list, is an error.
std::optional<std::string> one_host(ExperimentDraft& d, const Fields& f, std::string_view key);
// A host or a list of distinct hosts, not empty.
std::optional<std::vector<std::string>> host_list(ExperimentDraft& d, const Entry& e);
// from: HOST and to: HOST, different, into w.from and w.to.
void from_to(ExperimentDraft& d, const Fields& f, WorkloadConfig& w);

}  // namespace rdmasim
