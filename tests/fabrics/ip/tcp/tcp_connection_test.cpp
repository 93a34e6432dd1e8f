// TcpConnection end to end: two endpoints across real Ports and a switch
// (tcp_testbed.hpp), with loss, marks and chosen drops.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/fabrics/ip/tcp/tcp_testbed.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;
using namespace rdmasim::tcp_test;

namespace {

TcpEndpointConfig dc(CongestionControl cc = CongestionControl::newreno) {
  TcpEndpointConfig c;
  c.congestion_control = cc;
  return c;
}

bool is_data(ConstTcpView s) { return s.payload().size() > 0; }

// Wires a Source on a and a Sink on b.
struct Transfer {
  Source src;
  Sink sink;
  Transfer(Testbed& t, uint64_t total, bool close = true) {
    src.c = t.a.get();
    src.total = total;
    src.close_when_done = close;
    sink.c = t.b.get();
    sink.close_on_fin = close;
    t.a->set_upper(&src);
    t.b->set_upper(&sink);
  }
};

}  // namespace

TEST_CASE("tcp: the handshake negotiates MSS, window scale, SACK") {
  Testbed t(dc(), dc(), link(10, 1_us), link(10, 1_us));
  Transfer x(t, 0, false);
  t.open();
  t.sim.run(100_us);
  CHECK(t.a->state() == TcpState::established);
  CHECK(t.b->state() == TcpState::established);
  CHECK(x.src.established);
  CHECK(x.sink.established);
  CHECK(t.a->max_record() == 1460);         // 1500 - 20 - 20
  CHECK(t.a->receive_window_scale() == 5);  // 1 MiB >> 5 fits 16 bits
  CHECK(t.b->send_window_scale() == 5);
  CHECK(t.a->sack_enabled());
  CHECK(t.b->sack_enabled());
  CHECK(!t.a->ecn_enabled());
  CHECK(t.a->send_window() == 65535);  // the SYN-ACK's window, never scaled (RFC 7323 2.2)
  CHECK(t.a->srtt() > 4_us);           // sampled from the SYN: two hops each way
  CHECK(t.a->srtt() < 10_us);
}

TEST_CASE("tcp: a lost SYN is sent again after the initial RTO") {
  Testbed t(dc(), dc(), link(10, 1_us), link(10, 1_us));
  Transfer x(t, 0, false);
  int syns = 0;
  t.sw.drop = [&](uint16_t in, ConstTcpView s) { return in == 0 && s.has(tcp_flag::kSyn) && ++syns == 1; };
  t.open();
  t.sim.run(900_us);
  CHECK(t.a->state() == TcpState::syn_sent);
  t.sim.run(1100_us);
  CHECK(t.a->state() == TcpState::established);
  CHECK(t.a->stats().timeouts == 1);
  CHECK(t.a->stats().retransmits == 1);
}

TEST_CASE("tcp: 10 MB bulk transfer arrives exactly, then both sides close") {
  Testbed t(dc(), dc(), link(10, 2_us), link(10, 2_us));
  Transfer x(t, 10'000'000);
  t.open();
  t.sim.run(1_s);
  CHECK(x.sink.received == 10'000'000);
  CHECK(x.sink.intact);
  CHECK(t.a->stats().retransmits == 0);
  CHECK(t.a->stats().timeouts == 0);
  CHECK(t.a->stats().bytes_acked == 10'000'000);
  // Both ends closed: a went through TIME-WAIT, b through LAST-ACK.
  CHECK(x.src.closed);
  CHECK(x.src.reason == TcpCloseReason::normal);
  CHECK(x.sink.closed);
  CHECK(x.sink.peer_closed);
  CHECK(x.src.peer_closed);
  CHECK(t.a->state() == TcpState::closed);
  CHECK(t.b->state() == TcpState::closed);
  // 10 MB at 10 Gb/s is 8 ms of payload; headers and slow start cost a little more.
  CHECK(t.b->stats().bytes_delivered == 10'000'000);
  CHECK(t.pool.in_use() == 0);
}

