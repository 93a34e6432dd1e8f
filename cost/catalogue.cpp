#include "cost/catalogue.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <stdexcept>

namespace rdmasim {

namespace {

[[noreturn]] void bad(const YAML::Node& at, const std::string& what) {
  throw std::runtime_error("catalogue line " + std::to_string(at.Mark().line + 1) + ": " + what);
}

YAML::Node need(const YAML::Node& map, const char* key, const YAML::Node& ctx) {
  if (!map[key]) bad(ctx, std::string("missing '") + key + "'");
  return map[key];
}

double number(const YAML::Node& v) {
  try {
    return v.as<double>();
  } catch (const YAML::Exception&) {
    bad(v, "expected a number, got '" + v.Scalar() + "'");
  }
}

// A figure with its unit, source and date: {value, unit, source, date}.
double figure(const YAML::Node& root, const char* key) {
  const YAML::Node f = need(root, key, root);
  need(f, "source", f);
  need(f, "date", f);
  return number(need(f, "value", f));
}

ItemKind kind_of(const YAML::Node& v) {
  const std::string s = v.Scalar();
  if (s == "adapter") return ItemKind::adapter;
  if (s == "switch") return ItemKind::switch_box;
  if (s == "cable") return ItemKind::cable;
  if (s == "licence") return ItemKind::licence;
  bad(v, "unknown kind '" + s + "'");
}

CatalogueItem item(const std::string& key, const YAML::Node& n) {
  CatalogueItem it;
  it.key = key;
  it.kind = kind_of(need(n, "kind", n));
  it.family = need(n, "family", n).Scalar();
  if (it.kind != ItemKind::licence) {
    std::string why;
    auto r = parse_rate(need(n, "speed", n).Scalar(), &why);
    if (!r) bad(n["speed"], why);
    it.speed = *r;
  }
  if (it.kind == ItemKind::switch_box) it.radix = static_cast<uint32_t>(number(need(n, "radix", n)));
  if (it.kind == ItemKind::cable) {
    const std::string reach = need(n, "reach", n).Scalar();
    if (reach != "copper" && reach != "optical") bad(n["reach"], "reach is copper or optical");
    it.optical = reach == "optical";
  }
  it.price = number(need(n, "price", n));
  it.watts = number(need(n, "watts", n));
  it.product = need(n, "product", n).Scalar();
  it.source = need(n, "source", n).Scalar();
  it.date = need(n, "date", n).Scalar();
  it.estimate = n["estimate"] && n["estimate"].as<bool>();
  return it;
}

}  // namespace

const CatalogueItem* PriceBook::find(std::string_view key) const {
  for (const auto& i : items)
    if (i.key == key) return &i;
  return nullptr;
}

bool PriceBook::has_ethernet_switches(std::string_view family) const {
  return family.starts_with("ethernet") &&
         std::any_of(items.begin(), items.end(), [&](const CatalogueItem& i) {
           return i.kind == ItemKind::switch_box && i.family == family;
         });
}

PriceBook parse_catalogue(std::string_view yaml) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw std::runtime_error("catalogue line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  PriceBook b;
  b.currency = need(root, "currency", root).Scalar();
  b.energy_price = figure(root, "energy_price");
  b.pue = figure(root, "pue");
  b.years = figure(root, "years");
  b.cpu_core_hour = figure(root, "cpu_core_hour");
  const YAML::Node items = need(root, "items", root);
  if (!items.IsMap()) bad(items, "items is a map of item names to entries");
  for (auto it = items.begin(); it != items.end(); ++it)
    b.items.push_back(item(it->first.Scalar(), it->second));
  if (const YAML::Node e = root["ethernet_switches"]) {
    b.ethernet_switches = e.Scalar();
    if (!b.has_ethernet_switches(b.ethernet_switches))
      bad(e, "no Ethernet switch of family '" + b.ethernet_switches + "'");
  }
  return b;
}

const PriceBook& shipped_prices() {
  static const PriceBook book = [] {
    try {
      return parse_catalogue(catalogue_text());
    } catch (const std::runtime_error& e) {
      throw std::logic_error(std::string("the shipped price catalogue is broken: ") + e.what());
    }
  }();
  return book;
}

PriceBook apply_settings(PriceBook book, const std::vector<CostSetting>& settings,
                         std::vector<LoadError>& errors) {
  for (const CostSetting& s : settings) {
    const std::string_view key = s.key;
    if (key == "currency") {
      book.currency = s.text;
    } else if (key == "energy_price") {
      book.energy_price = s.amount;
    } else if (key == "pue") {
      book.pue = s.amount;
    } else if (key == "years") {
      book.years = s.amount;
    } else if (key == "cpu_core_hour") {
      book.cpu_core_hour = s.amount;
    } else if (key == "ethernet_switches") {
      if (book.has_ethernet_switches(s.text))
        book.ethernet_switches = s.text;
      else
        errors.push_back(
            {s.file, s.line, s.column,
             s.path + ": no Ethernet switches of family '" + s.text +
                 "' in the price catalogue: ethernet (commodity) or ethernet_dcb (sold for RoCE)" + s.note});
    } else {
      const bool price = key.starts_with("prices.");
      const std::string_view name = key.substr(key.find('.') + 1);
      auto it =
          std::find_if(book.items.begin(), book.items.end(), [&](const auto& i) { return i.key == name; });
      if (it == book.items.end()) {
        errors.push_back({s.file, s.line, s.column,
                          s.path + ": no item '" + std::string(name) +
                              "' in the price catalogue (docs/cost.md lists them)" + s.note});
        continue;
      }
      (price ? it->price : it->watts) = s.amount;
    }
  }
  return book;
}

}  // namespace rdmasim
