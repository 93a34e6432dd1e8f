// Each algorithm's control law against steps worked by hand from its paper.
#include <doctest/doctest.h>

#include "fabrics/iba/transport/cc/dctcp.hpp"
#include "fabrics/iba/transport/cc/hpcc.hpp"
#include "fabrics/iba/transport/cc/ib_cca.hpp"
#include "fabrics/iba/transport/cc/swift.hpp"
#include "fabrics/iba/transport/cc/timely.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

double gbps(std::optional<DataRate> r) { return r ? static_cast<double>(r->bps()) / 1e9 : 100.0; }

CcAck ack(Time now, uint32_t psn, uint32_t next_psn, uint64_t bytes = 4096, bool echo = false) {
  CcAck a;
  a.now = now;
  a.psn = psn;
  a.next_psn = next_psn;
  a.acked_bytes = bytes;
  a.acked_packets = 1;
  a.ecn_echo = echo;
  return a;
}

CcAck rtt_ack(Time now, Time rtt, int hops = 0) {
  CcAck a = ack(now, 0, 0);
  a.rtt = rtt;
  a.hops = hops;
  return a;
}

// One switch hop at 100 Gb/s: `ns` its clock, `tx` and `q` bytes (multiples of 128).
IntStack one_hop(int64_t ns, uint64_t tx, uint64_t q) {
  IntStack s;
  s.hops = 1;
  s.hop[0] = IntHop::sample(Time::ns(ns), tx, q, 100_Gbps);
  return s;
}

}  // namespace

TEST_CASE(
    "DCTCP (HPCC's simulator's): a paced rate cut by alpha/2 once a window, rate_ai a window, BDP window") {
  // rdma-hw.cc HandleAckDctcp. The old model was a window growing by an MTU
  // an RTT with no pacing: a line-rate burst of a window at each ACK.
  DctcpConfig cfg;  // g = 1/16, base_rtt 10 us, rate_ai 615 Mb/s
  Dctcp d(cfg, 100_Gbps);
  d.set_mtu(4096);
  CHECK(*d.window() == 125000);
  CHECK(!d.pacing_rate());
  d.on_ack(ack(1_us, 0, 10));  // the first ACK opens the first window (PSNs up to 10: 11 packets)
  CHECK(!d.pacing_rate());
  d.on_ack(ack(2_us, 1, 12, 4096, true));  // alpha starts at 1: the rate halves
  CHECK(gbps(d.pacing_rate()) == doctest::Approx(50));
  CHECK(*d.window() == 62500);             // the BDP at the rate (VAR_WIN)
  d.on_ack(ack(3_us, 2, 14, 4096, true));  // the same window: no second cut
  CHECK(gbps(d.pacing_rate()) == doctest::Approx(50));
  d.on_ack(ack(4_us, 10, 20));  // the window closes: 2 of its 11 packets marked
  CHECK(d.alpha() == doctest::Approx((1 - 1.0 / 16) + (1.0 / 16) * (2.0 / 11)));
  CHECK(gbps(d.pacing_rate()) == doctest::Approx(50));  // still within the cut's window (PSN 12): no increase
  d.on_ack(ack(5_us, 20, 30));                          // a window without a cut: + rate_ai
  CHECK(gbps(d.pacing_rate()) == doctest::Approx(50.615));
  // An ACK that closes a window and carries ECN: alpha first, then the cut with it.
  const double alpha = (1 - 1.0 / 16) * d.alpha() + (1.0 / 16) * (1.0 / 11);  // 1 of its 11 packets
  d.on_ack(ack(6_us, 30, 40, 4096, true));
  CHECK(gbps(d.pacing_rate()) == doctest::Approx(50.615 * (1 - alpha / 2)));
}

// The paper's schedule and a slow alpha (0.02, its first author's code),
// unscaled steps: the control law by hand.
TimelyConfig paper_timely() {
  TimelyConfig cfg;  // t_low 50 us, t_high 500 us, min_rtt 20 us, beta 0.8
  cfg.ewma = 0.02;
  cfg.update = TimelyUpdate::per_min_rtt;
  cfg.rates_per = DataRate(0);  // delta 10 Mb/s, hyper 50 Mb/s as given
  cfg.min_rate = DataRate(10'000'000);
  return cfg;
}

