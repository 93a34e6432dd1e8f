// The ib fabric as the runner builds it: the subnet manager's LIDs, GIDs and
// forwarding tables, credit flow control on every link, and whole runs.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "apps/runner.hpp"
#include "experiment/loader.hpp"
#include "fabrics/ib/ib_fabric.hpp"
#include "fabrics/ib/ib_switch.hpp"
#include "fabrics/ib/subnet_manager.hpp"
#include "fabrics/registry.hpp"
#include "tests/fixtures/network.hpp"

using namespace rdmasim;

namespace {

ExperimentConfig load(const std::string& yaml) {
  LoadResult r = load_experiment_text(yaml, "ib_network_test.yaml");
  for (const LoadError& e : r.errors) FAIL(e.format());
  REQUIRE(r.config);
  return *r.config;
}

struct Built : test::BuiltNetwork {
  explicit Built(const ExperimentConfig& cfg) : BuiltNetwork(cfg) {}
  IbSwitch& sw(const std::string& name) { return static_cast<IbSwitch&>(*net.nodes[*net.graph.find(name)]); }
};

const std::string kLeafSpine = R"(
name: t
fabric: ib
topology:
  generate: {kind: leaf_spine, spines: 2, leaves: 3, hosts_per_leaf: 2}
ib: {routing: updown}
)";
const std::string kOneSend = "workloads: [{kind: send, from: h0, to: h1}]\n";

std::filesystem::path scratch(const char* name) {
  auto d =
      std::filesystem::temp_directory_path() / ("rdmasim-ib-test-" + std::to_string(getpid()) + "-" + name);
  std::filesystem::remove_all(d);
  return d;
}

// results.json of `cfg`, run in a scratch folder removed after.
nlohmann::json results_of(const ExperimentConfig& cfg, const char* name) {
  const auto dir = scratch(name);
  std::filesystem::create_directories(dir);
  Run(cfg, dir).execute();
  std::ifstream in(dir / "results.json");
  nlohmann::json out = nlohmann::json::parse(in);
  std::filesystem::remove_all(dir);
  return out;
}

}  // namespace

TEST_CASE("ib network: the subnet manager gives LIDs, GIDs and forwarding tables") {
  const ExperimentConfig cfg = load(kLeafSpine + kOneSend);
  Built b(cfg);
  const Graph& g = b.net.graph;
  CHECK(b.fabric.linktype == Linktype::Erf);
  CHECK(fabric_of(cfg).wire_overhead() == kIbWireOverhead);
  for (int h = 0; h < g.host_count(); ++h) {
    CHECK(b.net.host(h).nic().lid() == h + 1);
    ibv_gid want = ib_gid(ib_port_guid(h));
    CHECK(std::memcmp(b.net.host(h).nic().gid().raw, want.raw, 16) == 0);
    CHECK(b.net.host(h).nic().gid().raw[0] == 0xFE);
    CHECK(b.net.host(h).nic().gid().raw[1] == 0x80);
  }
  const ForwardingTable t = ib_forwarding(g, IbRouting::updown);
  for (int n = g.host_count(); n < g.size(); ++n) {
    auto& s = static_cast<IbSwitch&>(*b.net.nodes[n]);
    CHECK(s.lid() == n + 1);
    for (int h = 0; h < g.host_count(); ++h) {
      REQUIRE(s.forwarding(static_cast<uint16_t>(h + 1)));
      CHECK(*s.forwarding(static_cast<uint16_t>(h + 1)) == t.port(n, h));
    }
    CHECK_FALSE(s.forwarding(static_cast<uint16_t>(g.size() + 5)));
    // Every port of every switch has credit flow control and classes by VL.
    for (size_t p = 0; p < s.port_count(); ++p) CHECK(s.port(p).meter() != nullptr);
  }
  // up*/down* from the spines: host h0 reaches h2 (another leaf) through a spine.
  const auto path = ib_path(g, t, 0, 2);
  REQUIRE(path);
  CHECK(path->size() == 4);

  ibv_ah_attr ah = b.fabric.address(b.net.host(0), b.net.host(3));
  CHECK(ah.dlid == 4);
  CHECK(ah.is_global == 0);
  CHECK(ah.sl == cfg.ib.sl);
}

TEST_CASE("ib network: the subnet manager's sweep notices ports wired unlike the topology") {
  const ExperimentConfig cfg = load(kLeafSpine + kOneSend);
  Built b(cfg);
  SubnetManager sm(b.net.graph, cfg.ib);
  sm.bring_up(b.net.nodes);
  CHECK(sm.discovered().size() == static_cast<size_t>(b.net.graph.size()));
  CHECK(sm.discovered().front() == 0);
  CHECK(sm.credit_loop_free());
  // Swap the peers of leaf0's two host ports.
  IbSwitch& leaf0 = b.sw("leaf0");
  Port::connect(leaf0.port(0), b.net.host(1).nic().port(), LinkParams{}, 1);
  Port::connect(leaf0.port(1), b.net.host(0).nic().port(), LinkParams{}, 1);
  CHECK_THROWS_AS(sm.bring_up(b.net.nodes), std::logic_error);
}

