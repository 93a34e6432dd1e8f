// The fabrics rdmasim knows, by name (fabrics/registry.cpp lists them).
#pragma once

#include <string_view>
#include <vector>

#include "fabrics/fabric.hpp"

namespace rdmasim {

// In the registry's order, which is the order `fabric:` lists them in.
const std::vector<const Fabric*>& fabrics();
std::vector<std::string_view> fabric_names();
// The fabric `name`, or nullptr.
const Fabric* find_fabric(std::string_view name);
// The fabric of a loaded experiment (the loader checked the name).
const Fabric& fabric_of(const ExperimentConfig& cfg);
// Every fabric's sections, each key once, in the registry's order.
std::vector<SectionType> fabric_sections();

}  // namespace rdmasim
