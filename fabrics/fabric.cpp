#include "fabrics/fabric.hpp"

#include "topologies/reachability.hpp"

namespace rdmasim {

bool Fabric::reaches_all(const ExperimentConfig&, Paths& paths, const std::vector<int>& from,
                         const std::vector<int>& to) const {
  return common_group(paths.routed(), from, to);
}

std::string Fabric::completion_error(Completion m) const {
  if (m != Completion::napi) return {};
  return "napi is the kernel stack's receive path (fabric: tcp); RDMA programs wait by polling, "
         "interrupt or hybrid";
}

}  // namespace rdmasim
