// DCQCN's reaction point (Zhu et al., "Congestion Control for Large-Scale
// RDMA Deployments", SIGCOMM 2015, Algorithm 1): the sending rate of one
// RoCE v2 QP. It starts unlimited, at line rate. A CNP makes it limited:
// the target rate becomes the current rate, the current rate drops by
// alpha/2, and alpha (the congestion estimate) rises. Without CNPs, alpha
// decays every alpha_period, and the rate climbs back in steps counted by a
// timer and by bytes sent: fast recovery (halve the gap to the target),
// then additive, then hyper increase of the target. Back at line rate it is
// unlimited again; alpha goes on decaying meanwhile (HPCC's simulator's
// alpha timer never stops), which the next CNP catches up on.
//
// While its QP has nothing to send the timers schedule nothing: the steps
// they would have taken are caught up, exactly, when it sends again. So an
// idle QP does not keep a simulation running. A timer that expires finds
// out from `has_work` whether the QP went idle.
#pragma once

#include <cstdint>

#include "core/engine.hpp"
#include "core/lazy_timer.hpp"
#include "core/units.hpp"
#include "fabrics/iba/transport/cc/congestion_control.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

class DcqcnRate final : public QpCongestionControl {
 public:
  using HasWork = CcHasWork;
  DcqcnRate(Simulator& sim, const DcqcnConfig& cfg, DataRate line, const void* qp, HasWork has_work);
  DcqcnRate(const DcqcnRate&) = delete;
  DcqcnRate& operator=(const DcqcnRate&) = delete;

  bool limited() const { return limited_; }
  DataRate rate() const { return DataRate(static_cast<uint64_t>(rc_)); }
  DataRate target() const { return DataRate(static_cast<uint64_t>(rt_)); }
  double alpha() const { return alpha_; }
  uint64_t cuts() const { return cuts_; }
  DataRate lowest() const { return DataRate(static_cast<uint64_t>(lowest_)); }

  std::optional<DataRate> pacing_rate() const override {
    return limited_ ? std::optional(rate()) : std::nullopt;
  }
  // A CNP arrived for this QP.
  void on_cnp() override;
  // The QP sent a frame of `bytes` (counts towards a byte-counter step).
  void on_sent(uint64_t bytes) override;
  // The QP has work again (a post): timers resume after catching up.
  void busy() override;

 private:
  void on_alpha_timer();
  void on_rate_timer();
  void on_decrease_timer();
  void cut();
  void increase();
  void arm();
  void catch_up();
  void idle();

  Simulator& sim_;
  const DcqcnConfig& cfg_;
  const void* qp_;
  HasWork has_work_;
  const double line_;
  const double additive_, hyper_;  // bits per second, scaled to the line rate
  double rc_, rt_;                 // current and target rate, bits per second
  double lowest_;
  double alpha_ = 1;
  bool limited_ = false;
  bool idle_ = false;
  bool alpha_started_ = false;  // a CNP came: alpha is defined and decays
  bool cut_pending_ = false;    // a CNP within decrease_period of the last cut
  Time last_cut_, alpha_raised_;
  uint32_t timer_steps_ = 0, byte_steps_ = 0;
  uint64_t bytes_ = 0;
  uint64_t cuts_ = 0;
  Time next_alpha_, next_rate_;  // when the timers expire next
  LazyTimer alpha_timer_, rate_timer_, decrease_timer_;
};

}  // namespace rdmasim
