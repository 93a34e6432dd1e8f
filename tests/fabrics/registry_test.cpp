// The registry (fabrics/registry.cpp) and what code above fabrics/ asks of a
// fabric instead of naming it: compare's extra columns, a host stack's own
// counters, why a congestion control or loss recovery cannot run. (That no
// string above fabrics/ names a fabric is scripts/check_layers.py's.)
#include "fabrics/registry.hpp"

#include <doctest/doctest.h>

#include <cctype>
#include <set>
#include <string>

#include "fabrics/iba/transport/cc/congestion_control.hpp"
#include "tests/fixtures/network.hpp"
#include "topologies/cc_algorithms.hpp"

namespace rdmasim {

TEST_CASE("every fabric is found by its own name, once") {
  std::set<std::string_view> seen;
  for (const Fabric* f : fabrics()) {
    CHECK(seen.insert(f->name()).second);
    CHECK(find_fabric(f->name()) == f);
  }
  CHECK(find_fabric("token_ring") == nullptr);
}

namespace {
// The fabric names a text uses as words; one inside a dotted key
// (tcp.congestion_control) is a key.
std::set<std::string> fabrics_named(const std::string& text) {
  std::set<std::string> out;
  std::string word;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ' ';
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') {
      word += c;
      continue;
    }
    while (!word.empty() && word.back() == '.') word.pop_back();
    if (find_fabric(word)) out.insert(word);
    word.clear();
  }
  return out;
}
}  // namespace

TEST_CASE("fabric_list names the chosen fabrics in the registry's order, as prose") {
  CHECK(fabric_list([](const Fabric&) { return false; }).empty());
  CHECK(fabric_list([](const Fabric& f) { return f.host_nic().sockets; }) == "tcp");
  CHECK(fabric_list([](const Fabric& f) { return f.host_nic().dpdk; }) == "tcp");
  CHECK(fabric_list([](const Fabric& f) { return !f.host_nic().verbs; }) == "tcp");
  CHECK(fabric_list([](const Fabric& f) { return !f.compared_by_default(); }) == "tcp");
  CHECK(fabric_list([](const Fabric& f) { return f.name() == "roce_v2" || f.name() == "ib"; }) ==
        "ib and roce_v2");
  CHECK(fabric_list([](const Fabric&) { return true; }) == "ib, roce_v1, roce_v2, iwarp and tcp");
}

TEST_CASE("a fabric says why it cannot run a congestion control in words of its own wire") {
  for (size_t i = 0; i < std::size(EnumNames<CcAlgorithm>::names); ++i) {
    const auto a = static_cast<CcAlgorithm>(i);
    CAPTURE(to_string(a));
    bool somewhere = false;
    for (const Fabric* f : fabrics()) {
      const std::string why = f->cc_error(a);
      CAPTURE(f->name());
      CAPTURE(why);
      somewhere |= why.empty();
      if (a == CcAlgorithm::none) CHECK(why.empty());
      // Of itself alone: which fabrics do run it is the registry's to say,
      // so a fabric added later leaves every other's words true.
      for (const std::string& named : fabrics_named(why)) CHECK(named == f->name());
    }
    CHECK(somewhere);
  }
  // docs/yaml.md, congestion_control.algorithm.
  auto running = [](CcAlgorithm a) {
    return fabric_list([a](const Fabric& f) { return f.cc_error(a).empty(); });
  };
  CHECK(running(CcAlgorithm::none) == "ib, roce_v1, roce_v2, iwarp and tcp");
  CHECK(running(CcAlgorithm::dcqcn) == "roce_v2");
  CHECK(running(CcAlgorithm::dctcp) == "roce_v2");
  CHECK(running(CcAlgorithm::hpcc) == "roce_v2");
  CHECK(running(CcAlgorithm::timely) == "roce_v1 and roce_v2");
  CHECK(running(CcAlgorithm::swift) == "roce_v1 and roce_v2");
  CHECK(running(CcAlgorithm::ib_cca) == "ib");
}

