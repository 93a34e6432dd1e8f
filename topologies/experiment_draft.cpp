#include "topologies/experiment_draft.hpp"

namespace rdmasim {

std::string ExperimentDraft::unknown_node(const std::string& n) const {
  std::vector<std::string_view> all;
  for (const auto* list : {&x.topology.hosts, &x.topology.switches, &x.topology.routers})
    all.insert(all.end(), list->begin(), list->end());
  return "unknown node '" + n + "'" + suggestion(n, all) +
         "; nodes are the hosts, switches and routers of the topology";
}

}  // namespace rdmasim
