#include "workloads/registry.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rdmasim {

// Each kind folder defines one of these.
const Workload& verbs_workload();
const Workload& flows_workload();
const Workload& compute_workload();
const Workload& udp_workload();
const Workload& nvme_workload();

const std::vector<const Workload*>& workload_kinds() {
  // A kind is its folder and a line here.
  static const std::vector<const Workload*> all{
      &verbs_workload(), &flows_workload(), &compute_workload(), &udp_workload(), &nvme_workload(),
  };
  return all;
}

std::vector<std::string_view> workload_kind_names() {
  std::vector<std::string_view> out;
  for (const Workload* k : workload_kinds())
    for (std::string_view n : k->names()) out.push_back(n);
  return out;
}

const Workload* find_workload(std::string_view name) {
  for (const Workload* k : workload_kinds()) {
    const auto names = k->names();
    if (std::find(names.begin(), names.end(), name) != names.end()) return k;
  }
  return nullptr;
}

const Workload& workload_of(const WorkloadConfig& w) {
  // A config made in code (tests, benchmarks) may name a built-in kind by its enum alone.
  const std::string_view name = w.kind_name.empty() ? to_string(w.kind) : std::string_view(w.kind_name);
  if (const Workload* k = find_workload(name)) return *k;
  throw std::logic_error("unknown workload kind '" + w.kind_name + "' (the loader checks the name)");
}

std::vector<std::string_view> workload_keys() {
  std::vector<std::string_view> out{"name", "kind"};
  for (const Workload* k : workload_kinds())
    for (const KeySpec& s : k->keys().specs())
      if (std::find(out.begin(), out.end(), s.name) == out.end()) out.push_back(s.name);
  return out;
}

std::string kinds_taking(std::string_view key) {
  std::vector<std::string_view> names;
  for (const Workload* k : workload_kinds()) {
    if (k->keys().has(key))
      for (std::string_view n : k->names()) names.push_back(n);
  }
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace rdmasim
