#include "fabrics/iba/transport/cc/swift.hpp"

#include <algorithm>

namespace rdmasim {

Swift::Swift(const SwiftConfig& cfg, DataRate line) : cfg_(cfg), line_(static_cast<double>(line.bps())) {
  set_mtu(mtu_);
  fcwnd_ = ecwnd_ = max_cwnd_;
  srtt_ = cfg.base_rtt;
}

// The largest window is the line rate's BDP at base_rtt, as the initial one.
void Swift::set_mtu(uint32_t mtu) {
  mtu_ = std::max<uint32_t>(mtu, 1);
  max_cwnd_ = std::max(1.0, line_ * cfg_.base_rtt.to_s() / 8 / static_cast<double>(mtu_));
  fcwnd_ = std::min(fcwnd_, max_cwnd_);
  ecwnd_ = std::min(ecwnd_, max_cwnd_);
}

Time Swift::target(int hops) const { return cfg_.base_target + cfg_.per_hop * std::max(hops, 0); }

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
  const Time endpoint = std::min(a.endpoint_delay, *a.rtt);
  cut_ = false;
  adjust(fcwnd_, *a.rtt - endpoint, target(a.hops), a);
  adjust(ecwnd_, endpoint, cfg_.endpoint_target, a);
  if (cut_) {
    decreased_ = true;
    last_decrease_ = a.now;
  }
}

void Swift::on_timeout() {
  fcwnd_ = std::max(fcwnd_ * (1 - cfg_.max_mdf), cfg_.min_window);
  ecwnd_ = std::max(ecwnd_ * (1 - cfg_.max_mdf), cfg_.min_window);
}

}  // namespace rdmasim
