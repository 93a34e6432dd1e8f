#include "fabrics/iba/transport/cc/swift.hpp"

#include <algorithm>

namespace rdmasim {

Swift::Swift(const SwiftConfig& cfg, DataRate line) : cfg_(cfg), line_(static_cast<double>(line.bps())) {
  set_mtu(mtu_);
  fcwnd_ = ecwnd_ = max_cwnd_;
  srtt_ = cfg.base_rtt;
}

// The largest window is the line rate's BDP at the path's RTT: base_rtt,
// or the smallest RTT seen when larger (a long path), as the initial one.
void Swift::set_mtu(uint32_t mtu) {
  mtu_ = std::max<uint32_t>(mtu, 1);
  set_cap();
  fcwnd_ = std::min(fcwnd_, max_cwnd_);
  ecwnd_ = std::min(ecwnd_, max_cwnd_);
}

void Swift::set_cap() {
  const Time rtt = min_rtt_ == Time::max() ? cfg_.base_rtt : std::max(cfg_.base_rtt, min_rtt_);
  max_cwnd_ = std::max(1.0, line_ * rtt.to_s() / 8 / static_cast<double>(mtu_));
}

// Topology-based scaling (Swift section 3.5): base_target plus per_hop a
// hop, the base never below the path's own unloaded fabric delay (the
// smallest seen), so that a long path is not above target empty.
Time Swift::target(int hops) const {
  const Time base = min_fabric_ == Time::max() ? cfg_.base_target : std::max(cfg_.base_target, min_fabric_);
  return base + cfg_.per_hop * std::max(hops, 0);
}

std::optional<uint64_t> Swift::window() const {
  return static_cast<uint64_t>(std::max(cwnd(), 1.0) * static_cast<double>(mtu_));
}

// Below one packet a window is a rate: cwnd packets per RTT.
std::optional<DataRate> Swift::pacing_rate() const {
  if (cwnd() >= 1) return std::nullopt;
  const double bps = cwnd() * static_cast<double>(mtu_) * 8 / srtt_.to_s();
  return DataRate(static_cast<uint64_t>(std::clamp(bps, 1.0, line_)));
}

void Swift::adjust(double& cwnd, Time delay, Time target, const CcAck& a) {
  const double acked = static_cast<double>(std::max<uint32_t>(a.acked_packets, 1));
  if (delay < target) {
    cwnd += cwnd >= 1 ? cfg_.additive * acked / cwnd : cfg_.additive * acked;
  } else if (!decreased_ || a.now - last_decrease_ >= srtt_) {
    const double d = static_cast<double>(delay.count()), t = static_cast<double>(target.count());
    cwnd *= std::max(1 - cfg_.beta * (d - t) / d, 1 - cfg_.max_mdf);
    cut_ = true;
  }
  cwnd = std::clamp(cwnd, cfg_.min_window, max_cwnd_);
}

void Swift::on_ack(const CcAck& a) {
  if (!a.rtt) return;
  srtt_ = *a.rtt;
  retransmits_ = 0;
  const Time endpoint = std::min(a.endpoint_delay, *a.rtt);
  min_fabric_ = std::min(min_fabric_, *a.rtt - endpoint);
  if (*a.rtt < min_rtt_) {
    // A window at the old cap (the initial one) follows the path's BDP.
    const double old_cap = max_cwnd_;
    min_rtt_ = *a.rtt;
    set_cap();
    if (max_cwnd_ > old_cap) {
      if (fcwnd_ >= old_cap) fcwnd_ = max_cwnd_;
      if (ecwnd_ >= old_cap) ecwnd_ = max_cwnd_;
    }
  }
  cut_ = false;
  adjust(fcwnd_, *a.rtt - endpoint, target(a.hops), a);
  adjust(ecwnd_, endpoint, cfg_.endpoint_target, a);
  if (cut_) {
    decreased_ = true;
    last_decrease_ = a.now;
  }
}

// Algorithm 1, on a retransmission timeout: RETX_RESET_THRESHOLD in a row
// reset the windows to the least; otherwise a cut by max_mdf, if one is
// allowed (at most once an RTT: can_decrease).
void Swift::on_timeout(Time now) {
  if (++retransmits_ >= cfg_.retx_reset) {
    fcwnd_ = ecwnd_ = cfg_.min_window;
  } else if (!decreased_ || now - last_decrease_ >= srtt_) {
    fcwnd_ = std::max(fcwnd_ * (1 - cfg_.max_mdf), cfg_.min_window);
    ecwnd_ = std::max(ecwnd_ * (1 - cfg_.max_mdf), cfg_.min_window);
    decreased_ = true;
    last_decrease_ = now;
  }
}

}  // namespace rdmasim
