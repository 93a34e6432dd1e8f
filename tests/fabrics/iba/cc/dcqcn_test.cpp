#include "fabrics/iba/transport/cc/dcqcn.hpp"

#include <doctest/doctest.h>

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

struct Work {
  bool busy = true;
  static bool has(const void* w) { return static_cast<const Work*>(w)->busy; }
};

double gbps(DataRate r) { return static_cast<double>(r.bps()) / 1e9; }

}  // namespace

TEST_CASE("DCQCN: a CNP cuts the rate by alpha/2 and raises alpha") {
  Simulator sim;
  DcqcnConfig cfg;
  Work work;
  DcqcnRate r(sim, cfg, 100_Gbps, &work, Work::has);
  CHECK(!r.limited());
  CHECK(r.rate() == 100_Gbps);
  r.on_cnp();  // alpha starts at 1: half the rate
  CHECK(r.limited());
  CHECK(gbps(r.rate()) == doctest::Approx(50));
  CHECK(gbps(r.target()) == doctest::Approx(100));
  CHECK(r.alpha() == doctest::Approx(1.0));
  r.on_cnp();  // target follows the current rate down
  CHECK(gbps(r.rate()) == doctest::Approx(25));
  CHECK(gbps(r.target()) == doctest::Approx(50));
  CHECK(r.cuts() == 2);
  CHECK(gbps(r.lowest()) == doctest::Approx(25));
}

TEST_CASE("DCQCN: alpha decays without CNPs; the rate recovers, then the timers stop") {
  Simulator sim;
  DcqcnConfig cfg;
  Work work;
  DcqcnRate r(sim, cfg, 100_Gbps, &work, Work::has);
  r.on_cnp();
  r.on_cnp();                  // 25 Gb/s, target 50
  sim.run(sim.now() + 56_us);  // one alpha period and one rate period
  CHECK(r.alpha() == doctest::Approx((1 - cfg.g) * 1.0));
  CHECK(gbps(r.rate()) == doctest::Approx(37.5));  // fast recovery: halfway to the target
  CHECK(gbps(r.target()) == doctest::Approx(50));
  // Bytes count too: one byte-counter's worth is one more step.
  r.on_sent(cfg.byte_counter.count());
  CHECK(gbps(r.rate()) == doctest::Approx(43.75));
  // Left alone it climbs back to line rate and schedules nothing more.
  sim.run();
  CHECK(!r.limited());
  CHECK(r.rate() == 100_Gbps);
  CHECK(sim.pending() == 0);
}

TEST_CASE("DCQCN: after the fast-recovery steps, the target rises (additive, then hyper)") {
  Simulator sim;
  DcqcnConfig cfg;
  Work work;
  DcqcnRate r(sim, cfg, 100_Gbps, &work, Work::has);
  r.on_cnp();
  r.on_cnp();
  // F = 5 steps of fast recovery (QCN's five cycles): the target stays, the
  // gap of 25 Gb/s halves five times, to 25 / 32.
  for (uint32_t i = 1; i <= cfg.fast_recovery; ++i) r.on_sent(cfg.byte_counter.count());
  CHECK(gbps(r.target()) == doctest::Approx(50));
  CHECK(gbps(r.rate()) == doctest::Approx(50 - 25.0 / 32));
  r.on_sent(cfg.byte_counter.count());  // byte steps past F, timer steps 0: additive
  CHECK(gbps(r.target()) == doctest::Approx(50 + gbps(cfg.additive)));
  CHECK(gbps(r.rate()) == doctest::Approx((50 - 25.0 / 32 + 50 + gbps(cfg.additive)) / 2));
  // Hyper increase needs both counts above F: the timer's too.
  sim.run(sim.now() + cfg.rate_period * (cfg.fast_recovery + 1) + 1_ns);
  for (int i = 0; i < 2; ++i) r.on_sent(cfg.byte_counter.count());
  const double t = gbps(r.target());
  r.on_sent(cfg.byte_counter.count());
  CHECK(gbps(r.target()) - t >= gbps(cfg.hyper) - 1e-9);
}

TEST_CASE("DCQCN: an idle QP schedules nothing and catches up when it sends again") {
  Simulator sim;
  DcqcnConfig cfg;
  Work steady, sleepy;
  DcqcnRate a(sim, cfg, 100_Gbps, &steady, Work::has);
  DcqcnRate b(sim, cfg, 100_Gbps, &sleepy, Work::has);
  for (DcqcnRate* r : {&a, &b}) {
    r->on_cnp();
    r->on_cnp();
    r->on_cnp();
  }
  sleepy.busy = false;
  sim.run(sim.now() + 1_ms);  // b goes idle at its first expiry
  b.busy();
  CHECK(b.limited() == a.limited());
  CHECK(static_cast<double>(b.rate().bps()) == doctest::Approx(static_cast<double>(a.rate().bps())));
  CHECK(static_cast<double>(b.target().bps()) == doctest::Approx(static_cast<double>(a.target().bps())));
  CHECK(b.alpha() == doctest::Approx(a.alpha()));
  CHECK(a.alpha() < 0.95);  // 18 periods: (255/256)^18
  // Idle and never woken: nothing keeps the engine running.
  Simulator quiet;
  Work idle{false};
  DcqcnRate c(quiet, cfg, 100_Gbps, &idle, Work::has);
  c.on_cnp();
  quiet.run();
  CHECK(quiet.pending() == 0);
  CHECK(quiet.now() <= cfg.rate_period);
}

TEST_CASE("DCQCN: clamp_target_rate false keeps the target through cuts until a timer step") {
  // HPCC's simulator's rule (rdma-hw.cc, ClampTargetRate false): a cut sets
  // the target to the current rate only if a timer step came since the last
  // cut. By hand (alpha stays 1 at each cut until an alpha period passes):
  //   cut 1: 100 -> 50, target 100 (from line rate, either way);
  //   cut 2: 50 -> 25, target kept at 100 (the paper's: 50);
  //   a byte-counter step: 25 -> (25 + 100) / 2 = 62.5;
  //   cut 3: no timer step yet: target kept at 100, 62.5 -> 31.25;
  //   a timer step 55 us later: 31.25 -> (31.25 + 100) / 2 = 65.625;
  //   cut 4: after a timer step: target 65.625, rate 65.625 (1 - alpha/2).
  Simulator sim;
  DcqcnConfig cfg;
  cfg.clamp_target_rate = false;
  Work work;
  DcqcnRate r(sim, cfg, 100_Gbps, &work, Work::has);
  r.on_cnp();
  r.on_cnp();
  CHECK(gbps(r.rate()) == doctest::Approx(25));
  CHECK(gbps(r.target()) == doctest::Approx(100));
  r.on_sent(cfg.byte_counter.count());
  CHECK(gbps(r.rate()) == doctest::Approx(62.5));
  r.on_cnp();
  CHECK(gbps(r.target()) == doctest::Approx(100));
  CHECK(gbps(r.rate()) == doctest::Approx(31.25));
  sim.run(sim.now() + cfg.rate_period + 1_ns);  // one timer step (and one alpha decay)
  CHECK(gbps(r.rate()) == doctest::Approx(65.625));
  const double a = r.alpha();
  CHECK(a == doctest::Approx(1 - cfg.g));
  r.on_cnp();
  CHECK(gbps(r.target()) == doctest::Approx(65.625));
  CHECK(gbps(r.rate()) == doctest::Approx(65.625 * (1 - a / 2)));
}
