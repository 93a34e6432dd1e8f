// The bill of materials of an experiment's topology on its fabric, and what
// it costs to buy and run (docs/cost.md): results.json's `cost`.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cost/catalogue.hpp"
#include "cost/work.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

struct BomLine {
  const CatalogueItem* item = nullptr;
  uint64_t count = 0;
};

struct Bom {
  std::vector<BomLine> lines;         // in catalogue order
  std::vector<std::string> warnings;  // where the catalogue could not match the topology
};

// One adapter per host (its fabric's family, the host link's speed); one
// box per switch or router, the smallest standard radix that has its ports
// at its fastest link's speed; one cable per link, copper when a host is an
// end (inside a rack), optical between switches (between tiers); the
// fabric's licences per node.
Bom bill_of_materials(const ExperimentConfig& cfg, const PriceBook& book);

// The cost of a run: capex (the BOM), power, opex (energy for `years` at
// the PUE) and the CPU: the cores the run kept busy on average
// (sum of cpu_busy_ps / end_time_ps), priced per core-hour for `years`.
struct CostTotals {
  double capex = 0, power_w = 0, opex = 0, cpu_cores = 0, cpu_cost = 0, total = 0;
};
CostTotals cost_totals(const Bom& bom, const PriceBook& book, uint64_t cpu_busy_ps, uint64_t end_time_ps);

// The switch family a topology switch of `cfg` is priced as: the fabric's
// (ib), or for every Ethernet fabric alike the book's ethernet_switches.
std::string_view switch_family(const ExperimentConfig& cfg, const PriceBook& book);

// Cost per unit of work (docs/cost.md), one entry a unit with work done:
// network = (capex + opex) / (amount / seconds x the years in seconds), the
// network's cost spread over what it moves at the measured rate for the
// whole horizon; cpu = the run's CPU time (cpu_busy_ps as core-hours x
// cpu_core_hour) / amount, what the work itself costs in CPU however long
// it took; total = network + cpu.
nlohmann::json per_unit_json(const CostTotals& t, const PriceBook& book, uint64_t cpu_busy_ps,
                             const WorkDone& work);

// results.json's `cost`: {currency, capex, power_w, opex, total, cpu,
// per_unit, bom, assumptions, warnings}; `switches`: the switch family priced.
nlohmann::json cost_json(const Bom& bom, const PriceBook& book, uint64_t cpu_busy_ps, uint64_t end_time_ps,
                         const WorkDone& work = {}, std::string_view switches = {});

// The experiment's price book: the shipped catalogue with its `cost`
// settings applied; `errors` gets those naming no catalogue item.
PriceBook experiment_prices(const ExperimentConfig& cfg, std::vector<LoadError>& errors);
// An experiment's price book and bill of materials: a function of its
// topology alone, made before the run (counting a k = 64 fat tree's ports
// and link speeds takes some 10 MiB, which would add to the run's peak at
// its end). The bill points into the book: held where it was made.
struct ExperimentPricing {
  PriceBook book;
  Bom bom;
  std::string switches;  // the switch family priced
};
std::unique_ptr<const ExperimentPricing> experiment_pricing(const ExperimentConfig& cfg);
// results.json's `cost` of a run priced by `pricing`.
nlohmann::json experiment_cost(const ExperimentPricing& pricing, uint64_t cpu_busy_ps, uint64_t end_time_ps,
                               const WorkDone& work = {});

}  // namespace rdmasim
