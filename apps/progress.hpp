// A long run's progress on a terminal: one line on stderr, rewritten in
// place, once the run has taken about a second of wall time:
//
//   simulated 1.234 ms of 5.000 ms | 2.1 M events/s | 1,234,567 frames | 312 flows done | 12 s, ~37 s left
//
// The runner calls update() between slices of simulated time; nothing in
// the model sees it, so the run's output is the same with or without it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>

#include "core/units.hpp"

namespace rdmasim {

// Whether and where a run shows the line: on a terminal after a second
// (`run`), or from the start on any stderr (`run --progress`); never with
// `--quiet`. Never in the output files.
struct ProgressOptions {
  std::ostream* out = nullptr;  // nullptr: no line
  std::chrono::milliseconds first_after{1000};
};

class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  ProgressLine(std::ostream& out, std::optional<Time> stop, bool flows,
               std::chrono::milliseconds first_after = std::chrono::seconds(1));
  // Whether a line is due (after `first_after`, then every quarter second).
  bool due() const;
  void update(Time now, uint64_t events, uint64_t frames, uint64_t flows_done);
  // Ends the line, if one was printed, so the summary starts on its own line.
  void finish();

 private:
  std::ostream& out_;
  std::optional<Time> stop_;
  bool flows_;
  std::chrono::milliseconds first_after_;
  Clock::time_point start_, last_;
  size_t width_ = 0;  // of the last line printed; 0: none yet
};

}  // namespace rdmasim
