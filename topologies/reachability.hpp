// Which hosts reach which: the graph questions the validate pass and the
// fabrics' reachability rules ask (fabrics/fabric.hpp), each answer
// computed once when first asked for.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topologies/routing.hpp"

namespace rdmasim {

// Is there one group (of links joined at forwarding nodes) every host of
// `from` and `to` is in? `groups`: per host, its groups, ascending.
bool common_group(const std::vector<std::vector<int>>& groups, const std::vector<int>& from,
                  const std::vector<int>& to);

class Paths {
 public:
  explicit Paths(const Graph& g) : g_(g) {}
  const Graph& graph() const { return g_; }
  const std::vector<std::vector<int>>& routed();   // through switches and routers
  const std::vector<std::vector<int>>& bridged();  // through switches only
  // IB up*/down* forwarding from these root switches (ib_forwarding).
  const ForwardingTable& updown(const std::vector<std::string>& root_names);

 private:
  const Graph& g_;
  std::optional<std::vector<std::vector<int>>> routed_, bridged_;
  std::optional<ForwardingTable> updown_;
};

}  // namespace rdmasim
