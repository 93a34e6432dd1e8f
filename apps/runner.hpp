// Builds the simulated network of an experiment, runs it, and reports.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>

#include "apps/progress.hpp"
#include "parallel/partition.hpp"

namespace rdmasim {

struct ExperimentConfig;

// Runs `cfg` and writes its captures under `dir`/pcap/. Returns results.json's
// content (the caller writes it). Throws InputError for a connect-time
// failure the YAML could not show, OutputError when a capture cannot be
// written, and anything else for an internal failure (core/errors.hpp).
// `progress`: where to show a progress line (apps/progress.hpp); it does
// not change the run.
//
// With `split` and more than one rank (Cluster, started by mpirun), every
// rank calls it: each simulates its part of the network and writes the
// captures of its nodes; rank 0 gets the results of all (the same as one
// process gives), the others null. `parallel_stats`, when given, gets on
// rank 0 what the synchronisation cost each rank (docs/parallel.md).
nlohmann::json run_experiment(const ExperimentConfig& cfg, const std::filesystem::path& dir,
                              const ProgressOptions& progress = {},
                              std::optional<PartitionMode> split = std::nullopt,
                              nlohmann::json* parallel_stats = nullptr);

}  // namespace rdmasim
