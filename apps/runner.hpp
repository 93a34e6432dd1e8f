// Builds the simulated network of an experiment, runs it, and reports.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>

#include "apps/progress.hpp"

namespace rdmasim {

struct ExperimentConfig;

// Runs `cfg` and writes its captures under `dir`/pcap/. Returns results.json's
// content (the caller writes it). Throws InputError for a connect-time
// failure the YAML could not show, OutputError when a capture cannot be
// written, and anything else for an internal failure (core/errors.hpp).
// `progress`: where to show a progress line (apps/progress.hpp); it does
// not change the run.
nlohmann::json run_experiment(const ExperimentConfig& cfg, const std::filesystem::path& dir,
                              const ProgressOptions& progress = {});

}  // namespace rdmasim
