#include "apps/progress.hpp"

#include <fmt/format.h>

#include <string>

namespace rdmasim {

namespace {
std::string grouped(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

std::string sim_time(Time t) {
  const double ps = static_cast<double>(t.count());
  if (ps >= 1e9) return fmt::format("{:.3f} ms", ps / 1e9);
  return fmt::format("{:.3f} us", ps / 1e6);
}
}  // namespace

ProgressLine::ProgressLine(std::ostream& out, std::optional<Time> stop, bool flows,
                           std::chrono::milliseconds first_after)
    : out_(out), stop_(stop), flows_(flows), first_after_(first_after), start_(Clock::now()), last_(start_) {}

bool ProgressLine::due() const {
  const auto now = Clock::now();
  return now - start_ >= first_after_ && (width_ == 0 || now - last_ >= std::chrono::milliseconds(250));
}

void ProgressLine::update(Time now, uint64_t events, uint64_t frames, uint64_t flows_done) {
  const auto wall = Clock::now();
  const double secs = std::chrono::duration<double>(wall - start_).count();
  last_ = wall;
  std::string line = "simulated " + sim_time(now);
  if (stop_) line += " of " + sim_time(*stop_);
  line += fmt::format(" | {:.1f} M events/s | {} frames", static_cast<double>(events) / secs / 1e6,
                      grouped(frames));
  if (flows_) line += " | " + grouped(flows_done) + " flows done";
  line += fmt::format(" | {:.0f} s", secs);
  if (stop_ && now.count() > 0 && now < *stop_)
    line += fmt::format(", ~{:.0f} s left", secs * static_cast<double>((*stop_ - now).count()) /
                                                static_cast<double>(now.count()));
  const size_t width = line.size();
  if (width < width_) line.append(width_ - width, ' ');  // cover the longer line before
  width_ = width;
  out_ << '\r' << line << std::flush;
}

void ProgressLine::finish() {
  if (width_ > 0) out_ << '\n' << std::flush;
}

}  // namespace rdmasim
