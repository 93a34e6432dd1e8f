#include "fabrics/iba/transport/cc/dcqcn.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "fabrics/ethernet/wire/ethernet.hpp"
#include "fabrics/ip/wire/ipv4.hpp"
#include "tests/fabrics/iba/transport/qp_pair.hpp"

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
  // One count more than a step past F: hyper increase, a constant R_HAI.
  const double t = gbps(r.target());
  r.on_sent(cfg.byte_counter.count());
  CHECK(gbps(r.target()) - t == doctest::Approx(gbps(cfg.hyper)));
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

TEST_CASE("DCQCN: hyper increase once either count is past F, in constant R_HAI steps") {
  // HPCC's simulator (rdma-hw.cc RateIncEventMlx) counts only the timer:
  // with F = 1, the first step is fast recovery, the second additive, every
  // later one hyper. The old rule (both counts past F, and (stage - F) x
  // R_HAI) never left additive increase without a byte counter.
  Simulator sim;
  DcqcnConfig cfg;
  cfg.byte_counter = Bytes(0);  // no byte counter, as that simulator
  cfg.fast_recovery = 1;
  cfg.rate_period = 300_us;
  Work work;
  DcqcnRate r(sim, cfg, 100_Gbps, &work, Work::has);
  r.on_cnp();
  r.on_cnp();                          // 25 Gb/s, target 50
  sim.run(sim.now() + 300_us + 1_ns);  // step 1: fast recovery
  CHECK(gbps(r.target()) == doctest::Approx(50));
  sim.run(sim.now() + 300_us);  // step 2: additive
  CHECK(gbps(r.target()) == doctest::Approx(50 + gbps(cfg.additive)));
  for (int i = 3; i <= 5; ++i) {  // steps 3..5: hyper, each the same R_HAI
    const double t = gbps(r.target());
    sim.run(sim.now() + 300_us);
    CHECK(gbps(r.target()) - t == doctest::Approx(gbps(cfg.hyper)));
  }
  // hyper_needs_both: the timer alone stays additive (QCN's rule).
  Simulator sim2;
  cfg.hyper_needs_both = true;
  DcqcnRate q(sim2, cfg, 100_Gbps, &work, Work::has);
  q.on_cnp();
  q.on_cnp();
  sim2.run(sim2.now() + 300_us * 4 + 1_ns);
  CHECK(gbps(q.target()) == doctest::Approx(50 + 3 * gbps(cfg.additive)));
}

