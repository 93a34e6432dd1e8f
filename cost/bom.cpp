#include "cost/bom.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_set>

#include "fabrics/registry.hpp"

namespace rdmasim {

namespace {

constexpr double kHoursPerYear = 24 * 365;

std::string gbps(DataRate r) { return fmt::format("{:g} Gb/s", r.gbps()); }

class BomBuilder {
 public:
  BomBuilder(const ExperimentConfig& cfg, const PriceBook& book)
      : cfg_(cfg), book_(book), hosts_(cfg.topology.hosts.begin(), cfg.topology.hosts.end()) {}

  Bom build() {
    std::map<std::string, uint32_t> ports;
    std::map<std::string, DataRate> fastest;
    for (const auto& l : cfg_.topology.links)
      for (const std::string* end : {&l.a, &l.b}) {
        ++ports[*end];
        fastest[*end] = std::max(fastest[*end], l.config.bandwidth);
      }
    const CostFamilies f = fabric_of(cfg_).cost_families();
    for (const auto& h : cfg_.topology.hosts)
      if (auto* i = by_speed(ItemKind::adapter, f.adapter, fastest[h], "host " + h)) add(i, 1);
    for (const auto* list : {&cfg_.topology.switches, &cfg_.topology.routers})
      for (const auto& s : *list) switch_box(s, ports[s], fastest[s]);
    for (const auto& l : cfg_.topology.links) {
      const bool optical = !is_host(l.a) && !is_host(l.b);
      if (auto* i =
              by_speed(ItemKind::cable, f.cable, l.config.bandwidth, "link " + l.a + "-" + l.b, optical))
        add(i, 1);
    }
    const uint64_t nodes =
        cfg_.topology.hosts.size() + cfg_.topology.switches.size() + cfg_.topology.routers.size();
    for (const auto& i : book_.items)
      if (i.kind == ItemKind::licence && i.family == f.adapter) add(&i, nodes);

    Bom bom;
    for (const auto& i : book_.items)
      if (auto it = counts_.find(&i); it != counts_.end()) bom.lines.push_back({&i, it->second});
    bom.warnings = std::move(warnings_);
    return bom;
  }

 private:
  bool is_host(const std::string& n) const { return hosts_.contains(n); }
  void add(const CatalogueItem* i, uint64_t n) { counts_[i] += n; }

  // The items of a kind and family at the slowest catalogue speed that
  // carries `rate` (the fastest there is, with a warning, when none does).
  std::vector<const CatalogueItem*> at_speed(ItemKind kind, std::string_view family, DataRate rate,
                                             const std::string& what, bool optical = false) {
    std::vector<const CatalogueItem*> all;
    for (const auto& i : book_.items)
      if (i.kind == kind && i.family == family && (kind != ItemKind::cable || i.optical == optical))
        all.push_back(&i);
    if (all.empty()) {
      warnings_.push_back(fmt::format("{}: the catalogue has no {} item of family {}", what,
                                      kind == ItemKind::cable ? "cable" : "such", family));
      return {};
    }
    DataRate speed{UINT64_MAX}, top;
    for (const auto* i : all) {
      if (i->speed >= rate) speed = std::min(speed, i->speed);
      top = std::max(top, i->speed);
    }
    if (speed.bps() == UINT64_MAX) {
      warnings_.push_back(fmt::format("{}: {} is faster than any {} item of family {}; priced at {}", what,
                                      gbps(rate), kind == ItemKind::cable ? "cable" : "catalogue", family,
                                      gbps(top)));
      speed = top;
    }
    std::erase_if(all, [&](const CatalogueItem* i) { return i->speed != speed; });
    return all;
  }
  const CatalogueItem* by_speed(ItemKind kind, std::string_view family, DataRate rate,
                                const std::string& what, bool optical = false) {
    auto c = at_speed(kind, family, rate, what, optical);
    return c.empty() ? nullptr : c.front();
  }

  // The smallest radix that has `n` ports; beyond the largest, as many of
  // the largest as the ports need (a chassis would do better: a warning).
  void switch_box(const std::string& name, uint32_t n, DataRate rate) {
    auto c = at_speed(ItemKind::switch_box, switch_family(cfg_, book_), rate, "switch " + name);
    if (c.empty()) return;
    std::sort(c.begin(), c.end(), [](auto* a, auto* b) { return a->radix < b->radix; });
    for (const auto* i : c)
      if (i->radix >= n) return add(i, 1);
    const CatalogueItem* big = c.back();
    const uint64_t boxes = (n + big->radix - 1) / big->radix;
    warnings_.push_back(fmt::format("switch {}: {} ports exceed the largest radix ({}); priced as {} x {}",
                                    name, n, big->radix, boxes, big->key));
    add(big, boxes);
  }

