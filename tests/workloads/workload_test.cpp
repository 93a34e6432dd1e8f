// Workloads run on a built network as the runner runs them: what each kind
// does and counts (operations, bytes, completions by status, latency
// samples), with the receiver's memory checked against what was sent.
#include "workloads/workload.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "experiment/loader.hpp"
#include "tests/fixtures/network.hpp"
#include "workloads/flows.hpp"
#include "workloads/registry.hpp"

using namespace rdmasim;

namespace {

// What the workloads see of `b`: its hosts by name, connections in 5 us.
WorkloadEnv env_of(test::BuiltNetwork& b) {
  WorkloadEnv env{b.net.sim, b.cfg,   nullptr, b.fabric.address, nullptr, b.fabric.mtu,
                  nullptr,   nullptr, 0,       nullptr};
  env.host = [&b](const std::string& name) -> Host* {
    auto n = b.net.graph.find(name);
    return n && b.net.graph.is_host(*n) ? b.net.hosts[*n] : nullptr;
  };
  env.connect_time = [](Host&, Host&) { return Time::us(5); };
  return env;
}

// Loads `yaml`, builds its network and runs every workload to the end;
// `before` sees the network first (a test's hooks).
// `stop` cuts the run off (the workloads then need not have finished).
std::vector<FlowStats> run(const std::string& yaml,
                           const std::function<void(test::BuiltNetwork&)>& before = nullptr,
                           std::optional<Time> stop = std::nullopt) {
  LoadResult r = load_experiment_text(yaml, "workload_test.yaml");
  for (const LoadError& e : r.errors) FAIL(e.format());
  REQUIRE(r.config);
  test::BuiltNetwork b(*r.config);
  WorkloadEnv env = env_of(b);
  env.path = [](Host&, Host&) { return PathCost{Time::us(1), DataRate(100'000'000'000)}; };
  env.link_rate = [](Host&) { return DataRate(100'000'000'000); };
  if (before) before(b);
  std::vector<std::unique_ptr<WorkloadRun>> runs;
  for (size_t i = 0; i < b.cfg.workloads.size(); ++i)
    runs.push_back(workload_of(b.cfg.workloads[i]).attach(env, b.cfg.workloads[i], i + 1));
  for (auto& w : runs) w->start();
  b.net.sim.run(stop.value_or(Time::ms(50)));
  std::vector<FlowStats> out;
  for (auto& w : runs) {
    if (!stop) CHECK(w->finished());
    out.push_back(w->result());
  }
  b.net.sim.clear();  // programs still waiting go before the hosts they point into
  return out;
}

std::string two_hosts(const std::string& fabric, const std::string& workloads) {
  return "fabric: " + fabric + "\nlink: {mtu: " + (fabric == "iwarp" ? "1500" : "1024") +
         "}\ntopology: {hosts: [a, b, c], switches: [s1], links: [[a, s1], [b, s1], [c, s1]]}\nworkloads:\n" +
         workloads;
}

// One data frame has a payload byte flipped on the wire (the model checks
// no CRC on receipt, so the responder places it); counts it in `corrupted`.
void corrupt_one_frame(test::BuiltNetwork& b, int& corrupted) {
  for (Host* h : b.net.hosts)
    h->port(0).on_tx([&corrupted](Time, Packet& f) {
      if (corrupted == 0 && f.size() > 600) {
        auto bytes = f.bytes();
        bytes[bytes.size() - 40] ^= std::byte{0x01};
        ++corrupted;
      }
    });
}

}  // namespace

TEST_CASE("workloads: rdma_write moves count x size bytes, each verified, on every fabric") {
  for (const char* fabric : {"roce_v2", "roce_v1", "ib", "iwarp"}) {
    CAPTURE(fabric);
    const auto s = run(
        two_hosts(fabric, "  - {kind: rdma_write, from: a, to: b, size: 8KiB, count: 5, outstanding: 2}\n"));
    REQUIRE(s.size() == 1);
    CHECK(s[0].ops == 5);
    CHECK(s[0].bytes == 5 * 8192);
    CHECK(s[0].completions.at("IBV_WC_SUCCESS") == 5);
    CHECK(s[0].data_verified);
    CHECK(s[0].finished);
    CHECK(s[0].latency_ps.size() == 5);
    CHECK(s[0].end > s[0].start);
  }
}

TEST_CASE("workloads: a run cut off by stop checks what it delivered and counts what it did not") {
  // Two senders of 50 x 64KiB into c, stopped at 200us (about a third of
  // the way). Corrupting: every data frame sent from 150us on has a byte
  // flipped, so messages completed or landing before the stop carry it.
  for (const std::string wl :
       {"op: rdma_write", "op: rdma_write, payload: pattern", "op: rdma_read", "op: send"}) {
    for (const bool corrupt : {false, true}) {
      CAPTURE(wl);
      CAPTURE(corrupt);
      int corrupted = 0;
      const auto s = run(
          two_hosts("roce_v2", std::string("  - {kind: incast, from: [a, b], to: c, size: 64KiB, count: 50, "
                                           "outstanding: 2, ") +
                                   wl + "}\n"),
          [&](test::BuiltNetwork& b) {
            if (!corrupt) return;
            for (Host* h : b.net.hosts)
              h->port(0).on_tx([&corrupted](Time t, Packet& f) {
                if (t >= Time::us(150) && f.size() > 600) {
                  auto bytes = f.bytes();
                  bytes[bytes.size() - 40] ^= std::byte{0x01};
                  ++corrupted;
                }
              });
          },
          Time::us(200));
      REQUIRE(s.size() == 1);
      CHECK_FALSE(s[0].finished);
      CHECK(s[0].planned_ops == 100);
      CHECK(s[0].ops > 10);
      CHECK(s[0].ops < 90);
      CHECK(s[0].undelivered_bytes == (100 - s[0].ops) * 65536);
      CHECK(s[0].data_verified == !corrupt);  // not finished is not corrupted
      CHECK(s[0].data_mismatch == corrupt);
      CHECK((corrupted > 0) == corrupt);
    }
  }
}

TEST_CASE("workloads: incast counts every sender's messages; pingpong one latency sample a round trip") {
  const auto s = run(two_hosts("roce_v2",
                               "  - {kind: incast, from: [a, b], to: c, size: 4KiB, count: 3}\n"
                               "  - {kind: pingpong, from: a, to: b, size: 64, count: 4}\n"));
  REQUIRE(s.size() == 2);
  CHECK(s[0].ops == 6);
  CHECK(s[0].bytes == 6 * 4096);
  CHECK(s[0].data_verified);
  CHECK(s[1].latency_ps.size() == 4);
  for (int64_t l : s[1].latency_ps) CHECK(l > 0);
}

TEST_CASE("workloads: a wrong rkey completes with a remote access error and moves nothing") {
  const auto s = run(
      two_hosts("roce_v2", "  - {kind: rdma_write, from: a, to: b, size: 1KiB, count: 1, bad_rkey: true}\n"));
  REQUIRE(s.size() == 1);
  CHECK(s[0].ops == 0);
  CHECK(s[0].completions.at("IBV_WC_REM_ACCESS_ERR") == 1);
  CHECK(s[0].finished);
}

TEST_CASE("workloads: flows check computed placements; one corrupted frame makes data_verified false") {
  const std::string yaml =
      two_hosts("roce_v2", "  - {kind: flows, hosts: [a, b], cdf: hadoop, load: 0.5, duration: 50us}\n");
  for (const bool corrupt : {false, true}) {
    CAPTURE(corrupt);
    int corrupted = 0;
    const auto s = run(yaml, [&](test::BuiltNetwork& b) {
      if (corrupt) corrupt_one_frame(b, corrupted);
    });
    REQUIRE(s.size() == 1);
    CHECK(s[0].finished);
    CHECK(s[0].ops > 2);
    CHECK(s[0].data_verified == !corrupt);
    CHECK(s[0].data_mismatch == corrupt);
    CHECK(corrupted == (corrupt ? 1 : 0));
  }
}

TEST_CASE(
    "workloads: payload pattern on WRITEs and READs checks every placement; one corrupted frame shows") {
  // Messages reuse their slots (8 through 3), so each slot's bytes change
  // from message to message; a byte flipped on the wire makes
  // data_verified false.
  for (const char* op : {"rdma_write", "rdma_read"}) {
    for (const bool corrupt : {false, true}) {
      CAPTURE(op);
      CAPTURE(corrupt);
      int corrupted = 0;
      const auto s = run(two_hosts("roce_v2", std::string("  - {kind: ") + op +
                                                  ", from: a, to: b, size: 3000, count: 8, outstanding: 3, "
                                                  "payload: pattern}\n"),
                         [&](test::BuiltNetwork& b) {
                           if (corrupt) corrupt_one_frame(b, corrupted);
                         });
      REQUIRE(s.size() == 1);
      CHECK(s[0].finished);
      CHECK(s[0].ops == 8);
      CHECK(s[0].data_verified == !corrupt);
      CHECK(s[0].data_mismatch == corrupt);
      CHECK(corrupted == (corrupt ? 1 : 0));
    }
  }
}

TEST_CASE(
    "workloads: a split run makes a flow end's objects on its host's rank only, with one process's numbers") {
  // Two flows into b, then one from b: where another engine runs b, b's
  // ends are only numbers (Device::skip_qp), and the ends made here carry
  // the QP numbers and PSNs of b's that one process gives them.
  const std::string yaml = two_hosts("roce_v2",
                                     "  - {kind: rdma_write, from: a, to: b, size: 4KiB, count: 2}\n"
                                     "  - {kind: send, from: c, to: b, size: 4KiB, count: 2}\n"
                                     "  - {kind: rdma_write, from: b, to: a, size: 4KiB, count: 2}\n");
  struct End {
    std::string host;
    const verbs::QueuePair* qp;
    uint32_t qpn = 0, dest_qpn = 0, rq_psn = 0;
  };
  auto ends = [&](bool b_elsewhere, const std::function<void(test::BuiltNetwork&)>& check_b) {
    LoadResult r = load_experiment_text(yaml, "workload_test.yaml");
    REQUIRE(r.config);
    test::BuiltNetwork b(*r.config);
    Host& host_b = *b.net.hosts[*b.net.graph.find("b")];
    if (b_elsewhere) {
      std::vector<bool> foreign(host_b.context() + 1, false);
      foreign[host_b.context()] = true;
      b.net.sim.set_foreign(foreign);
    }
    WorkloadEnv env = env_of(b);
    std::vector<std::unique_ptr<WorkloadRun>> runs;
    for (size_t i = 0; i < b.cfg.workloads.size(); ++i)
      runs.push_back(workload_of(b.cfg.workloads[i]).attach(env, b.cfg.workloads[i], i + 1));
    std::vector<End> out;
    for (auto& w : runs) {
      w->start();
      w->each_qp([&](const Host& h, const verbs::QueuePair* qp) {
        End e{h.name(), qp};
        if (qp) e = {h.name(), qp, qp->qp_num(), qp->attr().dest_qp_num, qp->attr().rq_psn};
        out.push_back(e);
      });
    }
    check_b(b);
    b.net.sim.clear();
    return out;
  };
  const std::vector<End> one = ends(false, [](test::BuiltNetwork&) {});
  const std::vector<End> split = ends(true, [](test::BuiltNetwork& b) {
    // Nothing of b's three QPs exists here, and its numbering went on.
    const verbs::Device& d = b.net.hosts[*b.net.graph.find("b")]->device();
    for (uint32_t qpn = 0x11; qpn < 0x14; ++qpn) CHECK(d.qp_by_num(qpn) == nullptr);
  });
  REQUIRE(one.size() == 6);
  REQUIRE(split.size() == 6);
  for (size_t i = 0; i < one.size(); ++i) {
    CAPTURE(i);
    CHECK(split[i].host == one[i].host);
    REQUIRE(one[i].qp);
    CHECK((split[i].qp == nullptr) == (one[i].host == "b"));
    if (!split[i].qp) continue;
    CHECK(split[i].qpn == one[i].qpn);
    CHECK(split[i].dest_qpn == one[i].dest_qpn);  // b's QP numbers, as one process has them
    CHECK(split[i].rq_psn == one[i].rq_psn);      // b's PSNs
  }
  CHECK(one[1].qpn == 0x11);
  CHECK(one[3].qpn == 0x12);
  CHECK(split[5].dest_qpn == 0x13);  // b's third QP, after two it did not make here
}