TEST_CASE("DCQCN: additive and hyper scale with the line rate per rates_per") {
  Simulator sim;
  DcqcnConfig cfg;
  cfg.byte_counter = Bytes(0);
  cfg.fast_recovery = 0;
  cfg.additive = DataRate(5'000'000);
  cfg.rates_per = DataRate(25'000'000'000);  // run.py: 5 Mb/s x bw / 25
  Work work;
  DcqcnRate r(sim, cfg, 100_Gbps, &work, Work::has);
  r.on_cnp();
  sim.run(sim.now() + cfg.rate_period + 1_ns);      // step 1 = F + 1: additive
  CHECK(gbps(r.target()) == doctest::Approx(100));  // capped at line rate
  r.on_cnp();                                       // target = 75 (the rate), 75 -> 37.5 x ...
  const double t = gbps(r.target());
  sim.run(sim.now() + cfg.rate_period + 1_ns);
  CHECK(gbps(r.target()) - t == doctest::Approx(0.020));  // 5 Mb/s x 4
}

TEST_CASE("DCQCN: alpha goes on decaying at line rate; CNPs within decrease_period are one cut") {
  Simulator sim;
  DcqcnConfig cfg;
  cfg.byte_counter = Bytes(0);
  cfg.alpha_period = 1_us;
  cfg.rate_period = 1_us;
  cfg.fast_recovery = 0;
  cfg.hyper = DataRate(50'000'000'000);
  Work work;
  DcqcnRate r(sim, cfg, 100_Gbps, &work, Work::has);
  r.on_cnp();
  sim.run(sim.now() + 10_us);  // back at line rate in a few hyper steps
  REQUIRE(!r.limited());
  CHECK(sim.pending() == 0);  // no timer running at line rate
  sim.at(1000_us, [] {});     // a millisecond on
  sim.run();
  r.on_cnp();
  // The old code froze alpha at line rate: ~0.96 here. The timer's ~1000
  // decays are caught up: (255/256)^1000 x ..., then the cut uses it.
  CHECK(r.alpha() < 0.03);
  CHECK(gbps(r.rate()) > 98);
  // decrease_period: a second CNP 1 us later is held to 4 us after the cut.
  Simulator s2;
  cfg.decrease_period = 4_us;
  DcqcnRate q(s2, cfg, 100_Gbps, &work, Work::has);
  q.on_cnp();
  CHECK(q.cuts() == 1);
  s2.run(s2.now() + 1_us);
  q.on_cnp();
  q.on_cnp();
  CHECK(q.cuts() == 1);
  s2.run(Time::us(4) + 1_ns);
  CHECK(q.cuts() == 2);
}

namespace {
// A frame with headers `h` from `from`'s QP to `to`'s, as `from`'s NIC
// encapsulates it, arriving at `to`'s NIC with ECN CE in its IPv4 header.
void deliver_ce(Host& from_host, test::VerbsEnd& from, Host& to_host, test::VerbsEnd& to, IbaHeaders h,
                size_t len) {
  Packet pkt = from_host.nic().alloc();
  std::memset(pkt.push_back(len).data(), 0, len);
  h.dest_qp = to.qp->qp_num();
  REQUIRE(iba_emit(pkt, h));
  static_cast<IbaFabric&>(from_host.nic().fabric())
      .encap(pkt, from.qp->attr().ah_attr, from.qp->qp_num(), h.dest_qp);
  auto ip = Ipv4View::check(pkt.raw_bytes().subspan(EthernetView::kLen));
  REQUIRE(ip);
  ip->set_dscp_ecn(ip->dscp(), Ecn::Ce);
  ip->fill_checksum();
  to_host.nic().fabric().receive(std::move(pkt));
}
}  // namespace

TEST_CASE("DCQCN: CE-marked data makes a CNP; a CE-marked acknowledgement does not") {
  test::Pair p;
  CcConfig cc;
  cc.algorithm = CcAlgorithm::dcqcn;
  cc.dcqcn.cnp_interval = Time{};  // every marked packet may make one
  for (Host* h : {&p.a, &p.b}) static_cast<IbaFabric&>(h->nic().fabric()).set_congestion_control(&cc);
  p.connect_both();

  // The responder (b) acknowledges a's requests; switches may mark those
  // ACKs (they are ECT like the data). a must not send b a CNP for them.
  IbaHeaders ack;
  ack.opcode = RC_ACKNOWLEDGE;
  ack.psn = 99;
  ack.msn = 0;
  deliver_ce(p.b, p.sb, p.a, p.sa, ack, 0);
  IbaHeaders atomic_ack = ack;
  atomic_ack.opcode = RC_ATOMIC_ACKNOWLEDGE;
  deliver_ce(p.b, p.sb, p.a, p.sa, atomic_ack, 0);
  p.sim.run();
  CHECK(p.a.nic().stats().cnps_sent == 0);
  CHECK(p.b.nic().stats().cnps_received == 0);

  // A marked WRITE (data) at b: one CNP back to a, which cuts a's rate.
  IbaHeaders write;
  write.opcode = RC_RDMA_WRITE_ONLY;
  write.psn = 100;
  write.va = p.sb.buf;
  write.rkey = p.sb.mr->rkey;
  write.dma_len = 64;
  deliver_ce(p.a, p.sa, p.b, p.sb, write, 64);
  p.sim.run();
  CHECK(p.b.nic().stats().cnps_sent == 1);
  CHECK(p.a.nic().stats().cnps_received == 1);
}

TEST_CASE("DCTCP: CE-marked packets acknowledged together still make one BECN ACK each") {
  // The WRITEs arrive while the responder's port is busy: plain ACKs
  // waiting there are merged into one, but a BECN ACK is never merged, so
  // the sender counts every mark (DCTCP's fraction F).
  test::Pair p;
  CcConfig cc;
  cc.algorithm = CcAlgorithm::dctcp;
  for (Host* h : {&p.a, &p.b}) static_cast<IbaFabric&>(h->nic().fabric()).set_congestion_control(&cc);
  p.connect_both();
  std::vector<bool> becn;
  p.b.port(0).on_tx([&becn](Time, Packet& f) {
    const auto b = f.raw_bytes();
    if (std::to_integer<uint8_t>(b[14 + 20 + 8]) == RC_ACKNOWLEDGE)
      becn.push_back((std::to_integer<uint8_t>(b[14 + 20 + 8 + 4]) & 0x40) != 0);
  });
  // b's port is busy with a WRITE of its own, so the ACKs wait at its QP.
  REQUIRE(p.post(p.sb, IBV_WR_RDMA_WRITE, p.sb.buf + 4096, 65536, p.sa.buf, p.sa.mr->rkey) == 0);
  p.sim.at(Time::us(1), [&] {
    for (uint32_t i = 0; i < 4; ++i) {
      IbaHeaders write;
      write.opcode = RC_RDMA_WRITE_ONLY;
      write.psn = 100 + i;
      write.ack_req = true;
      write.va = p.sb.buf + 64 * i;
      write.rkey = p.sb.mr->rkey;
      write.dma_len = 64;
      if (i < 3)
        deliver_ce(p.a, p.sa, p.b, p.sb, write, 64);
      else
        p.inject(write, 64);  // unmarked: merged into a plain ACK only, never into a BECN one
    }
  });
  p.sim.run();
  CHECK(std::count(becn.begin(), becn.end(), true) == 3);
  CHECK(becn.size() == 4);
}
