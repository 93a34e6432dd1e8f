// fabrics/ip/tcp/congestion_control.hpp and rtt_estimator.hpp against the
// numbers their RFCs give.
#include "fabrics/ip/tcp/congestion_control.hpp"

#include <doctest/doctest.h>

#include "fabrics/ip/tcp/rtt_estimator.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {
constexpr uint32_t kMss = 1000;

AckSample ack(uint64_t bytes, Time now = Time(), bool ece = false, uint64_t una = 0, uint64_t nxt = 0) {
  AckSample a;
  a.now = now;
  a.acked = bytes;
  a.ece = ece;
  a.snd_una = una;
  a.snd_nxt = nxt;
  return a;
}
}  // namespace

TEST_CASE("rtt estimator: RFC 6298 2.2, 2.3, 5.5") {
  RttEstimator r(1_ms, 200_us, 1_s);
  CHECK(r.rto() == 1_ms);  // initial
  r.sample(100_us);
  CHECK(r.srtt() == 100_us);
  CHECK(r.rttvar() == 50_us);
  CHECK(r.rto() == 300_us);  // 100 + 4 * 50
  r.sample(200_us);
  CHECK(r.rttvar() == Time::ns(62'500));  // 3/4 * 50 + 1/4 * 100
  CHECK(r.srtt() == Time::ns(112'500));   // 7/8 * 100 + 1/8 * 200
  CHECK(r.rto() == Time::ns(362'500));
  r.backoff();
  CHECK(r.rto() == Time::ns(725'000));
  for (int i = 0; i < 20; ++i) r.backoff();
  CHECK(r.rto() == 1_s);  // capped
  r.sample(100_us);       // a new sample ends the back-off
  CHECK(r.rto() < 1_ms);
  RttEstimator low(1_ms, 200_us, 1_s);
  low.sample(1_us);
  CHECK(low.rto() == 200_us);  // the floor
}

TEST_CASE("newreno: slow start by byte counting, then one MSS per window") {
  CongestionController cc(CongestionControl::newreno, kMss, 10, 1.0 / 16);
  CHECK(cc.cwnd() == 10 * kMss);
  CHECK(cc.in_slow_start());
  cc.on_ack(ack(kMss));
  CHECK(cc.cwnd() == 11 * kMss);
  cc.on_ack(ack(5 * kMss));  // RFC 3465: at most 2 SMSS per ACK
  CHECK(cc.cwnd() == 13 * kMss);

  cc.on_loss(Time(), 20 * kMss);  // RFC 5681 eq. 4: FlightSize / 2
  CHECK(cc.ssthresh() == 10 * kMss);
  cc.end_recovery();
  CHECK(cc.cwnd() == 10 * kMss);
  CHECK(!cc.in_slow_start());
  for (int i = 0; i < 9; ++i) cc.on_ack(ack(kMss));
  CHECK(cc.cwnd() == 10 * kMss);
  cc.on_ack(ack(kMss));  // a whole window acknowledged: +1 SMSS
  CHECK(cc.cwnd() == 11 * kMss);

  AckSample idle = ack(kMss);
  idle.cwnd_limited = false;  // RFC 7661: an unused window does not grow
  cc.on_ack(idle);
  CHECK(cc.cwnd() == 11 * kMss);

  cc.on_timeout(Time(), 30 * kMss, true);
  CHECK(cc.cwnd() == kMss);
  CHECK(cc.ssthresh() == 15 * kMss);
  cc.on_timeout(Time(), 2 * kMss, false);  // a repeated timeout keeps ssthresh
  CHECK(cc.ssthresh() == 15 * kMss);
  cc.on_loss(Time(), kMss);
  CHECK(cc.ssthresh() == 2 * kMss);  // never below two segments
}

TEST_CASE("dctcp: alpha tracks the marked fraction, the cut is alpha / 2") {
  CongestionController cc(CongestionControl::dctcp, kMss, 10, 1.0 / 16);
  CHECK(cc.dctcp_alpha() == doctest::Approx(1.0));  // RFC 8257 3.3: starts at 1
  // Windows of 100 segments, a quarter of them marked.
  uint64_t una = 0;
  for (int w = 0; w < 200; ++w) {
    for (int i = 0; i < 100; ++i) {
      una += kMss;
      cc.observe_ack(ack(kMss, Time(), i % 4 == 0, una, una + 100 * kMss));
    }
  }
  CHECK(cc.dctcp_alpha() == doctest::Approx(0.25).epsilon(0.02));
  cc.set_cwnd(100 * kMss);
  cc.on_ecn(Time(), 100 * kMss);
  CHECK(cc.cwnd() == doctest::Approx(100.0 * kMss * (1 - cc.dctcp_alpha() / 2)).epsilon(0.001));
  CHECK(cc.ssthresh() == cc.cwnd());
  // The ACK closing a window with marks: alpha takes it in before the cut
  // (RFC 8257 3.3); the connection once cut first, with the stale alpha.
  CongestionController d(CongestionControl::dctcp, kMss, 10, 1.0 / 16);
  d.observe_ack(ack(kMss, Time(), false, kMss, 10 * kMss));  // the first window's end: alpha 15/16
  d.set_cwnd(100 * kMss);
  const double before = d.dctcp_alpha();
  d.on_ecn_ack(ack(kMss, Time(), true, 10 * kMss, 20 * kMss), 10 * kMss);  // this window: all marked
  const double after = (1 - 1.0 / 16) * before + 1.0 / 16;
  CHECK(d.dctcp_alpha() == doctest::Approx(after));
  CHECK(d.cwnd() == doctest::Approx(100.0 * kMss * (1 - after / 2)).epsilon(0.001));
}

TEST_CASE("cubic: beta 0.7 and the window is back at W_max after K seconds") {
  CongestionController cc(CongestionControl::cubic, kMss, 10, 1.0 / 16);
  cc.set_cwnd(100 * kMss);
  cc.on_loss(Time(), 100 * kMss);
  CHECK(cc.ssthresh() == 70 * kMss);  // RFC 9438 4.6
  cc.end_recovery();
  CHECK(cc.cwnd() == 70 * kMss);
  // K = cbrt(W_max * (1 - beta) / C) = cbrt(30 / 0.4) = 4.22 s. One ACK of a
  // whole window per 100 ms round trip.
  Time now = 1_s;
  const Time rtt = 100_ms;
  uint64_t at_k = 0;
  for (int i = 0; i < 100; ++i) {
    AckSample a = ack(cc.cwnd(), now);
    a.srtt = rtt;
    cc.on_ack(a);
    now += rtt;
    if (i == 41) at_k = cc.cwnd();  // t = 4.2 s after the epoch began
  }
  CHECK(at_k >= 95 * kMss);
  CHECK(at_k <= 105 * kMss);
  CHECK(cc.cwnd() > 150 * kMss);  // convex growth past W_max: W(10 s) = 100 + 0.4 (10.1 - 4.22)^3
  // Fast convergence (RFC 9438 4.7): a loss below the old W_max lowers it further.
  cc.set_cwnd(90 * kMss);
  cc.on_loss(now, 90 * kMss);
  CHECK(cc.ssthresh() == 63 * kMss);
}
