#include "fabrics/iba/transport/cc/hpcc.hpp"

#include <algorithm>

#include "fabrics/iba/transport/psn.hpp"

namespace rdmasim {

namespace {
// Samples further apart than this may have wrapped their 22-bit timestamp
// (4.19 ms): start again from the new one.
constexpr Time kStale = Time::ms(2);
}  // namespace

Hpcc::Hpcc(const HpccConfig& cfg, DataRate line)
    : cfg_(cfg),
      line_(static_cast<double>(line.bps())),
      // run.py: RATE_AI 10 Mb/s x the NIC's rate / 25 Gb/s.
      additive_(scaled(cfg.additive, cfg.rates_per, line_)),
      rate_(line_),
      ref_rate_(line_) {}

std::optional<DataRate> Hpcc::pacing_rate() const {
  if (rate_ >= line_) return std::nullopt;
  return DataRate(static_cast<uint64_t>(rate_));
}

std::optional<uint64_t> Hpcc::window() const {
  return static_cast<uint64_t>(rate_ * cfg_.base_rtt.to_s() / 8);
}

void Hpcc::on_ack(const CcAck& a) {
  if (!a.telemetry || a.telemetry->hops == 0) return;
  const IntStack& now = *a.telemetry;
  if (!have_ref_ || now.hops != last_.hops || a.now - last_at_ > kStale) {
    have_ref_ = true;
    last_update_ = a.next_psn;
    last_ = now;
    last_at_ = a.now;
    return;
  }
  const bool reference = !psn_before(a.psn, last_update_);
  if (!reference && !cfg_.fast_react) return;                   // FAST_REACT 0: once an RTT only
  const double t = static_cast<double>(cfg_.base_rtt.count());  // ps
  double u_max = -1;
  double tau_max = 0;
  for (size_t i = 0; i < now.hops; ++i) {
    const IntHop& h = now.hop[i];
    const IntHop& before = last_.hop[i];
    const double tau = static_cast<double>(h.since(before).count());
    const double b = static_cast<double>(h.line_rate().bps());
    if (tau <= 0 || b <= 0) continue;  // no new sample of this hop
    const double tx_rate = static_cast<double>(h.bytes_since(before)) * 8 / (tau / 1e12);
    const double qlen = static_cast<double>(std::min(h.qlen_bytes(), before.qlen_bytes()));
    const double u = tx_rate / b + qlen * 8 / (b * t / 1e12);
    if (u > u_max) {
      u_max = u;
      tau_max = tau;
    }
  }
  last_ = now;
  last_at_ = a.now;
  if (u_max < 0) return;
  tau_max = std::min(tau_max, t);
  u_ = (u_ * (t - tau_max) + u_max * tau_max) / t;
  const double ai = additive_;
  const double k = u_ / cfg_.eta;
  double rate;
  uint32_t stage;
  if (k >= 1 || stage_ >= cfg_.max_stage) {
    rate = ref_rate_ / k + ai;  // multiplicative (k < 1 after max_stage: a larger step up)
    stage = 0;
  } else {
    rate = ref_rate_ + ai;
    stage = stage_ + 1;
  }
  rate_ = std::clamp(rate, static_cast<double>(cfg_.min_rate.bps()), line_);
  if (reference) {
    ref_rate_ = rate_;
    stage_ = stage;
    last_update_ = a.next_psn;
  }
}

}  // namespace rdmasim
