// `faults:`, links going down and up.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

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
    const std::string fp = index_path(path, i);
    auto f = d.c.fields(v[i], fp, "a fault", {"at", "link", "action"});
    if (!f) continue;
    FaultConfig fault;
    const YAML::Mark m = mark_of(v[i]);
    fault.line = m.line + 1;
    fault.column = m.column + 1;
    bool ok = true;
    if (const Entry* e = f->find("at")) {
      if (auto t = d.c.time(*e))
        fault.at = *t;
      else
        ok = false;
    } else {
      d.c.missing(*f, "at", "when, such as 50us");
      ok = false;
    }
    if (const Entry* e = f->find("action")) {
      auto s = d.c.scalar(e->value, e->path, "down or up");
      if (s && (*s == "down" || *s == "up")) {
        fault.up = *s == "up";
      } else {
        if (s) d.c.error(e->value, e->path, "unknown action '" + *s + "'; expected down or up");
        ok = false;
      }
    } else {
      d.c.missing(*f, "action", "down or up");
      ok = false;
    }
    const Entry* le = f->find("link");
    if (!le) {
      d.c.missing(*f, "link", "the link's two ends, such as [a, s1]");
      continue;
    }
    if (!le->value.IsSequence() || le->value.size() != 2) {
      d.c.error(le->value, le->path,
                "expected the link's two ends, such as [a, s1], got " + describe(le->value));
      continue;
    }
    auto a = d.c.name(le->value[0], index_path(le->path, 0), "a node name");
    auto b = d.c.name(le->value[1], index_path(le->path, 1), "a node name");
    if (!a || !b || !d.graph) continue;
    const auto ia = d.graph->find(*a), ib = d.graph->find(*b);
    if (!ia) d.c.error(le->value[0], index_path(le->path, 0), d.unknown_node(*a));
    if (!ib) d.c.error(le->value[1], index_path(le->path, 1), d.unknown_node(*b));
    if (!ia || !ib) continue;
    const auto l = d.graph->find_link(*ia, *ib);
    if (!l) {
      d.c.error(le->value, le->path, "there is no link between '" + *a + "' and '" + *b + "'");
      continue;
    }
    fault.a = *a;
    fault.b = *b;
    fault.link = static_cast<size_t>(*l);
    if (ok) d.x.faults.push_back(std::move(fault));
  }
}

}  // namespace rdmasim
