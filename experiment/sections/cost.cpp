// `cost:` and a --prices FILE (docs/cost.md): changes to the price
// catalogue, each with where it was written; cost/ checks the item names.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "experiment/sections/sections.hpp"

namespace rdmasim {

namespace {

// An amount of money, watts or years: a number from 0 (above 0 if `positive`).
std::optional<double> amount(YamlReader& c, const YAML::Node& v, const std::string& path, bool positive) {
  const std::string what = positive ? "a number above 0" : "a number from 0";
  auto s = c.scalar(v, path, what);
  if (!s) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(s->c_str(), &end);
  if (s->empty() || end != s->c_str() + s->size() || errno != 0 || !std::isfinite(x) || x < 0 ||
      (positive && x == 0)) {
    c.error(v, path, "expected " + what + ", got " + describe(v));
    return std::nullopt;
  }
  return x;
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
          declared<C>("energy_price", "number from 0", "0.127", "price of a kWh"),
          declared<C>("pue", "number above 0", "1.58", "facility watts per IT watt"),
          declared<C>("years", "number above 0", "5", "years of operation that opex and CPU cost cover"),
          declared<C>("cpu_core_hour", "number from 0", "0.089", "price of one core busy for an hour"),
          declared<C>("ethernet_switches", "`ethernet` or `ethernet_dcb`", "ethernet",
                      "the switches every Ethernet fabric (`roce_v1`, `roce_v2`, `iwarp`, `tcp`) is priced "
                      "on: commodity, "
                      "or sold for RoCE"),
          declared<C>("prices", "map of item to number from 0", "",
                      "unit price of catalogue items, e.g. `{roce_nic_100g: 850}`"),
          declared<C>("watts", "map of item to number from 0", "", "power of catalogue items"),
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
        if (auto x = amount(c, it->second, p, false)) add_cost(c, out, it->first, p, k + "." + *item, *x);
      }
    } else if (auto x = amount(c, e.value, e.path, k == "years" || k == "pue")) {
      add_cost(c, out, e.key, e.path, k, *x);
    }
  }
}

}  // namespace rdmasim
