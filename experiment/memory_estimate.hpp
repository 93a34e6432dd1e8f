// About how much memory a run will commit, estimated from the experiment
// before any of its network is built, so that a run too large for the
// machine is refused at once with the estimate and its largest part
// (`--memory-limit`, docs/reliability.md "Memory") instead of dying of
// bad_alloc after minutes of building.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "topologies/config.hpp"
#include "topologies/load_error.hpp"

namespace rdmasim {

struct MemoryPart {
  std::string what;    // "message buffers", "routing tables", ...
  uint64_t bytes = 0;  // committed, about
  std::string detail;  // how it was counted
  // Where its largest term was written (a workload), for the error; empty: the topology.
  std::string key;
  int line = 0, column = 0;
};

struct MemoryEstimate {
  std::vector<MemoryPart> parts;  // largest first
  uint64_t total = 0;
};

MemoryEstimate estimate_memory(const ExperimentConfig& x);

// The error when the estimate passes `limit`: at the largest part's place,
// with the estimate, the limit (`limit_from` says where it came from) and
// the parts.
std::optional<LoadError> memory_error(const ExperimentConfig& x, uint64_t limit,
                                      const std::string& limit_from);

}  // namespace rdmasim
