// The registry (fabrics/registry.cpp) and what code above fabrics/ asks of a
// fabric instead of naming it: compare's extra columns and a host stack's
// own counters.
#include "fabrics/registry.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

#include "tests/fixtures/network.hpp"

namespace rdmasim {

TEST_CASE("every fabric is found by its own name, once") {
  std::set<std::string_view> seen;
  for (const Fabric* f : fabrics()) {
    CHECK(seen.insert(f->name()).second);
    CHECK(find_fabric(f->name()) == f);
  }
  CHECK(find_fabric("token_ring") == nullptr);
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
    CHECK(report.has_value() == !f->rdma());
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

}  // namespace rdmasim
