// The workload kinds rdmasim knows (workloads/registry.cpp lists them).
#pragma once

#include <string_view>
#include <vector>

#include "workloads/workload_kind.hpp"

namespace rdmasim {

// In the registry's order.
const std::vector<const Workload*>& workload_kinds();
// Every `kind:` value, in the registry's order.
std::vector<std::string_view> workload_kind_names();
// The kind that takes `kind: name`, or nullptr.
const Workload* find_workload(std::string_view name);
// The kind of a loaded workload (the loader checked its name); a config
// made in code may leave kind_name empty for a built-in kind's enum.
const Workload& workload_of(const WorkloadConfig& w);
// Every kind's keys, each once, in the registry's order (name and kind first).
std::vector<std::string_view> workload_keys();
// The kinds that declare `key`, as prose ("compute", "incast, all_to_all and flows").
std::string kinds_taking(std::string_view key);

}  // namespace rdmasim
