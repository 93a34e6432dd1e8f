// The flow-size CDFs of `kind: flows`: the built-in ones (workloads/cdf/,
// compiled in) and HPCC's traffic_gen file format, read when the experiment
// is loaded so a bad file is a located error.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/config.hpp"

namespace rdmasim {

// Parses a CDF file: lines of `size_bytes cumulative_percent` (HPCC's
// traffic_gen format), blank lines and `#` comments allowed. Sizes must not
// fall and are at most kMaxFlowBytes, the last above 0; percents must rise
// from 0 to 100. On error returns nullopt and sets `error` to "line L:
// message" (or the message, for the file as a whole).
inline constexpr double kMaxFlowBytes = 2147483648.0;  // 2^31
// The most of a CDF file read (its lines are a few bytes each).
inline constexpr uint64_t kMaxCdfFileBytes = 16 << 20;
std::optional<std::vector<CdfPoint>> parse_cdf(std::string_view text, std::string& error);
// The text of a built-in CDF (`websearch`, `hadoop`; workloads/cdf/*.txt), or nullopt.
std::optional<std::string_view> builtin_cdf(std::string_view name);

}  // namespace rdmasim
