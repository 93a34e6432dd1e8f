// `programs:` as a feature of the Run (workloads/run_extension.hpp): the
// ProgramsRun of an experiment that lists programs. apps/run_extensions.cpp
// lists it.
#pragma once

#include <memory>

#include "workloads/run_extension.hpp"

namespace rdmasim {

// Null without programs; throws InputError for a run split over ranks.
std::unique_ptr<RunExtension> programs_extension(const RunContext& run);

}  // namespace rdmasim