TEST_CASE("tcp: bulk throughput is close to the line rate") {
  Testbed t(dc(), dc(), link(10, 2_us), link(10, 2_us));
  Transfer x(t, 10'000'000, false);
  t.open();
  Time done;
  while (x.sink.received < 10'000'000 && t.sim.now() < 1_s) {
    t.sim.run(t.sim.now() + 10_us);
    done = t.sim.now();
  }
  // 10 MB in 1460-byte segments of 1500+ bytes on the wire: 8.22 ms at best.
  CHECK(done < 9_ms);
}

TEST_CASE("tcp: 10 MB across 1% loss in both directions arrives exactly") {
  for (bool sack : {true, false}) {
    CAPTURE(sack);
    TcpEndpointConfig c = dc();
    c.sack = sack;
    Testbed t(c, c, link(10, 2_us, 4 << 20, 0.01), link(10, 2_us, 4 << 20, 0.01), 7);
    Transfer x(t, 10'000'000);
    t.open();
    t.sim.run(5_s);
    CHECK(x.sink.received == 10'000'000);
    CHECK(x.sink.intact);
    CHECK(t.a->stats().retransmits > 0);
    CHECK(t.a->stats().fast_retransmits > 0);
    CHECK(t.b->stats().out_of_order > 0);
    CHECK(x.src.closed);
    CHECK(x.sink.closed);
    CHECK(t.a->sack_enabled() == sack);
  }
}

TEST_CASE("tcp: one lost segment is repaired by fast retransmit, not a timeout") {
  for (bool sack : {true, false}) {
    CAPTURE(sack);
    TcpEndpointConfig c = dc();
    c.sack = sack;
    Testbed t(c, c, link(10, 2_us), link(10, 2_us));
    Transfer x(t, 2'000'000);
    int n = 0;
    t.sw.drop = [&](uint16_t in, ConstTcpView s) { return in == 0 && is_data(s) && ++n == 30; };
    t.open();
    t.sim.run(1_s);
    CHECK(x.sink.received == 2'000'000);
    CHECK(x.sink.intact);
    CHECK(t.a->stats().fast_retransmits == 1);
    CHECK(t.a->stats().retransmits == 1);
    CHECK(t.a->stats().timeouts == 0);
    CHECK(t.a->stats().dupacks_received >= 3);
  }
}

TEST_CASE("tcp: several losses in one window recover without a timeout") {
  for (bool sack : {true, false}) {
    CAPTURE(sack);
    TcpEndpointConfig c = dc();
    c.sack = sack;
    Testbed t(c, c, link(10, 2_us), link(10, 2_us));
    Transfer x(t, 3'000'000);
    int n = 0;
    t.sw.drop = [&](uint16_t in, ConstTcpView s) {
      if (in != 0 || !is_data(s)) return false;
      ++n;
      return n == 100 || n == 103 || n == 106;
    };
    t.open();
    t.sim.run(1_s);
    CHECK(x.sink.received == 3'000'000);
    CHECK(x.sink.intact);
    CHECK(t.a->stats().retransmits == 3);
    CHECK(t.a->stats().timeouts == 0);
    // SACK repairs all three in one round trip; NewReno one per partial ACK.
    CHECK(t.a->stats().fast_retransmits == 1);
  }
}

TEST_CASE("tcp: the retransmission timer backs off exponentially in a blackhole") {
  Testbed t(dc(), dc(), link(10, 2_us), link(10, 2_us));
  Transfer x(t, 1'000'000);
  bool blackhole = false;
  std::vector<Time> rtx;  // arrival at the switch of each segment lost in the blackhole
  t.sw.drop = [&](uint16_t in, ConstTcpView s) {
    if (in != 0 || !blackhole || !is_data(s)) return false;
    rtx.push_back(t.sim.now());
    return true;
  };
  t.open();
  t.sim.run(200_us);
  REQUIRE(x.sink.received > 0);
  REQUIRE(x.sink.received < 1'000'000);
  blackhole = true;
  t.sim.run(t.sim.now() + 20_ms);
  blackhole = false;
  t.sim.run(1_s);
  CHECK(x.sink.received == 1'000'000);
  CHECK(x.sink.intact);
  CHECK(t.a->stats().timeouts >= 5);
  // Find the timeout retransmissions: segments that arrive alone, after a gap.
  std::vector<Time> gaps;
  for (size_t i = 1; i < rtx.size(); ++i)
    if (rtx[i] - rtx[i - 1] > 100_us) gaps.push_back(rtx[i] - rtx[i - 1]);
  REQUIRE(gaps.size() >= 4);
  for (size_t i = 1; i < gaps.size(); ++i) {
    CAPTURE(i);
    const double ratio = static_cast<double>(gaps[i].count()) / static_cast<double>(gaps[i - 1].count());
    CHECK(ratio == doctest::Approx(2.0).epsilon(0.05));
  }
}