TEST_CASE("ib network: min_hop on a ring has a credit loop, up*/down* has none") {
  // On a ring of 5 every two-hop shortest path runs one way round: a -> c
  // through s1, b -> d through s2, ... close the cycle of channels.
  const std::string ring = R"(
name: ring
fabric: ib
topology:
  hosts: [a, b, c, d, e]
  switches: [s0, s1, s2, s3, s4]
  links: [[a, s0], [b, s1], [c, s2], [d, s3], [e, s4], [s0, s1], [s1, s2], [s2, s3], [s3, s4], [s4, s0]]
workloads: [{kind: send, from: a, to: c}]
)";
  ExperimentConfig cfg = load(ring);
  {
    Built b(cfg);
    SubnetManager sm(b.net.graph, cfg.ib);
    sm.bring_up(b.net.nodes);
    CHECK_FALSE(sm.credit_loop_free());
  }
  cfg.ib.routing = IbRouting::updown;
  cfg.ib.roots = {"s0"};
  Built b(cfg);
  SubnetManager sm(b.net.graph, cfg.ib);
  sm.bring_up(b.net.nodes);
  CHECK(sm.credit_loop_free());
}

// The loader refuses it (experiment/sections/validate.cpp), so `validate` does too.
TEST_CASE("ib network: a buffer that cannot hold one packet per VL is a load error naming the link") {
  auto errors = [](int vls, std::string_view a_buffer, std::string_view b_buffer) {
    const std::string yaml = "name: t\nfabric: ib\nib: {vls: " + std::to_string(vls) + R"(}
topology:
  hosts: [a, b]
  switches: [s]
  links:
    - [a, s, {buffer: )" + std::string(a_buffer) +
                             R"(}]
    - [b, s, {buffer: )" + std::string(b_buffer) +
                             R"(}]
workloads: [{kind: send, from: a, to: b}]
)";
    std::string all;
    for (const LoadError& e : load_experiment_text(yaml, "ib_network_test.yaml").errors)
      all += e.format() + "\n";
    return all;
  };
  // 2 VLs of 4 KiB each: neither holds a 4190-byte packet.
  CHECK(errors(2, "8KiB", "16KiB") ==
        "ib_network_test.yaml:8:7: topology.links[0]: link a - s: buffer 8KiB is too small for ib: each of "
        "the 2 "
        "data VLs needs room for a 4190-byte packet (IBA 7.9), so at least 8380B\n");
  // 6 KiB hold one 4190-byte packet, but not the two an HCA queues.
  CHECK(errors(1, "16KiB", "6KiB")
            .starts_with("ib_network_test.yaml:9:7: topology.links[1]: link b - s: buffer 6KiB"));
  CHECK(errors(1, "16KiB", "8380B") == "");
}

TEST_CASE("ib network: an incast loses nothing and the switch waits for credits; roce_v2 without PFC drops") {
  const std::string yaml = R"(
name: incast
fabric: ib
stop: 20ms
link: {bandwidth: 100Gbps, delay: 500ns, buffer: 64KiB}
topology:
  generate: {kind: leaf_spine, spines: 1, leaves: 3, hosts_per_leaf: 3}
workloads:
  - {name: incast, kind: incast, to: h0, senders: 8, size: 32KiB, count: 8, outstanding: 4, timeout: 8}
capture: {pcap: none}
)";
  auto run = [&](const std::string& f) {
    ExperimentConfig cfg = load(yaml);
    cfg.fabric = f;
    return results_of(cfg, "incast");
  };
  const nlohmann::json ib = run("ib");
  CHECK(ib["workloads"][0]["completions"]["IBV_WC_SUCCESS"] == 64);
  CHECK(ib["workloads"][0]["data_verified"] == true);
  uint64_t drops = 0;
  int64_t switch_wait = 0;
  for (const auto& p : ib["ports"]) {
    drops += p["drops"].get<uint64_t>();
    if (p["node"].get<std::string>().rfind("h", 0) != 0) switch_wait += p["credit_wait_ps"].get<int64_t>();
  }
  CHECK(drops == 0);
  CHECK(switch_wait > 0);

  const nlohmann::json roce = run("roce_v2");
  uint64_t roce_drops = 0;
  for (const auto& p : roce["ports"]) roce_drops += p["drops"].get<uint64_t>();
  CHECK(roce_drops > 0);
  CHECK(roce["workloads"][0]["completions"]["IBV_WC_SUCCESS"] == 64);
}

TEST_CASE("ib network: the same seed gives the same run") {
  const std::string yaml = kLeafSpine + R"(
workloads:
  - {kind: all_to_all, size: 8KiB, count: 2}
  - {kind: send, from: h0, to: h5, qp: ud, size: 1KiB, count: 4}
capture: {pcap: none}
)";
  const ExperimentConfig cfg = load(yaml);
  const nlohmann::json a = results_of(cfg, "seed-a");
  const nlohmann::json b = results_of(cfg, "seed-b");
  CHECK(a == b);
  CHECK(a["workloads"][0]["finished"] == true);
  CHECK(a["workloads"][1]["completions"]["IBV_WC_SUCCESS"] == 4);
}
