#include "fabrics/iba/transport/cc/dcqcn.hpp"

#include <algorithm>
#include <cmath>

namespace rdmasim {

DcqcnRate::DcqcnRate(Simulator& sim, const DcqcnConfig& cfg, DataRate line, const void* qp, HasWork has_work)
    : sim_(sim),
      cfg_(cfg),
      qp_(qp),
      has_work_(has_work),
      line_(static_cast<double>(line.bps())),
      rc_(line_),
      rt_(line_),
      lowest_(line_),
      alpha_timer_(sim, this, [](void* r) { static_cast<DcqcnRate*>(r)->on_alpha_timer(); }),
      rate_timer_(sim, this, [](void* r) { static_cast<DcqcnRate*>(r)->on_rate_timer(); }) {}

void DcqcnRate::on_cnp() {
  catch_up();
  limited_ = true;
  ++cuts_;
  // The paper sets the target to the current rate at every cut. HPCC's
  // simulator (rdma-hw.cc, CheckRateDecreaseMlx, ClampTargetRate false)
  // does so only if a timer step came since the last cut, so a burst of
  // cuts keeps the rate before it as the target. Byte-counter steps do not
  // count: that simulator has none, its stages are the timer's.
  if (cfg_.clamp_target_rate || timer_steps_ > 0) rt_ = rc_;
  rc_ = std::max(rc_ * (1 - alpha_ / 2), static_cast<double>(cfg_.min_rate.bps()));
  lowest_ = std::min(lowest_, rc_);
  alpha_ = (1 - cfg_.g) * alpha_ + cfg_.g;
  // Both counts start again; the timers measure from this CNP.
  timer_steps_ = byte_steps_ = 0;
  bytes_ = 0;
  next_alpha_ = sim_.now() + cfg_.alpha_period;
  next_rate_ = sim_.now() + cfg_.rate_period;
  arm();  // a pending expiry, earlier than these, sleeps on to them
}

void DcqcnRate::on_sent(uint64_t bytes) {
  if (!limited_) return;
  bytes_ += bytes;
  const uint64_t b = std::max<uint64_t>(cfg_.byte_counter.count(), 1);
  while (limited_ && bytes_ >= b) {
    bytes_ -= b;
    ++byte_steps_;
    increase();
  }
}

void DcqcnRate::idle() {
  if (idle_) return;
  idle_ = true;
  alpha_timer_.stop();
  rate_timer_.stop();
}

void DcqcnRate::busy() {
  if (!idle_) return;
  catch_up();
  idle_ = false;
  arm();
}

void DcqcnRate::arm() {
  if (idle_ || !limited_) return;
  alpha_timer_.arm_at(next_alpha_);
  rate_timer_.arm_at(next_rate_);
}

// The timer expiries an idle QP skipped, in order: nothing else can have
// happened meanwhile (no CNP is counted without catching up first, no byte
// was sent).
void DcqcnRate::catch_up() {
  if (!idle_ || !limited_) return;
  const Time now = sim_.now();
  if (next_alpha_ <= now) {
    const int64_t k = (now - next_alpha_).count() / cfg_.alpha_period.count() + 1;
    alpha_ *= std::pow(1 - cfg_.g, static_cast<double>(k));
    next_alpha_ = next_alpha_ + Time::ps(k * cfg_.alpha_period.count());
  }
  while (limited_ && next_rate_ <= now) {
    ++timer_steps_;
    increase();
    next_rate_ = next_rate_ + cfg_.rate_period;
  }
}

void DcqcnRate::on_alpha_timer() {
  if (!has_work_(qp_)) {
    idle();  // this expiry is caught up later
    return;
  }
  // A whole period without a CNP.
  alpha_ *= 1 - cfg_.g;
  next_alpha_ = next_alpha_ + cfg_.alpha_period;
  arm();
}

void DcqcnRate::on_rate_timer() {
  if (!has_work_(qp_)) {
    idle();
    return;
  }
  ++timer_steps_;
  next_rate_ = next_rate_ + cfg_.rate_period;
  increase();
  arm();
}

void DcqcnRate::increase() {
  // The counts include this step. The first F steps are fast recovery, as
  // QCN's five byte-counter cycles (IEEE 802.1Qau) and DCQCN's F = 5 are
  // meant and as HPCC's simulator and mlx5's rpg_threshold count them; one
  // count past F: additive; both past F: hyper.
  const uint32_t f = cfg_.fast_recovery;
  if (std::max(timer_steps_, byte_steps_) <= f) {
    // Fast recovery: only towards the rate before the cut.
  } else if (std::min(timer_steps_, byte_steps_) > f) {
    rt_ +=
        static_cast<double>(std::min(timer_steps_, byte_steps_) - f) * static_cast<double>(cfg_.hyper.bps());
  } else {
    rt_ += static_cast<double>(cfg_.additive.bps());
  }
  rt_ = std::min(rt_, line_);
  rc_ = std::min((rt_ + rc_) / 2, line_);
  // Within a thousandth of line rate with the target there: unlimited again.
  if (rt_ >= line_ && rc_ >= line_ * 0.999) {
    rc_ = line_;
    limited_ = false;
    alpha_timer_.stop();
    rate_timer_.stop();
  }
}

}  // namespace rdmasim
