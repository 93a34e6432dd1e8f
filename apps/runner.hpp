// Builds the simulated network of an experiment, runs it, and reports.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>

namespace rdmasim {

struct ExperimentConfig;

// Runs `cfg` and writes its captures under `dir`/pcap/. Returns results.json's
// content (the caller writes it). Throws InputError for a connect-time
// failure the YAML could not show, OutputError when a capture cannot be
// written, and anything else for an internal failure (core/errors.hpp).
nlohmann::json run_experiment(const ExperimentConfig& cfg, const std::filesystem::path& dir);

}  // namespace rdmasim