TEST_CASE("TIMELY: gradient decrease, t_low and t_high, hyperactive increase") {
  const TimelyConfig cfg = paper_timely();
  Timely t(cfg, 100_Gbps);
  t.on_ack(rtt_ack(10_us, 60_us));  // the first sample only sets the reference
  CHECK(!t.pacing_rate());
  t.on_ack(rtt_ack(30_us, 70_us));  // rtt_diff = 0.02 x 10 us = 200 ns, gradient 0.2 / 20 = 0.01
  CHECK(t.gradient() == doctest::Approx(0.01));
  CHECK(gbps(t.pacing_rate()) == doctest::Approx(100 * (1 - 0.8 * 0.01)));  // 99.2
  // Between the thresholds with a falling RTT (60, 59, ... us). First step:
  // rtt_diff = 0.98 x 200 + 0.02 x (60 - 70) us = 196 - 200 = -4 ns; the
  // gradient is negative from then on: + delta five times (hai_threshold
  // increases in a row), then the hyper step N delta.
  Time now = 80_us;
  double rate = gbps(t.pacing_rate());
  double diff_ns = 200;
  int prev_us = 70;
  for (int i = 1; i <= 6; ++i) {
    now += 200_us;
    t.on_ack(rtt_ack(now, Time::us(61 - i)));
    diff_ns = 0.98 * diff_ns + 0.02 * 1000 * ((61 - i) - prev_us);
    prev_us = 61 - i;
    CHECK(t.gradient() == doctest::Approx(diff_ns / 20000));
    CHECK(t.gradient() < 0);
    rate += i >= 6 ? 0.05 : 0.01;
    CHECK(gbps(t.pacing_rate()) == doctest::Approx(rate));
  }
  now += 200_us;
  t.on_ack(rtt_ack(now, 40_us));  // below t_low: an increase whatever the gradient, the 7th in a row
  rate += 0.05;
  CHECK(gbps(t.pacing_rate()) == doctest::Approx(rate));
  t.on_ack(rtt_ack(now + 1_ms, 600_us));  // above t_high: x (1 - 0.8 (1 - 500/600))
  CHECK(gbps(t.pacing_rate()) == doctest::Approx(rate * (1 - 0.8 * (1 - 500.0 / 600))));
}

TEST_CASE("TIMELY: one RTT spike moves the smoothed gradient by alpha only") {
  // The smoothing of Algorithm 1 with alpha 0.02: a jump of 50 us gives
  // rtt_diff = 0.02 x 50 us = 1 us, a gradient of 0.05 and a 4 % cut, where
  // alpha 0.875 would give a gradient of 2.2 and the rate floor. The smoothed
  // difference stays positive for several samples after the RTT falls again.
  const TimelyConfig cfg = paper_timely();
  Timely t(cfg, 100_Gbps);
  t.on_ack(rtt_ack(10_us, 30_us));   // the reference
  t.on_ack(rtt_ack(100_us, 80_us));  // 80 us: between t_low and t_high
  CHECK(t.gradient() == doctest::Approx(0.02 * 50000 / 20000.0));
  const double after_jump = 100 * (1 - 0.8 * 0.05);  // 96
  CHECK(gbps(t.pacing_rate()) == doctest::Approx(after_jump));
  t.on_ack(rtt_ack(300_us, 100_us));  // + 20 us: rtt_diff = 0.98 x 1000 + 0.02 x 20000 = 1380 ns
  CHECK(t.gradient() == doctest::Approx(1380 / 20000.0));
  const double after_spike = after_jump * (1 - 0.8 * 0.069);
  CHECK(gbps(t.pacing_rate()) == doctest::Approx(after_spike));
  t.on_ack(rtt_ack(500_us, 60_us));  // - 40 us: 0.98 x 1380 - 0.02 x 40000 = 552.4 ns, still positive
  CHECK(t.gradient() == doctest::Approx(552.4 / 20000));
  CHECK(gbps(t.pacing_rate()) == doctest::Approx(after_spike * (1 - 0.8 * 552.4 / 20000)));
  t.on_ack(rtt_ack(700_us, 55_us));  // - 5 us: 0.98 x 552.4 - 100 = 441.35 ns
  CHECK(t.gradient() == doctest::Approx(441.352 / 20000));
}

