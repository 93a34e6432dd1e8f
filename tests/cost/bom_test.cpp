#include "cost/bom.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "experiment/loader.hpp"

namespace rdmasim {

namespace {

ExperimentConfig load(const std::string& yaml) {
  const LoadResult r = load_experiment_text(yaml, "t.yaml");
  for (const auto& e : r.errors) MESSAGE(e.format());
  REQUIRE(r.config);
  return *r.config;
}

// item -> count
std::map<std::string, uint64_t> counts(const Bom& bom) {
  std::map<std::string, uint64_t> m;
  for (const auto& l : bom.lines) m[l.item->key] = l.count;
  return m;
}

const std::string kTwoHosts = R"(
fabric: roce_v2
topology: {hosts: [a, b], switches: [s], links: [[a, s], [b, s]]}
workloads: [{kind: rdma_write, from: a, to: b}]
)";

// 4 leaves of 8 hosts at 25 Gb/s, 2 spines, 100 Gb/s between tiers.
std::string leaf_spine(std::string_view fabric) {
  return "fabric: " + std::string(fabric) + R"(
topology:
  generate: {kind: leaf_spine, spines: 2, leaves: 4, hosts_per_leaf: 8, host_link: {bandwidth: 25Gbps}}
workloads: [{kind: send, from: h0, to: h31}]
)";
}

}  // namespace

TEST_CASE("the shipped catalogue loads, and every entry has a source and a date") {
  const PriceBook& b = shipped_prices();
  CHECK(b.currency == "USD");
  CHECK(b.energy_price > 0);
  CHECK(b.pue >= 1);
  CHECK(b.years > 0);
  CHECK(b.cpu_core_hour > 0);
  CHECK(b.items.size() > 30);
  for (const auto& i : b.items) {
    INFO(i.key);
    CHECK(!i.source.empty());
    CHECK(!i.date.empty());
    CHECK(!i.product.empty());
    CHECK(i.price >= 0);
    CHECK(i.watts >= 0);
    if (i.kind == ItemKind::switch_box) CHECK(i.radix > 0);
  }
}

TEST_CASE("a broken catalogue is refused with the line at fault") {
  CHECK_THROWS_WITH(parse_catalogue("currency: USD\n"), doctest::Contains("missing 'energy_price'"));
  const std::string bad =
      std::string(catalogue_text()).replace(catalogue_text().find("price: 1000"), 11, "price: lots");
  CHECK_THROWS_WITH(parse_catalogue(bad), doctest::Contains("expected a number, got 'lots'"));
}

TEST_CASE("BOM of two hosts on one switch") {
  const ExperimentConfig cfg = load(kTwoHosts);
  const Bom bom = bill_of_materials(cfg, shipped_prices());
  CHECK(counts(bom) == std::map<std::string, uint64_t>{
                           {"roce_nic_100g", 2}, {"eth_switch_100g_32p", 1}, {"eth_copper_100g", 2}});
  CHECK(bom.warnings.empty());
}

TEST_CASE("every Ethernet fabric is priced on the same switches, the family cost.ethernet_switches names") {
  for (const char* fabric : {"roce_v1", "roce_v2", "iwarp", "tcp"}) {
    INFO(fabric);
    const std::string yaml = leaf_spine(fabric);
    CHECK(counts(bill_of_materials(load(yaml), shipped_prices())).at("eth_switch_100g_32p") == 6);
    const ExperimentConfig dcb = load(yaml + "cost: {ethernet_switches: ethernet_dcb}\n");
    std::vector<LoadError> errors;
    const PriceBook book = experiment_prices(dcb, errors);
    CHECK(errors.empty());
    CHECK(counts(bill_of_materials(dcb, book)).at("dcb_switch_100g_32p") == 6);
    CHECK(switch_family(dcb, book) == "ethernet_dcb");
  }
  // ib has its own switches whatever the Ethernet choice.
  const ExperimentConfig ib = load(leaf_spine("ib") + "cost: {ethernet_switches: ethernet_dcb}\n");
  std::vector<LoadError> errors;
  CHECK(switch_family(ib, experiment_prices(ib, errors)) == "ib");
  // A family with no Ethernet switches is a located error.
  const ExperimentConfig bad = load(kTwoHosts + "cost: {ethernet_switches: ib}\n");
  experiment_prices(bad, errors);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].format() ==
        "t.yaml:5:27: cost.ethernet_switches: no Ethernet switches of family 'ib' in the price catalogue: "
        "ethernet (commodity) or ethernet_dcb (sold for RoCE)");
}

