#include "fabrics/iba/transport/cc/dctcp.hpp"

#include <algorithm>

#include "fabrics/iba/transport/psn.hpp"

namespace rdmasim {

Dctcp::Dctcp(const DctcpConfig& cfg, DataRate line)
    : cfg_(cfg), line_(static_cast<double>(line.bps())), rate_(line_) {}

std::optional<DataRate> Dctcp::pacing_rate() const {
  if (rate_ >= line_) return std::nullopt;
  return DataRate(static_cast<uint64_t>(rate_));
}

std::optional<uint64_t> Dctcp::window() const {
  const double w = rate_ * cfg_.base_rtt.to_s() / 8;
  return static_cast<uint64_t>(std::max(w, static_cast<double>(cfg_.min_window.count())));
}

void Dctcp::on_ack(const CcAck& a) {
  if (a.ecn_echo) ++marked_;
  bool new_window = false;
  if (!started_) {
    started_ = true;
    new_window = true;
    window_end_ = a.next_psn;
    batch_ = static_cast<uint32_t>(std::max(psn_diff(a.next_psn, a.psn), 0)) + 1;
  } else if (!psn_before(a.psn, window_end_)) {
    // Once a window: alpha <- (1 - g) alpha + g F (DCTCP section 3.1, eq. 1).
    new_window = true;
    const double f = std::min(1.0, static_cast<double>(marked_) / batch_);
    alpha_ = (1 - cfg_.g) * alpha_ + cfg_.g * f;
    marked_ = 0;
    batch_ = static_cast<uint32_t>(std::max(psn_diff(a.next_psn, a.psn), 0)) + 1;
    window_end_ = a.next_psn;
  }
  if (cut_ && !psn_before(a.psn, cut_end_)) cut_ = false;
  if (a.ecn_echo && !cut_) {
    rate_ = std::max(rate_ * (1 - alpha_ / 2), static_cast<double>(cfg_.min_rate.bps()));
    cut_ = true;
    cut_end_ = a.next_psn;
  }
  if (!cut_ && new_window) rate_ = std::min(line_, rate_ + static_cast<double>(cfg_.rate_ai.bps()));
}

}  // namespace rdmasim
