// `faults:`, links going down and up.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

using namespace keys;

namespace {

ValueType<bool> action() {
  return {"`down` or `up`", "", "", [](YamlReader& c, const Entry& e) -> std::optional<bool> {
            auto s = c.scalar(e.value, e.path, "down or up");
            if (s && (*s == "down" || *s == "up")) return *s == "up";
            if (s) c.error(e.value, e.path, "unknown action '" + *s + "'; expected down or up");
            return std::nullopt;
          }};
}

// The link a fault names, by its two ends in either order.
bool read_link_ends(ExperimentDraft& d, const Entry& le, FaultConfig& fault) {
  if (!le.value.IsSequence() || le.value.size() != 2) {
    d.c.error(le.value, le.path, "expected the link's two ends, such as [a, s1], got " + describe(le.value));
    return false;
  }
  auto a = d.c.name(le.value[0], index_path(le.path, 0), "a node name");
  auto b = d.c.name(le.value[1], index_path(le.path, 1), "a node name");
  if (!a || !b || !d.graph) return false;
  const auto ia = d.graph->find(*a), ib = d.graph->find(*b);
  if (!ia) d.c.error(le.value[0], index_path(le.path, 0), d.unknown_node(*a));
  if (!ib) d.c.error(le.value[1], index_path(le.path, 1), d.unknown_node(*b));
  if (!ia || !ib) return false;
  const auto l = d.graph->find_link(*ia, *ib);
  if (!l) {
    d.c.error(le.value, le.path, "there is no link between '" + *a + "' and '" + *b + "'");
    return false;
  }
  fault.a = *a;
  fault.b = *b;
  fault.link = static_cast<size_t>(*l);
  return true;
}

}  // namespace

const KeyTable<FaultConfig>& fault_keys() {
  static const KeyTable<FaultConfig> t{
      "faults",
      "a fault",
      {
          required(key("at", &FaultConfig::at, time(), "", "when"), "when, such as 50us"),
          required(declared<FaultConfig>("link", "`[a, b]`", "",
                                         "the link, by its two ends in either order; it must exist"),
                   "the link's two ends, such as [a, s1]"),
          required(key("action", &FaultConfig::up, action(), "",
                       "take the link down (frames on it are lost) or bring it back"),
                   "down or up"),
      }};
  return t;
}

void read_faults(ExperimentDraft& d, const Entry& list) {
  const YAML::Node& v = list.value;
  const std::string& path = list.path;
  if (!v.IsSequence()) {
    d.c.error(
        v, path,
        "expected a list of faults such as [{at: 50us, link: [a, s1], action: down}], got " + describe(v));
    return;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    FaultConfig fault;
    const auto f = fault_keys().read(d.c, v[i], index_path(path, i), fault);
    if (!f) continue;
    const YAML::Mark m = mark_of(v[i]);
    fault.line = m.line + 1;
    fault.column = m.column + 1;
    const Entry* le = f->find("link");
    if (le && read_link_ends(d, *le, fault) && f->read_ok("at") && f->read_ok("action"))
      d.x.faults.push_back(std::move(fault));
  }
}

}  // namespace rdmasim