TEST_CASE("BOM of a leaf-spine on each fabric: adapters, radices, copper in the rack, optics between tiers") {
  const std::map<std::string, std::map<std::string, uint64_t>> want{
      {"roce_v2",
       {{"roce_nic_25g", 32}, {"eth_switch_100g_32p", 6}, {"eth_copper_25g", 32}, {"eth_optical_100g", 8}}},
      {"roce_v1",
       {{"roce_nic_25g", 32}, {"eth_switch_100g_32p", 6}, {"eth_copper_25g", 32}, {"eth_optical_100g", 8}}},
      {"iwarp",
       {{"iwarp_rnic_25g", 32}, {"eth_switch_100g_32p", 6}, {"eth_copper_25g", 32}, {"eth_optical_100g", 8}}},
      // The kernel TCP baseline: plain Ethernet NICs on commodity switches.
      {"tcp",
       {{"eth_nic_25g", 32}, {"eth_switch_100g_32p", 6}, {"eth_copper_25g", 32}, {"eth_optical_100g", 8}}},
      // No 25 Gb/s InfiniBand: hosts get 100 Gb/s HCAs and cables.
      {"ib",
       {{"ib_hca_100g", 32},
        {"ib_switch_100g_36p", 6},
        {"ib_copper_100g", 32},
        {"ib_optical_100g", 8},
        {"ib_subnet_manager", 38}}},
  };
  for (const auto& [fabric, lines] : want) {
    INFO(fabric);
    CHECK(counts(bill_of_materials(load(leaf_spine(fabric)), shipped_prices())) == lines);
  }
}

TEST_CASE("BOM of a k = 4 fat tree, worked by hand") {
  // k = 4: k^3/4 = 16 hosts; k^2/2 = 8 edge and 8 aggregation switches,
  // (k/2)^2 = 4 core, each with k = 4 ports; 16 host links (copper, in the
  // rack), 16 edge-aggregation and 16 aggregation-core links (optics).
  auto fat_tree = [](std::string_view fabric, std::string_view bandwidth) {
    return load("fabric: " + std::string(fabric) + "\nlink: {bandwidth: " + std::string(bandwidth) +
                "}\ntopology: {generate: {kind: fat_tree, k: 4}}\n"
                "workloads: [{kind: rdma_write, from: h0, to: h15}]\n");
  };
  CHECK(counts(bill_of_materials(fat_tree("ib", "200Gbps"), shipped_prices())) ==
        std::map<std::string, uint64_t>{{"ib_hca_200g", 16},
                                        {"ib_switch_200g_40p", 20},
                                        {"ib_copper_200g", 16},
                                        {"ib_optical_200g", 32},
                                        {"ib_subnet_manager", 36}});
  const Bom roce = bill_of_materials(fat_tree("roce_v2", "100Gbps"), shipped_prices());
  CHECK(counts(roce) == std::map<std::string, uint64_t>{{"roce_nic_100g", 16},
                                                        {"eth_switch_100g_32p", 20},
                                                        {"eth_copper_100g", 16},
                                                        {"eth_optical_100g", 32}});
  // capex by hand: 16 x 1000 + 20 x 7000 + 16 x 80 + 32 x 250.
  const nlohmann::json c = cost_json(roce, shipped_prices(), 0, 1);
  CHECK(c["capex"].get<double>() == doctest::Approx(16 * 1000 + 20 * 7000 + 16 * 80 + 32 * 250));
  CHECK(c["power_w"].get<double>() == doctest::Approx(16 * 18 + 20 * 200 + 32 * 5));
}

TEST_CASE("a switch gets the smallest radix that has its ports, or several of the largest") {
  auto with = [&](int n) {
    std::string hs, ls;
    for (int i = 0; i < n; ++i) {
      hs += (i ? ", h" : "h") + std::to_string(i);
      ls += (i ? ", [h" : "[h") + std::to_string(i) + ", s]";
    }
    return load("fabric: ib\ntopology: {hosts: [" + hs + "], switches: [s], links: [" + ls +
                "]}\nworkloads: [{kind: rdma_write, from: h0, to: h1}]\n");
  };
  CHECK(counts(bill_of_materials(with(36), shipped_prices()))["ib_switch_100g_36p"] == 1);
  CHECK(counts(bill_of_materials(with(37), shipped_prices()))["ib_switch_100g_80p"] == 1);
  const Bom big = bill_of_materials(with(100), shipped_prices());
  CHECK(counts(big)["ib_switch_100g_80p"] == 2);
  REQUIRE(big.warnings.size() == 1);
  CHECK(big.warnings[0].find("100 ports exceed the largest radix (80)") != std::string::npos);
}

