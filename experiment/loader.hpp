// Experiment files to ExperimentConfig. Every problem found is reported,
// each with the file, line and column of the key or value at fault and the
// key path (docs/yaml.md lists every key). Loading reads the file
// (topologies/yaml_reader.hpp), applies the command-line overrides (overrides.hpp),
// reads each section (sections/) and ends with the one validate pass
// (sections/validate.cpp): every check a run can make before it simulates.
// `rdmasim run` and `rdmasim validate` both load through here, so a file
// `validate` accepts is one `run` accepts.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/config.hpp"
#include "topologies/load_error.hpp"

namespace rdmasim {

struct LoadResult {
  std::optional<ExperimentConfig> config;  // set when there are no errors
  std::vector<LoadError> errors;           // command-line ones first, then by line and column
  std::vector<LoadError> warnings;         // legal but likely not meant; for the user to read
};

// A change to the file from the command line: `text` is "key.path=value",
// `option` the flag the user gave it with, as errors quote it ("--set";
// "--vary" for a point of a sweep).
struct SetOverride {
  std::string text;
  std::string option = "--set";
  SetOverride(std::string t, std::string o = "--set") : text(std::move(t)), option(std::move(o)) {}
  SetOverride(const char* t) : text(t) {}
};

// `set_overrides` (--set): the value is parsed as a YAML scalar or flow
// node and replaces the key in the file's tree before conversion; numeric
// path parts index lists ("workloads.0.count=10"). `fabric_override`
// (--fabric) and `seed_override` (--seed, its text, read as `seed:` is)
// act like --set.
LoadResult load_experiment(const std::filesystem::path& file,
                           const std::vector<SetOverride>& set_overrides = {},
                           std::optional<std::string> fabric_override = {},
                           std::optional<std::string> seed_override = {});

// The same from text in memory; `file` names it in errors and in the result.
LoadResult load_experiment_text(std::string_view yaml, const std::filesystem::path& file,
                                const std::vector<SetOverride>& set_overrides = {},
                                std::optional<std::string> fabric_override = {},
                                std::optional<std::string> seed_override = {});

// A --prices FILE (docs/cost.md): the keys of an experiment's `cost:`
// section, at the top of the file.
struct CostLoad {
  std::vector<CostSetting> settings;
  std::vector<LoadError> errors;
};
CostLoad load_cost_file(const std::filesystem::path& file);

}  // namespace rdmasim