TEST_CASE("TIMELY: one update per min_rtt of samples, not per RTT, while the queue builds") {
  // Samples every 5 us, each RTT 10 us above the last (a queue growing at
  // twice the line rate). Updates at 30, 50 and 70 us (the first sample
  // 20 us after the last update), not once per RTT (60 us and more):
  // new_diff 40 us each time, rtt_diff 800, 0.98 x 800 + 800 = 1584,
  // 0.98 x 1584 + 800 = 2352.32 ns.
  const TimelyConfig cfg = paper_timely();
  Timely t(cfg, 100_Gbps);
  t.on_ack(rtt_ack(10_us, 60_us));
  double rate = 100;
  const double diffs[] = {800, 1584, 2352.32};
  for (int i = 1; i <= 12; ++i) {
    t.on_ack(rtt_ack(Time::us(10 + 5 * i), Time::us(60 + 10 * i)));
    if (i % 4 == 0) {
      const double d = diffs[i / 4 - 1];
      CHECK(t.gradient() == doctest::Approx(d / 20000));
      rate *= 1 - 0.8 * d / 20000;
    }
    CHECK(gbps(t.pacing_rate()) == doctest::Approx(rate));
  }
}

TEST_CASE("TIMELY (HPCC's simulator's parameters): once an RTT, steps per line rate, floor 1 Gb/s") {
  TimelyConfig cfg;  // run.py's timely at any rate: rate only, a cut clamped at 0
  cfg.window_rtt = Time{};
  cfg.max_mdf = 1;
  Timely t(cfg, 100_Gbps);
  CHECK(!t.window());
  {
    // This model's default: at most half the rate at once, a BDP window.
    const TimelyConfig defaults;  // held by reference
    Timely d(defaults, 100_Gbps);
    d.on_ack(rtt_ack(0_us, 10_us));
    CcAck b = rtt_ack(1_us, 100_us);
    b.next_psn = 50;
    d.on_ack(b);
    CHECK(gbps(d.pacing_rate()) == doctest::Approx(50));
    CHECK(*d.window() == 62500);
  }
  t.on_ack(rtt_ack(0_us, 10_us));
  CcAck a = rtt_ack(1_us, 100_us);  // far above: a gradient of 0.875 x 90 / 20 = 3.9
  a.psn = 0;
  a.next_psn = 50;
  t.on_ack(a);
  // 1 - 0.8 x 3.9 < 0: the factor is clamped to 0, the rate to MIN_RATE 1 Gb/s.
  CHECK(gbps(t.pacing_rate()) == doctest::Approx(1));
  // ACKs before PSN 50 (the next_psn of the last update) are the same RTT: no update.
  for (uint32_t psn = 1; psn < 50; ++psn) {
    a = rtt_ack(Time::us(1 + psn), 20_us);
    a.psn = psn;
    a.next_psn = 60;
    t.on_ack(a);
  }
  CHECK(gbps(t.pacing_rate()) == doctest::Approx(1));
  // Below t_low, once an RTT: + 10 Mb/s x 100/10 five times, then + 50 Mb/s x 10.
  double rate = 1;
  for (uint32_t i = 0; i < 7; ++i) {
    a = rtt_ack(Time::us(100 + i), 20_us);
    a.psn = 50 + 10 * i;
    a.next_psn = 60 + 10 * i;
    t.on_ack(a);
    rate += i < 5 ? 0.1 : 0.5;
    CHECK(gbps(t.pacing_rate()) == doctest::Approx(rate));
  }
}

