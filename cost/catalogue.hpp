// The price and power catalogue (cost/catalogue.yaml, compiled into the
// binary) and the changes an experiment or a --prices file makes to it.
// docs/cost.md lists every entry with its source and date.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"
#include "experiment/loader.hpp"

namespace rdmasim {

enum class ItemKind { adapter, switch_box, cable, licence };

struct CatalogueItem {
  std::string key;  // e.g. roce_nic_100g
  ItemKind kind = ItemKind::adapter;
  std::string family;    // adapters: ib, roce, iwarp, ethernet; switches: ib, ethernet_dcb, ethernet; cables:
                         // ib, ethernet
  DataRate speed;        // port speed (none for licences)
  uint32_t radix = 0;    // switches: ports
  bool optical = false;  // cables: optical (between tiers) or copper (within a rack)
  double price = 0;      // per unit, in the catalogue's currency
  double watts = 0;      // per unit
  std::string product, source, date;
  bool estimate = true;
};

// The catalogue with any changes applied: what a BOM is priced with.
struct PriceBook {
  std::string currency;
  double energy_price = 0;   // per kWh
  double pue = 1;            // facility watts per IT watt
  double years = 1;          // opex horizon
  double cpu_core_hour = 0;  // price of one core busy for an hour
  // The switch family of every Ethernet fabric (a fabric whose
  // CostFamilies::switches is "ethernet"): ethernet or ethernet_dcb.
  std::string ethernet_switches = "ethernet";
  std::vector<CatalogueItem> items;

  const CatalogueItem* find(std::string_view key) const;
  // Whether the catalogue has switches of `family`, an Ethernet one (ethernet, ethernet_dcb, ...).
  bool has_ethernet_switches(std::string_view family) const;
};

// The shipped catalogue's text, and the book it makes (parsed once; a
// broken shipped file is a bug: std::logic_error).
std::string_view catalogue_text();
const PriceBook& shipped_prices();
// A catalogue in the shipped file's format; throws std::runtime_error with
// the line of the first problem.
PriceBook parse_catalogue(std::string_view yaml);

// `book` with `settings` applied in order. An unknown item is an error at
// the place the setting was written.
PriceBook apply_settings(PriceBook book, const std::vector<CostSetting>& settings,
                         std::vector<LoadError>& errors);

}  // namespace rdmasim