TEST_CASE("a link faster than the catalogue is priced at its fastest item, with a warning") {
  const ExperimentConfig cfg = load(R"(
fabric: iwarp
link: {bandwidth: 400Gbps, mtu: 1500}
topology: {hosts: [a, b], switches: [s], links: [[a, s], [b, s]]}
workloads: [{kind: rdma_write, from: a, to: b}]
)");
  const Bom bom = bill_of_materials(cfg, shipped_prices());
  CHECK(counts(bom)["iwarp_rnic_100g"] == 2);
  REQUIRE(bom.warnings.size() == 2);
  CHECK(bom.warnings[0] ==
        "host a: 400 Gb/s is faster than any catalogue item of family iwarp; priced at 100 Gb/s");
}

TEST_CASE("cost is linear in an overridden price, and the totals are the BOM's sums") {
  auto cost = [](double nic) {
    ExperimentConfig cfg = load(kTwoHosts + "cost: {prices: {roce_nic_100g: " + std::to_string(nic) + "}}\n");
    std::vector<LoadError> errors;
    const PriceBook book = experiment_prices(cfg, errors);
    CHECK(errors.empty());
    return cost_json(bill_of_materials(cfg, book), book, 0, 1);
  };
  const auto c0 = cost(0), c1 = cost(1000), c2 = cost(2500);
  CHECK(c1["capex"].get<double>() - c0["capex"].get<double>() == doctest::Approx(2 * 1000));
  CHECK(c2["capex"].get<double>() - c0["capex"].get<double>() == doctest::Approx(2 * 2500));
  CHECK(c2["total"].get<double>() - c0["total"].get<double>() == doctest::Approx(2 * 2500));
  double sum = 0, watts = 0;
  for (const auto& l : c1["bom"]) {
    CHECK(l["price"].get<double>() ==
          doctest::Approx(l["unit_price"].get<double>() * l["count"].get<double>()));
    sum += l["price"].get<double>();
    watts += l["watts"].get<double>();
  }
  CHECK(c1["capex"].get<double>() == doctest::Approx(sum));
  CHECK(c1["power_w"].get<double>() == doctest::Approx(watts));
}

TEST_CASE("opex is energy over the years at the PUE; CPU cost is busy cores priced per core-hour") {
  ExperimentConfig cfg = load(kTwoHosts + R"(cost: {energy_price: 0.1, pue: 2, years: 3, cpu_core_hour: 0.05,
                                                    watts: {roce_nic_100g: 10, eth_switch_100g_32p: 80}})");
  std::vector<LoadError> errors;
  const PriceBook book = experiment_prices(cfg, errors);
  const CostTotals t = cost_totals(bill_of_materials(cfg, book), book, 3'000'000, 2'000'000);
  CHECK(t.power_w == doctest::Approx(100));
  CHECK(t.opex == doctest::Approx(100 * 2 / 1000.0 * 3 * 8760 * 0.1));
  CHECK(t.cpu_cores == doctest::Approx(1.5));
  CHECK(t.cpu_cost == doctest::Approx(1.5 * 3 * 8760 * 0.05));
  CHECK(t.total == doctest::Approx(t.capex + t.opex + t.cpu_cost));
}

TEST_CASE("cost per unit of work: the network over what it moves in its life, the CPU per job") {
  ExperimentConfig cfg = load(kTwoHosts + "cost: {years: 2, cpu_core_hour: 0.36}\n");
  std::vector<LoadError> errors;
  const PriceBook book = experiment_prices(cfg, errors);
  const Bom bom = bill_of_materials(cfg, book);
  // 10 GB and 2 million operations in 0.5 s; the hosts busy 0.8 core-seconds.
  const WorkDone work{{{"GB", "bytes moved", 10}, {"Mop", "operations", 2}}, 0.5};
  const uint64_t busy = 800'000'000'000, end = 500'000'000'000;
  const CostTotals t = cost_totals(bom, book, busy, end);
  const nlohmann::json u = per_unit_json(t, book, busy, work);
  REQUIRE(u.size() == 2);
  const double life_s = 2 * 8760 * 3600.0, cpu_run = 0.8 / 3600 * 0.36;
  CHECK(u[0]["unit"] == "GB");
  CHECK(u[0]["per_second"].get<double>() == doctest::Approx(20));
  CHECK(u[0]["network"].get<double>() == doctest::Approx((t.capex + t.opex) / (20 * life_s)));
  CHECK(u[0]["cpu"].get<double>() == doctest::Approx(cpu_run / 10));
  CHECK(u[1]["cpu"].get<double>() == doctest::Approx(cpu_run / 2));
  CHECK(u[1]["total"].get<double>() == doctest::Approx(u[1]["network"].get<double>() + cpu_run / 2));
  // The same work done twice as slowly, the cores busy all the while (polling):
  // the average cores busy, and so cpu.cost over the years, stay the same,
  // but each GB costs twice the CPU, and the network's share doubles too.
  const WorkDone slow{work.units, 1.0};
  const CostTotals ts = cost_totals(bom, book, 2 * busy, 2 * end);
  const nlohmann::json us = per_unit_json(ts, book, 2 * busy, slow);
  CHECK(ts.cpu_cost == doctest::Approx(t.cpu_cost));
  CHECK(us[0]["cpu"].get<double>() == doctest::Approx(2 * u[0]["cpu"].get<double>()));
  CHECK(us[0]["network"].get<double>() == doctest::Approx(2 * u[0]["network"].get<double>()));
  // No work of a unit, no entry for it.
  CHECK(per_unit_json(t, book, busy, WorkDone{{{"GB", "bytes moved", 0}}, 1}).empty());
}

