// Work a run did, to price per unit of it (cost.per_unit, docs/cost.md).
#pragma once

#include <string>
#include <vector>

namespace rdmasim {

// `amount` units of work (GB moved, million operations, million I/Os, ...).
struct WorkUnit {
  std::string unit;  // "GB", "Mop", ...
  std::string of;    // what is counted: "bytes moved", "operations"
  double amount = 0;
};
// The units of work a run did, in `seconds` (the span its rate is measured over).
struct WorkDone {
  std::vector<WorkUnit> units;
  double seconds = 0;
};

}  // namespace rdmasim
