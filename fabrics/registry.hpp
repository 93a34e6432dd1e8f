// The fabrics rdmasim knows, by name (fabrics/registry.cpp lists them).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fabrics/fabric.hpp"

namespace rdmasim {

// In the registry's order, which is the order `fabric:` lists them in.
const std::vector<const Fabric*>& fabrics();
std::vector<std::string_view> fabric_names();
// The names of the fabrics `pick` chooses, in the registry's order, as
// prose ("tcp", "roce_v1 and roce_v2", "ib, roce_v1 and roce_v2"), or ""
// when it chooses none: how code above fabrics/ says which fabrics would
// do without naming one.
std::string fabric_list(const std::function<bool(const Fabric&)>& pick);
// The fabric `name`, or nullptr.
const Fabric* find_fabric(std::string_view name);
// The fabric of a loaded experiment (the loader checked the name).
const Fabric& fabric_of(const ExperimentConfig& cfg);
// Every fabric's sections, each key once, in the registry's order.
std::vector<SectionType> fabric_sections();

}  // namespace rdmasim