TEST_CASE("tcp: the receive window limits the sender; probes find it open again") {
  TcpEndpointConfig cb = dc();
  cb.receive_buffer = 64 << 10;
  Testbed t(dc(), cb, link(10, 2_us), link(10, 2_us));
  Transfer x(t, 1'000'000);
  t.b->set_auto_consume(false);
  uint64_t max_flight = 0;
  t.ha.port(0).on_tx([&](Time, Packet&) { max_flight = std::max(max_flight, t.a->bytes_in_flight()); });
  t.open();
  t.sim.run(5_ms);
  CHECK(t.b->receive_window_scale() == 1);  // 64 KiB needs one bit
  CHECK(x.sink.received <= (64u << 10));
  CHECK(x.sink.received > (64u << 10) - 1460);
  CHECK(max_flight <= (64u << 10));
  CHECK(t.a->send_window() < 1460);       // closed
  CHECK(t.a->stats().window_probes > 0);  // the persist timer kept asking
  CHECK(t.a->stats().timeouts == 0);

  // The application reads at 1 MB per millisecond from now on.
  for (int i = 0; i < 4000; ++i)
    t.sim.at(t.sim.now() + Time::us(i), [&] { t.b->consume(t.b->unconsumed()); });
  t.sim.run(t.sim.now() + 10_ms);
  CHECK(x.sink.received == 1'000'000);
  CHECK(x.sink.intact);
  CHECK(max_flight <= (64u << 10));
}

TEST_CASE("tcp: a lone segment is acknowledged after the delayed-ACK timeout") {
  TcpEndpointConfig c = dc();
  c.delayed_ack = 40_us;
  Testbed t(c, c, link(10, 1_us), link(10, 1_us));
  Transfer x(t, 0, false);
  Time data_at, ack_at;
  t.hb.port(0).on_rx([&](Time now, Packet& p) {
    if (p.size() > 1 + 20 + 40) data_at = now;
  });
  t.hb.port(0).on_tx([&](Time now, Packet&) {
    if (data_at > Time() && ack_at == Time()) ack_at = now;
  });
  t.open();
  t.sim.run(50_us);
  std::vector<std::byte> rec(100, std::byte{1});
  REQUIRE(t.a->send(rec));
  t.sim.run(200_us);
  REQUIRE(data_at > Time());
  CHECK(ack_at - data_at == 40_us);
  // Two full-sized segments are acknowledged at once.
  Time second_ack;
  ack_at = data_at = Time();
  std::vector<std::byte> big(1460, std::byte{2});
  REQUIRE(t.a->send(big));
  REQUIRE(t.a->send(big));
  t.sim.run(400_us);
  CHECK(ack_at - data_at < 1_us);
}

TEST_CASE("tcp: orderly close in both directions, and reset") {
  Testbed t(dc(), dc(), link(10, 1_us), link(10, 1_us));
  Transfer x(t, 5000);
  t.open();
  t.sim.run(100_us);
  // a sent its FIN after the data; b closed on it: a is in TIME-WAIT.
  CHECK(x.sink.received == 5000);
  CHECK(t.a->state() == TcpState::time_wait);
  CHECK(t.b->state() == TcpState::closed);
  t.sim.run(10_ms);
  CHECK(t.a->state() == TcpState::closed);
  CHECK(x.src.reason == TcpCloseReason::normal);

  Testbed r(dc(), dc(), link(10, 1_us), link(10, 1_us));
  Transfer y(r, 0, false);
  r.open();
  r.sim.run(100_us);
  r.a->abort();
  r.sim.run(200_us);
  CHECK(r.a->state() == TcpState::closed);
  CHECK(r.b->state() == TcpState::closed);
  CHECK(y.src.reason == TcpCloseReason::reset);
  CHECK(y.sink.reason == TcpCloseReason::reset);
}