TEST_CASE("a fabric says why it cannot run a loss recovery in words of its own wire") {
  for (const Fabric* f : fabrics()) {
    CAPTURE(f->name());
    CHECK(f->recovery_error(LossRecovery::go_back_n).empty());
    const std::string why = f->recovery_error(LossRecovery::irn);
    CAPTURE(why);
    for (const std::string& named : fabrics_named(why)) CHECK(named == f->name());
  }
  CHECK(fabric_list([](const Fabric& f) { return f.recovery_error(LossRecovery::irn).empty(); }) ==
        "roce_v2");
}

TEST_CASE("a variant is a new column name and one KEY=VALUE override") {
  bool dpdk = false;
  for (const Fabric* f : fabrics())
    for (const Fabric::Variant& v : f->variants()) {
      CHECK(find_fabric(v.name) == nullptr);
      const auto eq = v.set.find('=');
      REQUIRE(eq != std::string_view::npos);
      CHECK(eq > 0);
      CHECK(eq + 1 < v.set.size());
      dpdk |= f->name() == "tcp" && v.name == "dpdk" && v.set == "host.stack=dpdk";
    }
  CHECK(dpdk);
}

TEST_CASE("only a fabric with its own host stack reports one") {
  for (const Fabric* f : fabrics()) {
    test::BuiltNetwork b(test::two_hosts(std::string(f->name())));
    const auto report = b.host(0).nic().fabric().stack_report();
    CAPTURE(f->name());
    CHECK(report.has_value() == f->host_nic().sockets);
    // The built NIC offers what its fabric says it does.
    CHECK((b.host(0).nic().fabric().sockets() != nullptr) == f->host_nic().sockets);
    if (!report) continue;
    CHECK(report->stack == "kernel");
    CHECK(report->section == "kernel_rx");
    CHECK(report->interrupts == 0);  // nothing has arrived
    std::set<std::string_view> names;
    for (const auto& [name, value] : report->counters) {
      CHECK(names.insert(name).second);
      CHECK(value == 0);
    }
    CHECK(names.count("frames") == 1);
    CHECK(names.count("discarded") == 1);
  }
}

TEST_CASE("with host.stack: dpdk the tcp fabric reports its poll-mode driver") {
  auto cfg = test::two_hosts("tcp");
  cfg.host.stack = NetStack::dpdk;
  cfg.host.cores = 4;
  cfg.host.dpdk.cores = 2;
  test::BuiltNetwork b(std::move(cfg));
  const auto report = b.host(1).nic().fabric().stack_report();
  REQUIRE(report);
  CHECK(report->stack == "dpdk");
  CHECK(report->section == "dpdk_rx");
  bool cores = false;
  for (const auto& [name, value] : report->counters) cores |= name == "poll_cores" && value == 2;
  CHECK(cores);
}

TEST_CASE("every congestion control algorithm has its row of facts and its implementation") {
  for (size_t i = 0; i < std::size(EnumNames<CcAlgorithm>::names); ++i) {
    const auto a = static_cast<CcAlgorithm>(i);
    CAPTURE(to_string(a));
    CHECK_NOTHROW(cc_facts(a));
    CHECK_NOTHROW(cc_feedback(a));
    CHECK((cc_facts(a).signal == CcSignal::none) == (a == CcAlgorithm::none));
  }
  // What the switches of a fabric are asked to do follows from the signal.
  CHECK(cc_facts(CcAlgorithm::dcqcn).signal == CcSignal::ip_ecn);
  CHECK(cc_facts(CcAlgorithm::hpcc).signal == CcSignal::ip_telemetry);
  CHECK(cc_facts(CcAlgorithm::ib_cca).signal == CcSignal::ib_fecn);
  CHECK(cc_feedback(CcAlgorithm::hpcc).echo_telemetry);
}

}  // namespace rdmasim
