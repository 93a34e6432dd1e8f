// A flow's statistics as JSON and back, for what crosses MPI ranks (a
// flow end's findings, a rank's part of a flow): one encoding for both.
#pragma once

#include <nlohmann/json.hpp>

#include "workloads/workload.hpp"

namespace rdmasim {

nlohmann::json flow_stats_json(const FlowStats& s);
// Throws nlohmann::json's exceptions on a malformed message.
FlowStats flow_stats_of(const nlohmann::json& j);

}  // namespace rdmasim
