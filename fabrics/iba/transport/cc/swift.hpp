// Swift (Kumar et al., SIGCOMM 2020, section 3 and Algorithm 1): two
// windows from delay, in packets. The fabric window follows the fabric
// delay (the RTT less the endpoint part) against a target that grows with
// the hops the path crosses (base_target + hops x per_hop; hops from the
// ACK's IP TTL, as the paper does); the endpoint window follows the
// endpoint delay against endpoint_target. Below its target a window grows
// by additive/cwnd a packet acknowledged (additive a packet when below one
// packet); above, it is cut at most once an RTT by
// beta (delay - target) / delay, never by more than max_mdf. A
// retransmission timeout cuts by max_mdf. The QP uses the smaller window;
// below one packet it is paced at cwnd packets per RTT. Flow-based target
// scaling (the paper's fs_range) is not modelled. The base of the fabric
// target is never below the path's unloaded fabric delay, and the largest
// window is the BDP at the path's RTT, so that one flow fills the line on
// a long path too. Timeouts in a row (retx_reset) reset the windows.
#pragma once

#include "fabrics/iba/transport/cc/congestion_control.hpp"

namespace rdmasim {

class Swift final : public QpCongestionControl {
 public:
  Swift(const SwiftConfig& cfg, DataRate line);

  std::optional<DataRate> pacing_rate() const override;
  std::optional<uint64_t> window() const override;
  void set_mtu(uint32_t mtu) override;
  void on_ack(const CcAck& a) override;
  void on_timeout(Time now) override;

  double fabric_window() const { return fcwnd_; }
  double endpoint_window() const { return ecwnd_; }
  Time target(int hops) const;

 private:
  void adjust(double& cwnd, Time delay, Time target, const CcAck& a);
  double cwnd() const { return std::min(fcwnd_, ecwnd_); }
  void set_cap();

  const SwiftConfig& cfg_;
  const double line_;
  uint32_t mtu_ = 4096;
  double max_cwnd_, fcwnd_, ecwnd_;
  Time last_decrease_;
  bool decreased_ = false;
  bool cut_ = false;  // this ACK cut a window
  Time srtt_;
  Time min_rtt_ = Time::max(), min_fabric_ = Time::max();  // the smallest seen
  uint32_t retransmits_ = 0;                               // timeouts since the last ACK
};

}  // namespace rdmasim
