#include "fabrics/ip/tcp/congestion_control.hpp"

#include <algorithm>
#include <cmath>

namespace rdmasim {

namespace {
// RFC 9438 4.1 and 4.6.
constexpr double kCubicC = 0.4;
constexpr double kCubicBeta = 0.7;
// RFC 9438 4.3: additive increase that matches Reno's average rate.
constexpr double kCubicAlpha = 3.0 * (1.0 - kCubicBeta) / (1.0 + kCubicBeta);
}  // namespace

CongestionController::CongestionController(CongestionControl kind, uint32_t smss, uint32_t initial_segments,
                                           double dctcp_g)
    : kind_(kind), smss_(smss), cwnd_(uint64_t{smss} * std::max(1u, initial_segments)), g_(dctcp_g) {}

void CongestionController::observe_ack(const AckSample& a) {
  if (kind_ != CongestionControl::dctcp) return;
  // RFC 8257 3.3: count acknowledged and marked bytes over one window of
  // data, then fold the marked fraction F into alpha with gain g.
  bytes_acked_ += a.acked;
  if (a.ece) bytes_marked_ += a.acked;
  if (a.snd_una >= window_end_) {
    const double f =
        bytes_acked_ ? static_cast<double>(bytes_marked_) / static_cast<double>(bytes_acked_) : 0.0;
    alpha_ = (1.0 - g_) * alpha_ + g_ * f;
    bytes_acked_ = bytes_marked_ = 0;
    window_end_ = a.snd_nxt;
  }
}

void CongestionController::on_ack(const AckSample& a) {
  observe_ack(a);
  if (a.acked == 0 || !a.cwnd_limited) return;  // RFC 7661: do not grow a window that is not used
  grow(a);
}

void CongestionController::grow(const AckSample& a) {
  if (cwnd_ < ssthresh_) {
    // RFC 5681 3.1 slow start with RFC 3465 byte counting (L = 2 SMSS).
    cwnd_ += std::min<uint64_t>(a.acked, 2ull * smss_);
    return;
  }
  if (kind_ != CongestionControl::cubic) {
    // RFC 5681 3.1 congestion avoidance by byte counting: one SMSS per cwnd acknowledged.
    ca_acked_ += a.acked;
    if (ca_acked_ >= cwnd_) {
      ca_acked_ -= cwnd_;
      cwnd_ += smss_;
    }
    return;
  }
  // RFC 9438 4.2-4.4, in segments and seconds.
  const double mss = smss_;
  const double cwnd = static_cast<double>(cwnd_) / mss;
  if (!epoch_started_) {
    epoch_started_ = true;
    epoch_start_ = a.now;
    w_est_ = cwnd;
    if (w_max_ < cwnd) w_max_ = cwnd;
    k_ = std::cbrt((w_max_ - cwnd) / kCubicC);
  }
  const double t = (a.now - epoch_start_).to_s();
  const double rtt = a.srtt.to_s();
  const double d = t + rtt - k_;
  double target = kCubicC * d * d * d + w_max_;  // W_cubic(t + RTT), eq. 1
  target = std::clamp(target, cwnd, 1.5 * cwnd);
  const double acked_segs = static_cast<double>(a.acked) / mss;
  w_est_ += kCubicAlpha * acked_segs / cwnd;  // eq. 4
  const double w_cubic_now = kCubicC * (t - k_) * (t - k_) * (t - k_) + w_max_;
  double inc_segs;
  if (w_cubic_now < w_est_) {
    inc_segs = std::max(0.0, w_est_ - cwnd);  // Reno-friendly region (4.3)
  } else {
    inc_segs = (target - cwnd) / cwnd * acked_segs;  // concave and convex regions (4.4, 4.5)
  }
  cubic_frac_ += inc_segs * mss;
  const double whole = std::floor(cubic_frac_);
  cwnd_ += static_cast<uint64_t>(whole);
  cubic_frac_ -= whole;
}

void CongestionController::cubic_reduce(Time) {
  const double cwnd = static_cast<double>(cwnd_) / smss_;
  // RFC 9438 4.7 fast convergence: release bandwidth to newer flows.
  w_max_ = cwnd < w_max_ ? cwnd * (1.0 + kCubicBeta) / 2.0 : cwnd;
  epoch_started_ = false;
  cubic_frac_ = 0;
  ssthresh_ = std::max<uint64_t>(cwnd_ * 7 / 10, 2ull * smss_);  // beta_cubic = 0.7, exactly
}

void CongestionController::on_loss(Time now, uint64_t flight) {
  ca_acked_ = 0;
  if (kind_ == CongestionControl::cubic) {
    cubic_reduce(now);
    return;
  }
  ssthresh_ = std::max<uint64_t>(flight / 2, 2ull * smss_);  // RFC 5681 eq. 4 (DCTCP too: RFC 8257 3.5)
}

void CongestionController::on_timeout(Time now, uint64_t flight, bool first_of_series) {
  if (first_of_series) on_loss(now, flight);
  cwnd_ = smss_;  // loss window
  ca_acked_ = 0;
  epoch_started_ = false;
}

void CongestionController::on_ecn(Time now, uint64_t flight) {
  ca_acked_ = 0;
  switch (kind_) {
    case CongestionControl::dctcp:
      // RFC 8257 3.3: cwnd = cwnd * (1 - alpha / 2).
      cwnd_ = std::max<uint64_t>(static_cast<uint64_t>(static_cast<double>(cwnd_) * (1.0 - alpha_ / 2.0)),
                                 2ull * smss_);
      ssthresh_ = cwnd_;
      return;
    case CongestionControl::cubic:
      cubic_reduce(now);
      break;
    case CongestionControl::newreno:
      ssthresh_ = std::max<uint64_t>(flight / 2, 2ull * smss_);  // RFC 3168 6.1.2: as for a loss
      break;
  }
  cwnd_ = ssthresh_;
}

}  // namespace rdmasim
