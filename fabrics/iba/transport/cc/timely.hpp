// TIMELY (Mittal et al., SIGCOMM 2015, Algorithm 1): rate control from RTT
// samples the NIC takes itself (the send time of a packet against the
// arrival of its ACK; no field on the wire). Once per completion event
// (once an RTT, or the first sample at least min_rtt after the last
// update): the RTT difference is smoothed (weight `ewma` for the newest)
// and normalised by min_rtt into a gradient. Below t_low the rate rises by
// delta; above t_high it falls by beta (1 - t_high / rtt); in between a
// gradient <= 0 raises it by delta, and a positive gradient cuts it by
// beta x gradient (never below zero). After hai_threshold increases in a
// row each one is the hyper step (N delta, N = 5). delta and the hyper
// step scale with the line rate (per rates_per).
#pragma once

#include "fabrics/iba/transport/cc/congestion_control.hpp"

namespace rdmasim {

class Timely final : public QpCongestionControl {
 public:
  Timely(const TimelyConfig& cfg, DataRate line);

  std::optional<DataRate> pacing_rate() const override;
  std::optional<uint64_t> window() const override;
  void on_ack(const CcAck& a) override;

  double rate_bps() const { return rate_; }
  double gradient() const { return gradient_; }

 private:
  void update(Time rtt);

  const TimelyConfig& cfg_;
  const double line_;
  const double additive_, hyper_;
  double rate_;
  std::optional<Time> prev_rtt_;
  double rtt_diff_ = 0;  // ps
  double gradient_ = 0;
  uint32_t increases_ = 0;  // in a row
  Time last_update_;
  uint32_t last_update_psn_ = 0;
};

}  // namespace rdmasim