TEST_CASE("HPCC: run.py's defaults, MI_THRESH 0 and W_AI 10 Mb/s per 25 Gb/s, FAST_REACT off") {
  HpccConfig cfg;
  CHECK(cfg.max_stage == 0);
  Hpcc h(cfg, 100_Gbps);
  IntStack s = one_hop(1000, 0, 0);
  CcAck a = ack(1_us, 0, 10);
  a.telemetry = &s;
  h.on_ack(a);
  // An idle hop, a whole T later: with max_stage 0 the update is
  // multiplicative at once (the old 5 additive stages first crept up by W_AI).
  s = one_hop(11000, 12800, 0);  // 12800 bytes in 10 us: U = 0.1024
  a = ack(Time::ns(11000), 10, 20);
  a.telemetry = &s;
  h.on_ack(a);
  CHECK(h.utilisation() == doctest::Approx(0.1024));
  CHECK(h.stage() == 0);
  CHECK(!h.pacing_rate());                // 100 / (0.1024 / 0.95) + 0.04: capped at line rate
  s = one_hop(21000, 12800 + 250000, 0);  // 200 Gb/s: U = 2
  a = ack(Time::ns(21000), 20, 30);
  a.telemetry = &s;
  h.on_ack(a);
  const double u2 = 249856 * 8 / 10e-6 / 100e9;  // the counter's 512-byte units at 100 Gb/s: U = 2.0
  CHECK(gbps(h.pacing_rate()) == doctest::Approx(100 / (u2 / 0.95) + 0.04));
  // fast_react off: ACKs within the RTT (PSN < 30) change nothing.
  HpccConfig slow;
  slow.fast_react = false;
  Hpcc g(slow, 100_Gbps);
  s = one_hop(1000, 0, 0);
  a = ack(1_us, 0, 10);
  a.telemetry = &s;
  g.on_ack(a);
  s = one_hop(11000, 250000, 0);
  a = ack(Time::ns(11000), 5, 20);
  a.telemetry = &s;
  g.on_ack(a);
  CHECK(!g.pacing_rate());
}

TEST_CASE("HPCC: utilisation from telemetry, the window from the reference, additive then multiplicative") {
  HpccConfig cfg;  // eta 0.95, T = 10 us
  cfg.max_stage = 5;
  cfg.additive = DataRate(50'000'000);  // W_AI as 50 Mb/s, unscaled
  cfg.rates_per = DataRate(0);
  Hpcc h(cfg, 100_Gbps);
  CHECK(*h.window() == 125000);
  IntStack s = one_hop(1000, 0, 128000);
  CcAck a = ack(1_us, 0, 10);
  a.telemetry = &s;
  h.on_ack(a);  // the first telemetry is the reference sample
  CHECK(!h.pacing_rate());
  // 1 us later the hop sent 12800 bytes (102.4 Gb/s) and still holds 128000
  // bytes (1.024 x B x T): U = 2.048, smoothed over T by tau = 1 us.
  s = one_hop(2000, 12800, 128000);
  a = ack(2_us, 1, 11);
  a.telemetry = &s;
  h.on_ack(a);
  const double u = (1.0 * 9 + 2.048 * 1) / 10;
  CHECK(h.utilisation() == doctest::Approx(u));
  CHECK(gbps(h.pacing_rate()) == doctest::Approx(100 / (u / 0.95) + 0.05));
  CHECK(*h.window() == static_cast<uint64_t>((100e9 / (u / 0.95) + 50e6) * 10e-6 / 8));
  // PSN 1 is before the reference PSN 10: W^c stays; an ACK past it moves W^c.
  s = one_hop(3000, 25600, 128000);
  a = ack(3_us, 10, 20);
  a.telemetry = &s;
  h.on_ack(a);
  const double u2 = (u * 9 + 2.048) / 10;
  const double r2 = 100e9 / (u2 / 0.95) + 50e6;
  CHECK(gbps(h.pacing_rate()) == doctest::Approx(r2 / 1e9));
  // An idle link: additive steps from W^c, one per reference update, max_stage of them ...
  double ref = r2;
  uint64_t tx = 25600;
  int64_t ns = 3000;
  uint32_t psn = 20;
  for (int i = 0; i < 5; ++i) {
    ns += 10000;  // a whole T: U replaces the estimate
    tx += 128;
    s = one_hop(ns, tx, 0);
    a = ack(Time::ns(ns), psn, psn + 10);
    a.telemetry = &s;
    h.on_ack(a);
    psn += 10;
    ref += 50e6;
    CHECK(gbps(h.pacing_rate()) == doctest::Approx(ref / 1e9));
    CHECK(h.stage() == static_cast<uint32_t>(i + 1));
  }
  // ... then a multiplicative step: W^c / (U / eta) + W_AI, a jump up.
  ns += 10000;
  tx += 128;
  s = one_hop(ns, tx, 0);
  a = ack(Time::ns(ns), psn, psn + 10);
  a.telemetry = &s;
  h.on_ack(a);
  const double u_idle = 128 * 8 / 10e-6 / 100e9;
  CHECK(gbps(h.pacing_rate()) == doctest::Approx(std::min(100.0, (ref / (u_idle / 0.95) + 50e6) / 1e9)));
  CHECK(h.stage() == 0);
}

