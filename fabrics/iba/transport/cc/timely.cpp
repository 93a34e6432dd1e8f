#include "fabrics/iba/transport/cc/timely.hpp"

#include <algorithm>

namespace rdmasim {

Timely::Timely(const TimelyConfig& cfg, DataRate line)
    : cfg_(cfg), line_(static_cast<double>(line.bps())), rate_(line_) {}

std::optional<DataRate> Timely::pacing_rate() const {
  if (rate_ >= line_) return std::nullopt;
  return DataRate(static_cast<uint64_t>(rate_));
}

void Timely::on_ack(const CcAck& a) {
  if (!a.rtt) return;
  // Once per RTT: a rate-paced sender runs far ahead of its ACKs, so the
  // round is measured in time, from the last RTT sample.
  if (started_ && a.now - last_update_ < *prev_rtt_) return;
  started_ = true;
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
