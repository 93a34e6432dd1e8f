// `workloads:`, what each host does: a list of workloads, each read by its
// kind (workloads/registry.hpp), which declares its own keys.
#include <algorithm>
#include <unordered_map>

#include "experiment/sections/sections.hpp"
#include "workloads/registry.hpp"

namespace rdmasim {

namespace {

// "a, b and c".
std::string prose(std::span<const KeySpec> keys) {
  std::string out;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) out += i + 1 == keys.size() ? " and " : ", ";
    out += keys[i].name;
  }
  return out;
}

// A key some kind takes, given to one that does not: which kinds take it,
// or, when that is many, which keys this one takes.
void foreign_keys(ExperimentDraft& d, const Fields& f, const Workload& kind, const std::string& name) {
  const KeyTableBase& keys = kind.keys();
  for (const Entry& e : f.entries) {
    const std::string& key = e.key.Scalar();
    if (key == "name" || key == "kind" || keys.has(key)) continue;
    const std::string takers = kinds_taking(key);
    if (takers.find(',') == std::string::npos && takers.find(" and ") == std::string::npos)
      d.c.error(e.key, e.path, "only " + takers + " takes " + key + ", not " + name);
    else
      d.c.error(e.key, e.path, name + " takes " + prose(keys.specs()) + ", not " + key);
  }
}

bool workload(ExperimentDraft& d, const YAML::Node& v, const std::string& path, WorkloadConfig& w) {
  auto f = d.c.fields(v, path, "a workload", workload_keys());
  if (!f) return false;
  const YAML::Mark m = mark_of(v);
  w.line = m.line + 1;
  w.column = m.column + 1;
  const std::vector<std::string_view> kinds = workload_kind_names();
  const Entry* ke = f->find("kind");
  if (!ke) {
    d.c.missing(*f, "kind", "one of " + join_names(kinds));
    return false;
  }
  auto kind_name = d.c.one_of(ke->value, ke->path, "workload kind", kinds);
  if (!kind_name) return false;
  const Workload& kind = *find_workload(*kind_name);
  w.kind_name = *kind_name;
  if (auto e = f->find("name"))
    if (auto n = d.c.name(e->value, e->path, "a workload name")) w.name = *n;
  foreign_keys(d, *f, kind, w.kind_name);
  return kind.read(d, *f, w, *ke);
}

}  // namespace

// The keys every kind takes; each kind's own are its table (workloads/registry.hpp).
const KeyTable<WorkloadConfig>& workload_common_keys() {
  static const KeyTable<WorkloadConfig> t{
      "workloads",
      "a workload",
      {
          declared<WorkloadConfig>("kind", "a kind's name (below)", "", "what traffic; **required**"),
          declared<WorkloadConfig>("name", "name", "",
                                   "names it in results; unique; default `w0`, `w1`, ... by position"),
      }};
  return t;
}

void read_workloads(ExperimentDraft& d, const Entry& e) {
  const YAML::Node& v = e.value;
  const std::string& path = e.path;
  if (!v.IsSequence()) {
    d.c.error(v, path, "expected a list of workloads, got " + describe(v));
    return;
  }
  if (v.size() == 0) d.c.error(v, path, "at least one workload");
  std::unordered_map<std::string, int> names;  // name -> line
  for (size_t i = 0; i < v.size(); ++i) {
    WorkloadConfig w;
    w.name = "w" + std::to_string(i);
    const std::string wp = index_path(path, i);
    const size_t before = d.c.errors().size();
    if (!workload(d, v[i], wp, w)) continue;
    const int line = mark_of(v[i]).line + 1;
    if (auto [at, fresh] = names.emplace(w.name, line); !fresh) {
      const YAML::Node n = v[i].IsMap() && v[i]["name"] ? v[i]["name"] : v[i];
      d.c.error(
          n, wp + ".name",
          "duplicate workload name '" + w.name + "' (first at line " + std::to_string(at->second) + ")");
    }
    if (d.c.errors().size() == before) d.workloads_read.push_back({v[i], wp, d.x.workloads.size()});
    d.x.workloads.push_back(std::move(w));
  }
}

}  // namespace rdmasim
