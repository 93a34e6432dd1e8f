// `cost:` and a --prices FILE (docs/cost.md): changes to the price
// catalogue, each with where it was written; cost/ checks the item names.
#include <algorithm>

#include "experiment/sections/sections.hpp"

namespace rdmasim {

namespace {

using namespace keys;

// What each amount may be. The sums (docs/cost.md) multiply up to four of
// them and the node and link counts, and divide by the years: bounded so,
// they stay finite (a price of 1e308 made capex inf, which JSON writes as
// null). A trillion is more than any part costs in any currency.
ValueType<double> money() { return number(0, 1e12); }
ValueType<double> watts() { return number(0, 1e6); }  // a megawatt an item
ValueType<double> pue() { return number(0, 10, true); }
ValueType<double> years() { return number(0.001, 100); }  // from about nine hours

// An amount read as `vt` says.
std::optional<double> amount(YamlReader& c, const YAML::Node& v, const std::string& path,
                             const ValueType<double>& vt) {
  return vt.parse(c, Entry{YAML::Node(), v, path});
}

template <class C>
Key<C> amount_key(std::string name, const ValueType<double>& vt, std::string fallback, std::string help,
                  std::string type = "number") {
  return row<C>(std::move(name), std::move(type), std::move(fallback), vt.range, std::move(help), "");
}

void add_cost(YamlReader& c, std::vector<CostSetting>& out, const YAML::Node& at, const std::string& path,
              std::string key, double amount, std::string text = {}) {
  LoadError where = c.locate(at, path, "");
  const std::string shown = path.empty() ? "" : path + ": ";
  out.push_back({std::move(key), amount, std::move(text), where.file, path,
                 where.message.substr(std::min(where.message.size(), shown.size())), where.line,
                 where.column});
}

}  // namespace

// The catalogue holds the defaults (cost/catalogue.yaml); each key is a change to it, read below.
const KeyTable<std::vector<CostSetting>>& cost_keys() {
  using C = std::vector<CostSetting>;
  static const KeyTable<C> t{
      "cost",
      "cost settings",
      {
          declared<C>("currency", "name", "USD",
                      "the currency the prices are in (a label: nothing is converted)"),
          amount_key<C>("energy_price", money(), "0.127", "price of a kWh"),
          amount_key<C>("pue", pue(), "1.58", "facility watts per IT watt"),
          amount_key<C>("years", years(), "5", "years of operation that opex and CPU cost cover"),
          amount_key<C>("cpu_core_hour", money(), "0.089", "price of one core busy for an hour"),
          declared<C>("ethernet_switches", "`ethernet` or `ethernet_dcb`", "ethernet",
                      "the switches every Ethernet fabric (`roce_v1`, `roce_v2`, `iwarp`, `tcp`) is priced "
                      "on: commodity, "
                      "or sold for RoCE"),
          amount_key<C>("prices", money(), "", "unit price of catalogue items, e.g. `{roce_nic_100g: 850}`",
                        "map of item to number"),
          amount_key<C>("watts", watts(), "", "power of catalogue items", "map of item to number"),
      }};
  return t;
}

void read_cost(YamlReader& c, const YAML::Node& v, const std::string& path, std::vector<CostSetting>& out) {
  const auto f = cost_keys().read(c, v, path, out);
  if (!f) return;
  for (const Entry& e : f->entries) {
    if (e.value.IsNull()) continue;
    const std::string& k = e.key.Scalar();
    if (k == "currency") {
      if (auto s = c.name(e.value, e.path, "a currency code such as USD"))
        add_cost(c, out, e.key, e.path, k, 0, *s);
    } else if (k == "ethernet_switches") {
      if (auto s = c.name(e.value, e.path, "a switch family: ethernet or ethernet_dcb"))
        add_cost(c, out, e.value, e.path, k, 0, *s);
    } else if (k == "prices" || k == "watts") {
      if (!e.value.IsMap()) {
        c.error(e.value, e.path,
                "expected a map of catalogue items to amounts, such as {roce_nic_100g: 900}, got " +
                    describe(e.value));
        continue;
      }
      for (auto it = e.value.begin(); it != e.value.end(); ++it) {
        auto item = c.name(it->first, e.path, "a catalogue item name");
        if (!item) continue;
        const std::string p = key_path(e.path, *item);
        if (auto x = amount(c, it->second, p, k == "prices" ? money() : watts()))
          add_cost(c, out, it->first, p, k + "." + *item, *x);
      }
    } else if (auto x = amount(c, e.value, e.path, k == "years" ? years() : k == "pue" ? pue() : money())) {
      add_cost(c, out, e.key, e.path, k, *x);
    }
  }
}

}  // namespace rdmasim
