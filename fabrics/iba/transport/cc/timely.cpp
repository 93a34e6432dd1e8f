#include "fabrics/iba/transport/cc/timely.hpp"

#include <algorithm>

#include "fabrics/iba/transport/psn.hpp"

namespace rdmasim {

Timely::Timely(const TimelyConfig& cfg, DataRate line)
    : cfg_(cfg),
      line_(static_cast<double>(line.bps())),
      additive_(scaled(cfg.additive, cfg.rates_per, line_)),
      hyper_(scaled(cfg.hyper, cfg.rates_per, line_)),
      rate_(line_) {}

std::optional<DataRate> Timely::pacing_rate() const {
  if (rate_ >= line_) return std::nullopt;
  return DataRate(static_cast<uint64_t>(rate_));
}

std::optional<uint64_t> Timely::window() const {
  if (cfg_.window_rtt <= Time{}) return std::nullopt;
  return std::max<uint64_t>(static_cast<uint64_t>(rate_ * cfg_.window_rtt.to_s() / 8), 1);
}

// One update per completion event. per_rtt (HPCC's simulator, rdma-hw.cc
// HandleAckTimely): an ACK past the PSN sent at the last update, so once
// an RTT. per_min_rtt: the first sample at least min_rtt after the last
// update; the paper's completions are of 16 to 64 KB segments, 13 to 52 us
// apart at its 10 Gb/s, about its minRTT.
void Timely::on_ack(const CcAck& a) {
  if (!a.rtt) return;
  if (prev_rtt_) {
    if (cfg_.update == TimelyUpdate::per_rtt ? psn_before(a.psn, last_update_psn_)
                                             : a.now - last_update_ < cfg_.min_rtt)
      return;
  }
  last_update_ = a.now;
  last_update_psn_ = a.next_psn;
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
  bool increase = false;
  double factor = 1;
  if (rtt < cfg_.t_low) {
    increase = true;
  } else if (rtt > cfg_.t_high) {
    factor =
        1 - cfg_.beta * (1 - static_cast<double>(cfg_.t_high.count()) / static_cast<double>(rtt.count()));
  } else if (gradient_ <= 0) {
    increase = true;
  } else {
    factor = 1 - cfg_.beta * gradient_;
  }
  factor = std::max(factor, 1 - cfg_.max_mdf);
  if (increase) {
    // Hyperactive increase after hai_threshold increases in a row (any
    // kind: below t_low too, as rdma-hw.cc counts m_incStage).
    rate_ += increases_ >= cfg_.hai_threshold ? hyper_ : additive_;
    ++increases_;
  } else {
    rate_ *= factor;
    increases_ = 0;
  }
  rate_ = std::clamp(rate_, static_cast<double>(cfg_.min_rate.bps()), line_);
}

}  // namespace rdmasim