// A price of 1e308 made capex inf, null in results.json. At the largest
// amounts allowed, on 65,536 hosts, every sum is finite, and per unit of
// work too with the fewest years and the least work.
TEST_CASE("cost: the largest amounts keep every sum finite") {
  std::string most = "cost: {energy_price: 1e12, pue: 10, years: 100, cpu_core_hour: 1e12, prices: {";
  std::string watts = "watts: {";
  for (const CatalogueItem& i : shipped_prices().items) {
    most += i.key + ": 1e12, ";
    watts += i.key + ": 1e6, ";
  }
  most += "}, " + watts + "}}\n";
  ExperimentConfig cfg = load(R"(
fabric: roce_v2
topology: {generate: {kind: star, hosts: 65536}}
workloads: [{kind: rdma_write, from: h0, to: h1}]
)" + most);
  std::vector<LoadError> errors;
  PriceBook book = experiment_prices(cfg, errors);
  REQUIRE(errors.empty());
  const Bom bom = bill_of_materials(cfg, book);
  const uint64_t busy = UINT64_MAX / 2;
  const CostTotals t = cost_totals(bom, book, busy, 1);
  for (double x : {t.capex, t.power_w, t.opex, t.cpu_cost, t.total}) CHECK(std::isfinite(x));
  book.years = 0.001;
  const nlohmann::json j = cost_json(bom, book, busy, 1, WorkDone{{{"GB", "bytes moved", 1e-9}}, 1000}, "s");
  CHECK(j.dump().find("null") == std::string::npos);
}

TEST_CASE("cost settings: an unknown item and a bad amount are located errors") {
  const LoadResult bad =
      load_experiment_text(kTwoHosts + "cost: {years: 0, prices: {roce_nic_100g: cheap}}\n", "t.yaml");
  REQUIRE(bad.errors.size() == 2);
  CHECK(bad.errors[0].format() == "t.yaml:5:15: cost.years: expected a number from 0.001 to 100, got '0'");
  CHECK(bad.errors[1].format() ==
        "t.yaml:5:42: cost.prices.roce_nic_100g: expected a number from 0 to 1000000000000, got 'cheap'");

  const ExperimentConfig cfg = load(kTwoHosts + "cost:\n  prices: {roce_nic_99g: 1}\n");
  std::vector<LoadError> errors;
  experiment_prices(cfg, errors);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].format() ==
        "t.yaml:6:12: cost.prices.roce_nic_99g: no item 'roce_nic_99g' in the price catalogue (docs/cost.md "
        "lists them)");
}

TEST_CASE("a --set on cost: is located on the command line") {
  const LoadResult r = load_experiment_text(kTwoHosts, "t.yaml", {"cost.prices.nope=5"});
  REQUIRE(r.config);
  std::vector<LoadError> errors;
  experiment_prices(*r.config, errors);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].file == std::string(kCommandLine));
  CHECK(errors[0].message.find("(--set cost.prices.nope=5)") != std::string::npos);
}

TEST_CASE("an experiment priced before its run costs what its book and bill cost after it") {
  // The runner prices the topology before the network is built and the
  // run's figures after (experiment_pricing): the same as the parts.
  ExperimentConfig cfg = load(kTwoHosts + "cost: {prices: {roce_nic_100g: 1234}, cpu_core_hour: 0.5}\n");
  const auto pricing = experiment_pricing(cfg);
  std::vector<LoadError> errors;
  const PriceBook book = experiment_prices(cfg, errors);
  const WorkDone work{{{"GB", "bytes moved", 3}}, 0.25};
  CHECK(experiment_cost(*pricing, 7'000'000, 9'000'000, work) ==
        cost_json(bill_of_materials(cfg, book), book, 7'000'000, 9'000'000, work, switch_family(cfg, book)));
  CHECK(experiment_cost(*pricing, 0, 1)["bom"][0]["unit_price"] == 1234.0);
}

}  // namespace rdmasim