TEST_CASE("telemetry: the hop fields wrap and saturate at their wire widths, in HPCC's simulator's units") {
  // 100 Gb/s: INT_MULTI 4, so 512 bytes a tx count and 320 a qlen count.
  const IntHop a = IntHop::sample(Time::ns((1 << 22) - 100), 512 * ((1 << 17) - 1), 10'000'000, 100_Gbps);
  const IntHop b = IntHop::sample(Time::ns((1 << 22) + 900), 512 * ((1 << 17) + 9), 0, 100_Gbps);
  CHECK(b.since(a) == 1000_ns);         // across the timestamp's wrap
  CHECK(b.bytes_since(a) == 512 * 10);  // across the byte counter's wrap
  CHECK(a.qlen_bytes() == 10'000'000);  // a 10 MB queue is carried (it saturated near 2 MiB before)
  CHECK(a.line_rate() == 100_Gbps);
  // Saturated at 2^17 - 1 counts: the simulator's ~42 MB at 100 Gb/s, 10.5 MB at 25 Gb/s.
  CHECK(IntHop::sample(Time{}, 0, 64'000'000, 100_Gbps).qlen_bytes() == ((1u << 17) - 1) * 320);
  CHECK(IntHop::sample(Time{}, 0, 64'000'000, 25_Gbps).qlen_bytes() == ((1u << 17) - 1) * 80);
  CHECK(IntHop::sample(Time{}, 0, 800, 10_Gbps).qlen_bytes() == 800);    // below 25 Gb/s the multiplier is 1
  CHECK(IntHop::sample(Time{}, 0, 8000, 40_Gbps).qlen_bytes() == 8000);  // 40 Gb/s: rounded up to 2
  CHECK(IntHop::sample(Time{}, 0, 0, DataRate(30'000'000'000)).rate == 0);  // not in the table
}

TEST_CASE(
    "Swift: the fabric target grows with hops; cuts once an RTT, at most max_mdf; below a packet it paces") {
  SwiftConfig cfg;  // base_target 25 us, per_hop 1 us, beta 0.8, max_mdf 0.5, base_rtt 10 us
  Swift s(cfg, 100_Gbps);
  s.set_mtu(4096);
  const double max = 100e9 * 10e-6 / 8 / 4096;  // 30.5 packets
  CHECK(s.fabric_window() == doctest::Approx(max));
  s.on_ack(rtt_ack(1_us, 10_us, 0));  // the path's unloaded RTT: base_rtt
  CHECK(s.fabric_window() == doctest::Approx(max));
  CHECK(s.target(3) == 28_us);
  s.on_ack(rtt_ack(10_us, 27_us, 3));  // below 28 us: grows (already at the largest window)
  CHECK(s.fabric_window() == doctest::Approx(max));
  s.on_ack(rtt_ack(20_us, 50_us, 0));  // 50 us against 25 us: x max(1 - 0.8 x 25/50, 0.5) = 0.6
  CHECK(s.fabric_window() == doctest::Approx(max * 0.6));
  s.on_ack(rtt_ack(30_us, 50_us, 0));  // 10 us later, within the RTT: no second cut
  CHECK(s.fabric_window() == doctest::Approx(max * 0.6));
  s.on_ack(rtt_ack(80_us, 500_us, 0));  // within this sample's RTT of the last cut: none
  CHECK(s.fabric_window() == doctest::Approx(max * 0.6));
  s.on_ack(rtt_ack(520_us, 500_us, 0));  // far above: the cut is bounded by max_mdf
  CHECK(s.fabric_window() == doctest::Approx(max * 0.6 * 0.5));
  CHECK(s.endpoint_window() == doctest::Approx(max));  // no endpoint delay in these ACKs
  CHECK(*s.window() == static_cast<uint64_t>(max * 0.3 * 4096));
  // Below target by a packet acknowledged: + additive / cwnd.
  const double w = s.fabric_window();
  s.on_ack(rtt_ack(700_us, 10_us, 0));
  CHECK(s.fabric_window() == doctest::Approx(w + 1 / w));
  for (int i = 0; i < 6; ++i) s.on_timeout(Time::ms(1 + i));  // x (1 - max_mdf), then reset to min_window
  CHECK(s.fabric_window() < 1);
  // Below one packet: cwnd packets per RTT (10 us, the last sample).
  CHECK(gbps(s.pacing_rate()) == doctest::Approx(s.fabric_window() * 4096 * 8 / 10e-6 / 1e9));
}

TEST_CASE("Swift: one flow fills the line on a long path; timeouts in a row reset the window") {
  // 10 us links, one switch: an unloaded RTT of ~42 us, above the 25 us
  // base target and 4x base_rtt. The old target and window cap held this
  // flow to 0.01 Gb/s.
  SwiftConfig cfg;
  Swift s(cfg, 100_Gbps);
  s.set_mtu(4096);
  const double bdp = 100e9 * 42e-6 / 8 / 4096;  // packets
  for (int i = 0; i < 100; ++i) {
    CcAck a = rtt_ack(Time::us(42 + i), 42_us, 1);
    a.acked_packets = 1;
    s.on_ack(a);
  }
  CHECK(s.fabric_window() == doctest::Approx(bdp));  // the path's BDP: line rate
  CHECK(!s.pacing_rate());
  CHECK(s.target(1) == 43_us);  // the path's own delay plus a hop
  // A queue of 20 us on top: cut.
  s.on_ack(rtt_ack(200_us, 62_us, 1));
  CHECK(s.fabric_window() < bdp);
  // Timeouts: the first within the RTT of that cut does nothing (can_decrease),
  // RETX_RESET_THRESHOLD (5) in a row reset to min_window.
  const double w = s.fabric_window();
  s.on_timeout(210_us);
  CHECK(s.fabric_window() == doctest::Approx(w));
  s.on_timeout(300_us);
  CHECK(s.fabric_window() == doctest::Approx(w * 0.5));
  for (int i = 0; i < 3; ++i) s.on_timeout(Time::us(400 + 100 * i));
  CHECK(s.fabric_window() == doctest::Approx(cfg.min_window));
}

TEST_CASE("IB CCA: a BECN raises the CCT index, the timer lowers it, the index spaces packets") {
  Simulator sim;
  IbCcaConfig cfg;  // increase 1, timer 10 us, delay_step 100 ns
  IbCca c(sim, cfg, 100_Gbps);
  c.set_mtu(4096);
  CHECK(!c.pacing_rate());
  c.becn();
  c.becn();
  CHECK(c.index() == 2);
  // A 4096-byte packet takes 327.68 ns at 100 Gb/s; then 200 ns of delay.
  CHECK(gbps(c.pacing_rate()) == doctest::Approx(100 * 327.68 / 527.68));
  sim.run(Time::us(10) + 1_ns);
  CHECK(c.index() == 1);
  sim.run(Time::us(25));
  CHECK(c.index() == 0);
  CHECK(!c.pacing_rate());
  CHECK(sim.pending() == 0);  // at CCTI_Min the timer stops
  for (int i = 0; i < 200; ++i) c.becn();
  CHECK(c.index() == cfg.limit);
}
