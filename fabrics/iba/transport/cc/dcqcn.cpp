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
      additive_(scaled(cfg.additive, cfg.rates_per, line_)),
      hyper_(scaled(cfg.hyper, cfg.rates_per, line_)),
      rc_(line_),
      rt_(line_),
      lowest_(line_),
      alpha_timer_(sim, this, [](void* r) { static_cast<DcqcnRate*>(r)->on_alpha_timer(); }),
      rate_timer_(sim, this, [](void* r) { static_cast<DcqcnRate*>(r)->on_rate_timer(); }),
      decrease_timer_(sim, this, [](void* r) { static_cast<DcqcnRate*>(r)->on_decrease_timer(); }) {}

void DcqcnRate::on_cnp() {
  catch_up();
  const Time now = sim_.now();
  if (cuts_ > 0 && cfg_.decrease_period > Time{} && now < last_cut_ + cfg_.decrease_period) {
    // One cut per decrease period: this CNP is taken when it has passed.
    cut_pending_ = true;
    if (!idle_) decrease_timer_.arm_at(last_cut_ + cfg_.decrease_period);
  } else {
    cut();
  }
  // Then alpha rises (Algorithm 1: the cut uses the alpha before), at most
  // once an alpha period, as HPCC's simulator's alpha timer takes "a CNP
  // came" once a period. alpha starts at 1: the first cut halves the rate.
  if (!alpha_started_ || now - alpha_raised_ >= cfg_.alpha_period) {
    alpha_ = (1 - cfg_.g) * alpha_ + cfg_.g;
    alpha_started_ = true;
    alpha_raised_ = now;
    next_alpha_ = now + cfg_.alpha_period;  // the decay timer starts again
  }
  arm();
}

void DcqcnRate::on_decrease_timer() {
  if (cut_pending_) cut();
}

void DcqcnRate::cut() {
  cut_pending_ = false;
  last_cut_ = sim_.now();
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
  // Both counts start again; the rate timer measures from this cut.
  timer_steps_ = byte_steps_ = 0;
  bytes_ = 0;
  next_rate_ = sim_.now() + cfg_.rate_period;
  arm();  // a pending expiry, earlier than these, sleeps on to them
}

void DcqcnRate::on_sent(uint64_t bytes) {
  if (!limited_ || cfg_.byte_counter.count() == 0) return;
  bytes_ += bytes;
  const uint64_t b = cfg_.byte_counter.count();
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
  decrease_timer_.stop();
}

void DcqcnRate::busy() {
  if (!idle_) return;
  catch_up();
  idle_ = false;
  arm();
  if (cut_pending_) decrease_timer_.arm_at(std::max(sim_.now(), last_cut_ + cfg_.decrease_period));
}

void DcqcnRate::arm() {
  if (idle_ || !limited_) return;
  alpha_timer_.arm_at(next_alpha_);
  rate_timer_.arm_at(next_rate_);
}

// The timer expiries an idle or unlimited QP skipped, in order: nothing
// else can have happened meanwhile (no CNP is counted without catching up
// first, no byte was sent). alpha decays at line rate too.
void DcqcnRate::catch_up() {
  if (!alpha_started_ || (!idle_ && limited_)) return;
  const Time now = sim_.now();
  if (next_alpha_ <= now) {
    const int64_t k = (now - next_alpha_).count() / cfg_.alpha_period.count() + 1;
    alpha_ *= std::pow(1 - cfg_.g, static_cast<double>(k));
    next_alpha_ = next_alpha_ + Time::ps(k * cfg_.alpha_period.count());
  }
  while (idle_ && limited_ && next_rate_ <= now) {
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
  // meant and as HPCC's simulator and mlx5's rpg_threshold count them
  // (rdma-hw.cc RateIncEventMlx: stage < F fast recovery, == F additive,
  // > F hyper, its stage counting the steps before this one). Then one
  // additive step, then hyper steps of a constant R_HAI; with
  // hyper_needs_both, hyper only once both counts are past F (QCN).
  const uint32_t f = cfg_.fast_recovery;
  const uint32_t hi = std::max(timer_steps_, byte_steps_), lo = std::min(timer_steps_, byte_steps_);
  if (hi <= f) {
    // Fast recovery: only towards the rate before the cut.
  } else if (cfg_.hyper_needs_both ? lo > f : hi > f + 1) {
    rt_ += hyper_;
  } else {
    rt_ += additive_;
  }
  rt_ = std::min(rt_, line_);
  rc_ = std::min((rt_ + rc_) / 2, line_);
  // Within a thousandth of line rate with the target there: unlimited again.
  if (rt_ >= line_ && rc_ >= line_ * 0.999) {
    rc_ = line_;
    limited_ = false;
    alpha_timer_.stop();  // alpha's decay is caught up at the next CNP
    rate_timer_.stop();
  }
}

}  // namespace rdmasim
