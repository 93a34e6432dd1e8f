// TIMELY (Mittal et al., SIGCOMM 2015, Algorithm 1): rate control from RTT
// samples the NIC takes itself (the send time of a packet against the
// arrival of its ACK; no field on the wire). Once per completion event
// (the first sample at least min_rtt after the last update): the RTT
// difference is smoothed (weight `ewma` for the newest) and normalised by
// min_rtt into a gradient. Below t_low the rate rises by delta; above t_high it
// falls by beta (1 - t_high / rtt); in between a gradient <= 0 raises it by delta, or by N delta (hyperactive
// increase, N = 5) after hai_threshold such steps in a row, and a positive
// gradient cuts it by beta x gradient.
#pragma once

#include "fabrics/iba/transport/cc/congestion_control.hpp"

namespace rdmasim {

class Timely final : public QpCongestionControl {
 public:
  Timely(const TimelyConfig& cfg, DataRate line);

  std::optional<DataRate> pacing_rate() const override;
  void on_ack(const CcAck& a) override;

  double rate_bps() const { return rate_; }
  double gradient() const { return gradient_; }

 private:
  void update(Time rtt);

  const TimelyConfig& cfg_;
  const double line_;
  double rate_;
  std::optional<Time> prev_rtt_;
  double rtt_diff_ = 0;  // ps
  double gradient_ = 0;
  uint32_t negative_steps_ = 0;
  Time last_update_;
};

}  // namespace rdmasim
