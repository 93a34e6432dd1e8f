// The RoCE v1 network builder: bridges with the spanning tree's blocked
// ports, routers as domain boundaries, the address function's connect
// error, PFC on every port.
#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "fabrics/ethernet/l2_bridge.hpp"
#include "fabrics/ip/l3_switch.hpp"
#include "fabrics/network.hpp"
#include "fabrics/registry.hpp"
#include "fabrics/roce_v1/roce_v1_fabric.hpp"
#include "tests/fixtures/network.hpp"

using namespace rdmasim;

namespace {

ExperimentConfig config(std::vector<std::string> hosts, std::vector<std::string> switches,
                        std::vector<std::string> routers,
                        std::vector<std::pair<std::string, std::string>> links) {
  return test::topology_config("roce_v1", std::move(hosts), std::move(switches), std::move(routers), links);
}

}  // namespace

TEST_CASE("roce_v1 network: bridges, a router, and the connect error across it") {
  const ExperimentConfig cfg =
      config({"a", "b", "c"}, {"s1", "s2", "s3"}, {"r1"},
             {{"a", "s1"}, {"b", "s2"}, {"s1", "s2"}, {"s2", "s3"}, {"s3", "s1"}, {"s3", "r1"}, {"r1", "c"}});
  Network net(cfg);
  const BuiltFabric built = build_network(net, fabric_of(cfg));
  auto& s1 = dynamic_cast<L2Bridge&>(*net.nodes[*net.graph.find("s1")]);
  auto& s2 = dynamic_cast<L2Bridge&>(*net.nodes[*net.graph.find("s2")]);
  auto& s3 = dynamic_cast<L2Bridge&>(*net.nodes[*net.graph.find("s3")]);
  CHECK(dynamic_cast<L3Switch*>(net.nodes[*net.graph.find("r1")].get()));
  // Root s1; s2 and s3 both reach it directly, so s2 - s3 is blocked at both ends.
  CHECK(s2.blocked(2));  // s2's ports: b, s1, s3
  CHECK(s3.blocked(0));  // s3's ports: s2, s1, r1
  CHECK_FALSE(s1.blocked(0));
  CHECK_FALSE(s1.blocked(1));
  CHECK_FALSE(s1.blocked(2));
  CHECK_FALSE(s2.blocked(1));
  CHECK_FALSE(s3.blocked(1));
  CHECK_FALSE(s3.blocked(2));

  Host& a = net.host(0);
  Host& b = net.host(1);
  Host& c = net.host(2);
  CHECK(from_ibv_gid(a.nic().gid()) == roce_v1_gid(MacAddress::local(1)));

  // a to b: the address names b's GID and a starts resolving it at once.
  const ibv_ah_attr ah = built.address(a, b);
  CHECK(ah.is_global == 1);
  CHECK(from_ibv_gid(ah.grh.dgid) == from_ibv_gid(b.nic().gid()));
  auto& fa = static_cast<RoceV1Fabric&>(a.nic().fabric());
  CHECK(fa.neighbors().stats().solicitations == 1);
  net.sim.run();
  CHECK(fa.neighbor(from_ibv_gid(b.nic().gid())) == MacAddress::local(2));

  // a to c crosses r1: the connect error a user would get.
  std::string what;
  try {
    built.address(a, c);
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  CHECK(what.find("a cannot reach c") != std::string::npos);
  CHECK(what.find("different broadcast domains") != std::string::npos);
  CHECK(built.sealer);
}

TEST_CASE("roce_v1 network: flow_control pfc puts a PFC meter on host ports") {
  ExperimentConfig cfg = config({"a", "b"}, {"s1"}, {}, {{"a", "s1"}, {"b", "s1"}});
  {
    Network net(cfg);
    build_network(net, fabric_of(cfg));
    CHECK(net.host(0).port(0).meter() == nullptr);
  }
  cfg.pfc = true;
  Network net(cfg);
  build_network(net, fabric_of(cfg));
  CHECK(net.host(0).port(0).meter() != nullptr);
  auto& fa = static_cast<RoceV1Fabric&>(net.host(0).nic().fabric());
  CHECK(fa.self().priority == cfg.pfc_config.priority);
  CHECK(fa.self().vid == 0);  // priority-tagged
}