TEST_CASE("tcp: dctcp keeps the queue near K without loss; newreno fills the buffer") {
  // 40 Gb/s into a 10 Gb/s bottleneck with 256 KB of buffer, marking above 30 KB.
  auto run = [](CongestionControl kind, bool ecn, uint64_t* max_q, uint64_t* drops, TcpStats* st,
                double* alpha) {
    TcpEndpointConfig c = dc(kind);
    c.ecn = ecn;
    Testbed t(c, c, link(40, 2_us), link(10, 2_us, 256 << 10));
    t.sw.mark_threshold = 30 << 10;
    Transfer x(t, 20'000'000);
    t.open();
    t.sim.run(1_s);
    CHECK(x.sink.received == 20'000'000);
    CHECK(x.sink.intact);
    *max_q = t.sw.max_queue[1];
    *drops = t.sw.port(1).stats().drops;
    *st = t.a->stats();
    *alpha = t.a->congestion().dctcp_alpha();
  };
  uint64_t q = 0, drops = 0;
  TcpStats st;
  double alpha = 0;
  run(CongestionControl::dctcp, false, &q, &drops, &st, &alpha);
  CHECK(drops == 0);
  CHECK(st.retransmits == 0);
  CHECK(st.ecn_reductions > 10);
  CHECK(q < 100u << 10);
  CHECK(alpha > 0.0);
  CHECK(alpha < 1.0);

  run(CongestionControl::newreno, false, &q, &drops, &st, &alpha);
  CHECK(drops > 0);
  CHECK(st.retransmits > 0);
  CHECK(q > 200u << 10);

  run(CongestionControl::newreno, true, &q, &drops, &st, &alpha);  // RFC 3168 ECN
  CHECK(st.ecn_reductions > 0);
  CHECK(st.retransmits == 0);
}

TEST_CASE("tcp: cubic recovers from bottleneck loss and backs off by beta") {
  TcpEndpointConfig c = dc(CongestionControl::cubic);
  Testbed t(c, c, link(40, 2_us), link(10, 2_us, 128 << 10));
  Transfer x(t, 20'000'000);
  uint64_t cwnd_before = 0, ssthresh_after = 0;
  uint64_t seen_fr = 0;
  t.ha.port(0).on_tx([&](Time, Packet&) {
    if (t.a->stats().fast_retransmits > seen_fr && ssthresh_after == 0) {
      ssthresh_after = t.a->ssthresh();
    }
    if (t.a->stats().fast_retransmits == 0) cwnd_before = std::max(cwnd_before, t.a->cwnd());
  });
  t.open();
  t.sim.run(1_s);
  CHECK(x.sink.received == 20'000'000);
  CHECK(x.sink.intact);
  CHECK(t.a->stats().fast_retransmits > 0);
  REQUIRE(ssthresh_after > 0);
  // ssthresh = 0.7 cwnd at the loss (RFC 9438 4.6); cwnd may have grown a little after the drop.
  CHECK(static_cast<double>(ssthresh_after) <= 0.7 * static_cast<double>(cwnd_before) + 1);
  CHECK(static_cast<double>(ssthresh_after) >= 0.6 * static_cast<double>(cwnd_before));
}

TEST_CASE("tcp: pull mode hands out segments only when asked") {
  Testbed t(dc(), dc(), link(10, 2_us), link(10, 2_us));
  Transfer x(t, 100'000);
  // a in pull mode: a NIC that takes one segment per 1.2 us.
  t.a->set_output(nullptr);
  bool scheduled = false;
  std::function<void()> pump = [&] {
    scheduled = false;
    if (TcpTx tx = t.a->next_tx()) t.ha.transmit(std::move(tx.packet), tx.ect);
    if (t.a->has_tx() && !scheduled) {
      scheduled = true;
      t.sim.after(1200_ns, [&] { pump(); });
    }
  };
  t.a->set_wake([&] {
    if (!scheduled) {
      scheduled = true;
      t.sim.after(Time(), [&] { pump(); });
    }
  });
  t.open();
  t.sim.run(1_s);
  CHECK(x.sink.received == 100'000);
  CHECK(x.sink.intact);
  CHECK(x.src.closed);
}