  const ExperimentConfig& cfg_;
  const PriceBook& book_;
  std::unordered_set<std::string_view> hosts_;  // a k = 64 fat tree: 65,536, on 196,608 links
  std::map<const CatalogueItem*, uint64_t> counts_;
  std::vector<std::string> warnings_;
};

double cents(double x) { return std::round(x * 100) / 100; }

std::string_view kind_name(ItemKind k) {
  switch (k) {
    case ItemKind::adapter:
      return "adapter";
    case ItemKind::switch_box:
      return "switch";
    case ItemKind::cable:
      return "cable";
    case ItemKind::licence:
      return "licence";
  }
  return "?";
}

}  // namespace

std::string_view switch_family(const ExperimentConfig& cfg, const PriceBook& book) {
  const std::string_view f = fabric_of(cfg).cost_families().switches;
  return f == "ethernet" ? std::string_view(book.ethernet_switches) : f;
}

Bom bill_of_materials(const ExperimentConfig& cfg, const PriceBook& book) {
  return BomBuilder(cfg, book).build();
}

CostTotals cost_totals(const Bom& bom, const PriceBook& book, uint64_t cpu_busy_ps, uint64_t end_time_ps) {
  CostTotals t;
  for (const auto& l : bom.lines) {
    t.capex += l.item->price * static_cast<double>(l.count);
    t.power_w += l.item->watts * static_cast<double>(l.count);
  }
  const double hours = book.years * kHoursPerYear;
  t.opex = t.power_w * book.pue / 1000 * hours * book.energy_price;
  t.cpu_cores = end_time_ps > 0 ? static_cast<double>(cpu_busy_ps) / static_cast<double>(end_time_ps) : 0;
  t.cpu_cost = t.cpu_cores * hours * book.cpu_core_hour;
  t.total = t.capex + t.opex + t.cpu_cost;
  return t;
}

nlohmann::json per_unit_json(const CostTotals& t, const PriceBook& book, uint64_t cpu_busy_ps,
                             const WorkDone& work) {
  using nlohmann::json;
  json out = json::array();
  const double horizon_s = book.years * kHoursPerYear * 3600;
  const double cpu_run = static_cast<double>(cpu_busy_ps) / 1e12 / 3600 * book.cpu_core_hour;
  for (const WorkUnit& u : work.units) {
    if (!(u.amount > 0) || !(work.seconds > 0)) continue;
    const double rate = u.amount / work.seconds;
    const double network = (t.capex + t.opex) / (rate * horizon_s);
    const double cpu = cpu_run / u.amount;
    out.push_back({{"unit", u.unit},
                   {"of", u.of},
                   {"amount", u.amount},
                   {"per_second", rate},
                   {"network", network},
                   {"cpu", cpu},
                   {"total", network + cpu}});
  }
  return out;
}

nlohmann::json cost_json(const Bom& bom, const PriceBook& book, uint64_t cpu_busy_ps, uint64_t end_time_ps,
                         const WorkDone& work, std::string_view switches) {
  using nlohmann::json;
  const CostTotals t = cost_totals(bom, book, cpu_busy_ps, end_time_ps);
  json lines = json::array();
  for (const auto& l : bom.lines) {
    const double n = static_cast<double>(l.count);
    lines.push_back({{"item", l.item->key},
                     {"count", l.count},
                     {"kind", kind_name(l.item->kind)},
                     {"unit_price", l.item->price},
                     {"price", cents(l.item->price * n)},
                     {"unit_watts", l.item->watts},
                     {"watts", l.item->watts * n},
                     {"product", l.item->product},
                     {"source", l.item->source},
                     {"date", l.item->date},
                     {"estimate", l.item->estimate}});
  }
  return {{"currency", book.currency},
          {"capex", cents(t.capex)},
          {"power_w", t.power_w},
          {"opex", cents(t.opex)},
          {"total", cents(t.total)},
          {"cpu",
           {{"busy_ps", cpu_busy_ps},
            {"cores", t.cpu_cores},
            {"core_hour", book.cpu_core_hour},
            {"cost", cents(t.cpu_cost)},
            {"run_cost", static_cast<double>(cpu_busy_ps) / 1e12 / 3600 * book.cpu_core_hour}}},
          {"per_unit", per_unit_json(t, book, cpu_busy_ps, work)},
          {"bom", std::move(lines)},
          {"assumptions",
           {{"years", book.years},
            {"energy_price", book.energy_price},
            {"pue", book.pue},
            {"cpu_core_hour", book.cpu_core_hour},
            {"switches", switches}}},
          {"warnings", bom.warnings}};
}

PriceBook experiment_prices(const ExperimentConfig& cfg, std::vector<LoadError>& errors) {
  return apply_settings(shipped_prices(), cfg.cost, errors);
}

std::unique_ptr<const ExperimentPricing> experiment_pricing(const ExperimentConfig& cfg) {
  auto p = std::make_unique<ExperimentPricing>();
  std::vector<LoadError> errors;  // reported when the experiment was loaded
  p->book = experiment_prices(cfg, errors);
  p->bom = bill_of_materials(cfg, p->book);
  p->switches = switch_family(cfg, p->book);
  return p;
}

nlohmann::json experiment_cost(const ExperimentPricing& pricing, uint64_t cpu_busy_ps, uint64_t end_time_ps,
                               const WorkDone& work) {
  return cost_json(pricing.bom, pricing.book, cpu_busy_ps, end_time_ps, work, pricing.switches);
}

}  // namespace rdmasim
