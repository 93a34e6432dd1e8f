// Congestion window and slow-start threshold for NewReno (RFC 5681), CUBIC
// (RFC 9438) and DCTCP (RFC 8257). The connection decides when congestion
// happened (loss detected, ECN-Echo, timeout) and how much was acknowledged;
// this class decides what the window becomes. Loss recovery itself
// (what to retransmit, PRR) lives in the connection and is shared.
//
// Windows are in bytes. CUBIC's formula is in segments and seconds as
// RFC 9438 writes it; the double arithmetic is local to the formula.
#pragma once

#include <cstdint>

#include "core/units.hpp"
#include "fabrics/ip/tcp/tcp_config.hpp"

namespace rdmasim {

// What one ACK told the sender, for window growth.
struct AckSample {
  Time now;
  uint64_t acked = 0;    // bytes newly acknowledged (cumulatively)
  bool ece = false;      // the ACK carried ECN-Echo
  Time srtt;             // smoothed RTT (zero before the first sample)
  uint64_t snd_una = 0;  // stream offsets after this ACK
  uint64_t snd_nxt = 0;
  bool cwnd_limited = true;  // the sender was limited by cwnd, not by data or rwnd
};

class CongestionController {
 public:
  CongestionController(CongestionControl kind, uint32_t smss, uint32_t initial_segments, double dctcp_g);

  CongestionControl kind() const { return kind_; }
  uint64_t cwnd() const { return cwnd_; }
  uint64_t ssthresh() const { return ssthresh_; }
  uint32_t smss() const { return smss_; }
  bool in_slow_start() const { return cwnd_ < ssthresh_; }
  // PRR (RFC 6937) sets the window directly while recovering.
  void set_cwnd(uint64_t c) { cwnd_ = c; }

  // Growth for an ACK outside loss recovery (slow start or congestion
  // avoidance), and DCTCP's per-window estimate of the marked fraction.
  void on_ack(const AckSample& a);
  // DCTCP counts every ACK into its estimate, also those during recovery.
  void observe_ack(const AckSample& a);

  // Loss detected by duplicate ACKs or SACK: sets ssthresh (RFC 5681 eq. 4,
  // RFC 9438 4.6). The connection then runs recovery and calls
  // end_recovery(), which sets cwnd = ssthresh.
  void on_loss(Time now, uint64_t flight);
  void end_recovery() { cwnd_ = ssthresh_; }
  // RFC 5681 3.1 / RFC 6298 5.5: ssthresh as for a loss (only for the first
  // timeout of a series), cwnd to the one-segment loss window.
  void on_timeout(Time now, uint64_t flight, bool first_of_series);
  // ECN-Echo, at most once a window (RFC 3168 6.1.2, RFC 8257 3.3): cwnd and
  // ssthresh drop without a retransmission.
  void on_ecn(Time now, uint64_t flight);
  // The ACK that carries the ECN-Echo, then the reduction: DCTCP folds it
  // into alpha first, so the cut uses the updated estimate (RFC 8257 3.3).
  void on_ecn_ack(const AckSample& a, uint64_t flight) {
    observe_ack(a);
    on_ecn(a.now, flight);
  }

  double dctcp_alpha() const { return alpha_; }

 private:
  void grow(const AckSample& a);
  void cubic_reduce(Time now);

  CongestionControl kind_;
  uint32_t smss_;
  uint64_t cwnd_;
  uint64_t ssthresh_ = UINT64_MAX;  // RFC 5681 3.1: arbitrarily high at first
  uint64_t ca_acked_ = 0;           // bytes acked since cwnd last grew in congestion avoidance

  // CUBIC (RFC 9438 4): segments and seconds.
  bool epoch_started_ = false;
  Time epoch_start_;
  double w_max_ = 0;       // window before the last reduction
  double k_ = 0;           // time to get back to w_max
  double w_est_ = 0;       // Reno-friendly estimate
  double cubic_frac_ = 0;  // fraction of a byte carried between ACKs

  // DCTCP (RFC 8257 3.3).
  double g_;
  double alpha_ = 1.0;
  uint64_t window_end_ = 0;
  uint64_t bytes_acked_ = 0, bytes_marked_ = 0;
};

}  // namespace rdmasim
