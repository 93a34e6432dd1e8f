#include "fabrics/iba/transport/cc/dctcp.hpp"

#include <algorithm>

#include "fabrics/iba/transport/psn.hpp"

namespace rdmasim {

Dctcp::Dctcp(const DctcpConfig& cfg, DataRate line)
    : cfg_(cfg),
      max_cwnd_(std::max(static_cast<double>(line.bps()) * cfg.base_rtt.to_s() / 8,
                         static_cast<double>(cfg.min_window.count()))),
      cwnd_(max_cwnd_) {}

void Dctcp::on_ack(const CcAck& a) {
  if (!started_) {
    started_ = true;
    window_end_ = a.next_psn;
  }
  acked_ += a.acked_bytes;
  if (a.ecn_echo) marked_ += a.acked_bytes;
  // Once a window: alpha <- (1 - g) alpha + g F (DCTCP section 3.1, eq. 1).
  if (!psn_before(a.psn, window_end_)) {
    const double f = acked_ ? static_cast<double>(marked_) / static_cast<double>(acked_) : 0.0;
    alpha_ = (1 - cfg_.g) * alpha_ + cfg_.g * f;
    acked_ = marked_ = 0;
    window_end_ = a.next_psn;
  }
  if (cut_ && !psn_before(a.psn, cut_end_)) cut_ = false;
  if (a.ecn_echo && !cut_) {
    cwnd_ *= 1 - alpha_ / 2;
    cut_ = true;
    cut_end_ = a.next_psn;
  } else if (!a.ecn_echo && !cut_ && a.acked_bytes) {
    cwnd_ += static_cast<double>(mtu_) * static_cast<double>(a.acked_bytes) / cwnd_;  // one MTU a window
  }
  cwnd_ = std::clamp(cwnd_, static_cast<double>(cfg_.min_window.count()), max_cwnd_);
}

void Dctcp::on_timeout() {
  cwnd_ = std::max(static_cast<double>(cfg_.min_window.count()), static_cast<double>(mtu_));
}

}  // namespace rdmasim
