#include "fabrics/iba/transport/cc/timely.hpp"

#include <algorithm>

namespace rdmasim {

Timely::Timely(const TimelyConfig& cfg, DataRate line)
    : cfg_(cfg), line_(static_cast<double>(line.bps())), rate_(line_) {}

std::optional<DataRate> Timely::pacing_rate() const {
  if (rate_ >= line_) return std::nullopt;
  return DataRate(static_cast<uint64_t>(rate_));
}

// One update per completion event, a completion being the first RTT
// sample at least min_rtt after the last update. The paper's completions
// are of 16 to 64 KB segments, 13 to 52 us apart at its 10 Gb/s, about its
// minRTT, so that rtt_diff spans about min_rtt; per-packet samples at
// 100 Gb/s are a fraction of a microsecond apart and would make the
// gradient tiny. Not once per RTT (as HPCC's simulator does): while a queue
// builds the RTT grows and per-RTT updates thin out just when they matter.
void Timely::on_ack(const CcAck& a) {
  if (!a.rtt) return;
  if (prev_rtt_ && a.now - last_update_ < cfg_.min_rtt) return;
  last_update_ = a.now;
  update(*a.rtt);
}

void Timely::update(Time rtt) {
  if (!prev_rtt_) {  // the first sample has no difference yet
    prev_rtt_ = rtt;
    return;
  }
  const double new_diff = static_cast<double>((rtt - *prev_rtt_).count());
  prev_rtt_ = rtt;
  rtt_diff_ = (1 - cfg_.ewma) * rtt_diff_ + cfg_.ewma * new_diff;
  gradient_ = rtt_diff_ / static_cast<double>(cfg_.min_rtt.count());
  const double delta = static_cast<double>(cfg_.additive.bps());
  if (rtt < cfg_.t_low) {
    rate_ += delta;
  } else if (rtt > cfg_.t_high) {
    rate_ *=
        1 - cfg_.beta * (1 - static_cast<double>(cfg_.t_high.count()) / static_cast<double>(rtt.count()));
    negative_steps_ = 0;
  } else if (gradient_ <= 0) {
    ++negative_steps_;
    const double n = negative_steps_ >= cfg_.hai_threshold ? 5 : 1;  // hyperactive increase
    rate_ += n * delta;
  } else {
    rate_ *= 1 - cfg_.beta * gradient_;
    negative_steps_ = 0;
  }
  rate_ = std::clamp(rate_, static_cast<double>(cfg_.min_rate.bps()), line_);
}

}  // namespace rdmasim
