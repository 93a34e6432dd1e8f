// Experiment files to ExperimentConfig. Every problem found is reported,
// each with the file, line and column of the key or value at fault and the
// key path (docs/yaml.md lists every key).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/config.hpp"

namespace rdmasim {

// The file name errors about --set, --fabric and --seed carry.
inline constexpr std::string_view kCommandLine = "<command line>";

struct LoadError {
  std::string file;            // the experiment file, or "<command line>"; line = position of the option
  int line = 0, column = 0;    // from 1
  std::string message;         // "key.path: what is wrong"
  std::string format() const;  // "file:line:column: message"
};

struct LoadResult {
  std::optional<ExperimentConfig> config;  // set when there are no errors
  std::vector<LoadError> errors;           // command-line ones first, then by line and column
};

// `set_overrides` are "key.path=value" texts (--set): the value is parsed as
// a YAML scalar or flow node and replaces the key in the file's tree before
// conversion; numeric path parts index lists ("workloads.0.count=10").
// `fabric_override` (--fabric) and `seed_override` (--seed) act like --set.
LoadResult load_experiment(const std::filesystem::path& file,
                           const std::vector<std::string>& set_overrides = {},
                           std::optional<std::string> fabric_override = {},
                           std::optional<uint64_t> seed_override = {});

// The same from text in memory; `file` names it in errors and in the result.
LoadResult load_experiment_text(std::string_view yaml, const std::filesystem::path& file,
                                const std::vector<std::string>& set_overrides = {},
                                std::optional<std::string> fabric_override = {},
                                std::optional<uint64_t> seed_override = {});

// A --prices FILE (docs/cost.md): the keys of an experiment's `cost:`
// section, at the top of the file.
struct CostLoad {
  std::vector<CostSetting> settings;
  std::vector<LoadError> errors;
};
CostLoad load_cost_file(const std::filesystem::path& file);

}  // namespace rdmasim
