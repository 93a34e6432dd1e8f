// The command line's changes to an experiment (--set, --fabric, --seed),
// applied to the YAML tree before any section is read. Each override is
// remembered, so an error about a value it put there points at the option
// ("<command line>:N:column") rather than at the file.
#pragma once

#include <string_view>

#include "topologies/yaml_reader.hpp"

namespace rdmasim {

// Sets `key` (a dotted path; numeric parts index lists) to `value` (YAML)
// in the tree. o.value_column says where the value starts in the option's text.
void apply_override(YamlReader& c, YAML::Node root, std::string_view key, std::string_view value, Override o);

// Applies one --set text, "key.path=value".
void apply_set(YamlReader& c, YAML::Node root, std::string_view text, Override o);

}  // namespace rdmasim
