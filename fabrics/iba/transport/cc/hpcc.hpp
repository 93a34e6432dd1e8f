// HPCC (Li et al., SIGCOMM 2019, Algorithm 1): the sender reads the
// telemetry its ACKs echo (per hop: timestamp, bytes sent, queue length,
// link rate) and estimates each link's normalised inflight bytes
//   U_j = qlen_j / (B_j T) + txRate_j / B_j
// (qlen the smaller of the last two samples, txRate from the byte and time
// differences of two samples), keeps the largest, and smooths it over the
// base RTT T by the time between the samples. Per ACK it computes a window
// from W^c, the window of the last reference update (once per RTT, when an
// ACK passes the PSN sent at the previous one):
//   U/eta >= 1 or max_stage additive steps done: W = W^c / (U/eta) + W_AI
//   otherwise:                                   W = W^c + W_AI
// The QP sends at most W unacknowledged bytes and paces at W / T. W_AI is
// given as a rate (W_AI = additive x T), as HPCC's simulator does. Every
// ACK in between computes W from W^c too (the simulator's FAST_REACT) unless
// fast_react is off. max_stage is the simulator's MI_THRESH, 0 as its
// run.py runs it: every update is multiplicative, W = W^c / (U/eta) + W_AI.
#pragma once

#include "fabrics/iba/transport/cc/congestion_control.hpp"

namespace rdmasim {

class Hpcc final : public QpCongestionControl {
 public:
  Hpcc(const HpccConfig& cfg, DataRate line);

  std::optional<DataRate> pacing_rate() const override;
  std::optional<uint64_t> window() const override;
  void on_ack(const CcAck& a) override;

  double rate_bps() const { return rate_; }
  double utilisation() const { return u_; }
  uint32_t stage() const { return stage_; }

 private:
  const HpccConfig& cfg_;
  const double line_;
  const double additive_;  // W_AI as a rate, scaled to the line rate
  double rate_;            // W / T, bits per second
  double ref_rate_;        // W^c / T
  double u_ = 1;
  uint32_t stage_ = 0;
  bool have_ref_ = false;
  uint32_t last_update_ = 0;  // PSN sent at the last reference update
  IntStack last_;             // the previous sample of each hop
  Time last_at_;              // when it arrived (local time)
};

}  // namespace rdmasim
