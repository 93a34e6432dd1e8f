// Finding PFC deadlocks among the ports a run found stuck (fabrics/
// ethernet/pfc.hpp, detect_pfc_deadlocks, puts them in net.pfc_stuck):
// what the runner and a split run's checks use of PFC, apart from the
// Ethernet fabrics that enable it.
#pragma once

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "fabrics/network.hpp"

namespace rdmasim {

// The cycles among the stuck ports, found as they come: at each grid time
// in turn, each cycle not found before, from its smallest port (node
// index, port). A run hands over net.pfc_stuck at each check (several
// ranks' lists together when split) and empties it, so what is kept is
// the cycles found, not every port stuck at every grid time of a deadlock
// that lasts.
class PfcDeadlockFinder {
 public:
  explicit PfcDeadlockFinder(const Network& net);
  // Ports stuck at some grid times, in any order: every port stuck at each
  // of those times, and none at a time an earlier add() had.
  void add(std::vector<Network::PfcStuck> stuck);
  const std::vector<Network::PfcDeadlock>& found() const { return found_; }

 private:
  using PortRef = std::pair<int, uint16_t>;  // node, port
  const Network& net_;
  std::map<const Node*, int> index_;
  std::set<std::set<PortRef>> reported_;
  std::vector<Network::PfcDeadlock> found_;
};

}  // namespace rdmasim
