// PfcDeadlockFinder (fabrics/ethernet/pfc.hpp): the cycles among stuck
// ports, found as a run hands them over at each check, are those found
// among every stuck port at once, each reported once.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "fabrics/ethernet/pfc.hpp"
#include "tests/fixtures/network.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

// Four switches in a ring, a host on each.
test::BuiltNetwork ring() {
  return test::BuiltNetwork(test::topology_config("roce_v2", {"a", "b", "c", "d"}, {"s0", "s1", "s2", "s3"},
                                                  {},
                                                  {{"a", "s0"},
                                                   {"b", "s1"},
                                                   {"c", "s2"},
                                                   {"d", "s3"},
                                                   {"s0", "s1"},
                                                   {"s1", "s2"},
                                                   {"s2", "s3"},
                                                   {"s3", "s0"}}));
}

// Switch i's port towards switch j, stuck at t.
Network::PfcStuck stuck(const Network& net, Time t, int i, int j) {
  const int n = *net.graph.find("s" + std::to_string(i));
  const Node& node = *net.nodes[static_cast<size_t>(n)];
  for (size_t p = 0; p < node.port_count(); ++p)
    if (node.port(p).peer()->owner().name() == "s" + std::to_string(j))
      return {t, n, static_cast<uint16_t>(p)};
  FAIL("no such link");
  return {};
}

bool same(const std::vector<Network::PfcDeadlock>& a, const std::vector<Network::PfcDeadlock>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].at != b[i].at || a[i].ports != b[i].ports) return false;
  return true;
}

}  // namespace

TEST_CASE("pfc deadlocks: found check by check as at once, each cycle once") {
  test::BuiltNetwork b = ring();
  const Network& net = b.net;
  // Clockwise at 1 us and still at 2 us (the same cycle: reported once),
  // counter-clockwise at 3 us (another), a line of two at 4 us (none).
  std::vector<std::vector<Network::PfcStuck>> checks(4);
  for (int i = 0; i < 4; ++i) {
    checks[0].push_back(stuck(net, 1_us, i, (i + 1) % 4));
    checks[1].push_back(stuck(net, 2_us, 3 - i, (4 - i) % 4));  // listed in another order
    checks[2].push_back(stuck(net, 3_us, (i + 1) % 4, i));
  }
  checks[3] = {stuck(net, 4_us, 0, 1), stuck(net, 4_us, 1, 2)};

  PfcDeadlockFinder at_once(net), by_check(net);
  std::vector<Network::PfcStuck> all;
  for (int c = 3; c >= 0; --c) all.insert(all.end(), checks[c].begin(), checks[c].end());  // any order
  at_once.add(all);
  for (const auto& c : checks) by_check.add(c);

  REQUIRE(at_once.found().size() == 2);
  CHECK(at_once.found()[0].at == 1_us);
  CHECK(at_once.found()[1].at == 3_us);
  CHECK(at_once.found()[0].ports.size() == 4);
  CHECK(at_once.found()[0].ports[0] == std::pair<std::string, uint16_t>("s0", stuck(net, 0_us, 0, 1).port));
  CHECK(same(at_once.found(), by_check.found()));
}
