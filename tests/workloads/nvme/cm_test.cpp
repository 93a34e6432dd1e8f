// The RDMA CM's retries (rdma_cm.hpp) on a built network: a lost REQ, REP
// or RTU is sent again on ib_cm's timers, duplicates are answered as cm.c
// answers them, a packet on the passive QP stands in for a lost RTU, and a
// REQ that never gets through makes the connection unreachable after Max
// CM Retries. A disconnect is a DREQ the peer's consumer answers with a
// DREP; a lost DREQ goes again, crossing DREQs are each answered.
#include <doctest/doctest.h>

#include <string>

#include "tests/fixtures/network.hpp"
#include "workloads/nvme/rdma_cm.hpp"
#include "workloads/workload.hpp"

using namespace rdmasim;
using namespace rdmasim::nvme;

namespace {

constexpr uint16_t kPort = 4420;
// The REQ's wait: 2 x PacketLifeTime (16: 256 ms) + the Remote CM Response
// Timeout (20: 4096 ms), in ib_cm's milliseconds; the REP's: the REQ's
// Local CM Response Timeout (20: 4096 ms).
constexpr Time kReqWait = Time::ms(4608), kRepWait = Time::ms(4096);

// Host a connects an RC QP to one host b accepts on kPort.
struct Pair {
  test::BuiltNetwork b;
  WorkloadEnv env;
  CmDirectory cm;
  verbs::QueuePair* qp[2] = {};
  int accepted = 0;                   // listener calls: QPs the passive side set up
  Time established_at = Time::max();  // the passive QP's RTS
  Time connected_at = Time::max();    // connect's end
  bool reached = false;               // connect ended with a REP
  int dreqs[2] = {};                  // DREQs each side's consumer heard of (it disconnects in turn)
  std::function<void()> on_accept, on_connected;

  explicit Pair(const std::string& fabric)
      : b(test::two_hosts(fabric)),
        env{b.net.sim, b.cfg, nullptr, b.fabric.address, nullptr, b.fabric.mtu, nullptr, nullptr, 0, nullptr},
        cm(env) {
    for (int i = 0; i < 2; ++i) {
      Host& h = b.host(i);
      cm.add_host(h);
      verbs::Device& d = h.device();
      verbs::QpInitAttr init;
      init.send_cq = init.recv_cq = d.create_cq(16);
      qp[i] = d.create_qp(d.alloc_pd(), init);
    }
    cm.agent(b.host(1)).listen(kPort, [this](const CmAgent::Incoming&) {
      ++accepted;
      if (on_accept) on_accept();
      CmAgent::Accepted a;
      a.qp = qp[1];
      a.psn = 100;
      a.established = [this] { established_at = b.net.sim.now(); };
      a.disconnected = [this] { heard_dreq(1); };
      return a;
    });
  }
  ~Pair() { b.net.sim.clear(); }

  CmAgent& active() { return cm.agent(b.host(0)); }
  CmAgent& passive() { return cm.agent(b.host(1)); }
  CmAgent& agent(int i) { return cm.agent(b.host(i)); }
  void connect() {
    Simulator::Scope as(b.net.sim, b.host(0).context());
    active().connect(
        *qp[0], 200, b.host(1), kPort, {},
        [this](const CmRep* rep) {
          reached = rep != nullptr;
          connected_at = b.net.sim.now();
          if (on_connected) on_connected();
        },
        [this] { heard_dreq(0); });
  }
  // Side i's consumer disconnects (rdma_disconnect), at `t`.
  void disconnect_at(Time t, int i) {
    b.net.sim.at(t, [this, i] {
      Simulator::Scope as(b.net.sim, b.host(i).context());
      agent(i).disconnect(*qp[i]);
    });
  }
  void heard_dreq(int i) {
    ++dreqs[i];
    agent(i).disconnect(*qp[i]);  // the DREP
  }
  // Host i's link down (frames on it are lost) or up, now or at `t`.
  void link(int i, bool up) { Port::set_link_up(b.host(i).nic().port(), up); }
  void link_at(Time t, int i, bool up) {
    b.net.sim.at(t, [this, i, up] { link(i, up); });
  }
  void run(Time limit = Time::s(200)) { b.net.sim.run(limit); }
};

}  // namespace

TEST_CASE("rdma cm: without loss, REQ, REP and RTU once each, and no timer left") {
  for (const char* fabric : {"ib", "roce_v2"}) {
    CAPTURE(fabric);
    Pair p(fabric);
    p.connect();
    p.run();
    CHECK(p.reached);
    CHECK(p.connected_at < Time::us(100));
    CHECK(p.established_at < Time::us(100));
    CHECK(p.active().stats().sent == 2);  // REQ, RTU
    CHECK(p.passive().stats().sent == 1);
    CHECK(p.active().stats().resent + p.passive().stats().resent == 0);
    CHECK(p.b.net.sim.now() < Time::ms(1));  // the timers were cancelled: the run ended at once
  }
}

TEST_CASE("rdma cm: a lost REQ goes again after 2 x PacketLifeTime + the response timeout") {
  for (const char* fabric : {"ib", "roce_v2"}) {
    CAPTURE(fabric);
    Pair p(fabric);
    p.link(0, false);
    p.link_at(Time::us(5), 0, true);
    p.connect();
    p.run();
    CHECK(p.reached);
    CHECK(p.connected_at > kReqWait);
    CHECK(p.connected_at < kReqWait + Time::us(100));
    CHECK(p.established_at > kReqWait);
    CHECK(p.active().stats().resent == 1);
    CHECK(p.active().stats().sent == 3);  // REQ twice, RTU
    CHECK(p.accepted == 1);
  }
}

TEST_CASE("rdma cm: a lost REP goes again on the passive side's timer; a duplicate REQ is dropped") {
  Pair p("ib");
  // The REP leaves right after the listener's answer: it, and its first
  // resend, are lost; the REQ sent again meanwhile finds the connection.
  p.on_accept = [&p] {
    const Time now = p.b.net.sim.now();
    p.link(1, false);
    p.link_at(now + Time::us(50), 1, true);
    p.link_at(now + kRepWait - Time::us(1), 1, false);
    p.link_at(now + kRepWait + Time::us(50), 1, true);
  };
  p.connect();
  p.run();
  CHECK(p.reached);
  CHECK(p.accepted == 1);  // the duplicate REQ made no second QP
  CHECK(p.passive().stats().duplicates == 1);
  CHECK(p.passive().stats().resent == 2);
  CHECK(p.active().stats().resent == 1);  // the REQ, at 4.608 s
  CHECK(p.connected_at > kRepWait * 2);
  CHECK(p.connected_at < kRepWait * 2 + Time::us(100));
  CHECK(p.established_at < kRepWait * 2 + Time::us(100));
}

TEST_CASE("rdma cm: a lost RTU: the REP goes again and the duplicate REP gets the RTU again") {
  Pair p("roce_v2");
  p.on_connected = [&p] {  // the RTU is posted: lost
    p.link(0, false);
    p.link_at(p.b.net.sim.now() + Time::us(50), 0, true);
  };
  p.connect();
  p.run();
  CHECK(p.reached);
  CHECK(p.connected_at < Time::us(100));
  CHECK(p.established_at > kRepWait);
  CHECK(p.established_at < kRepWait + Time::us(100));
  CHECK(p.passive().stats().resent == 1);
  CHECK(p.active().stats().duplicates == 1);
  CHECK(p.active().stats().resent == 1);  // the RTU
}

TEST_CASE("rdma cm: with the RTU lost, a packet on the passive QP establishes the connection") {
  Pair p("ib");
  p.on_connected = [&p] {
    p.link(0, false);
    p.link_at(p.b.net.sim.now() + Time::us(50), 0, true);
    // The consumer passes on IB_EVENT_COMM_EST of the QP's first packet.
    p.b.net.sim.at(p.b.net.sim.now() + Time::us(100), [&p] { p.passive().notify_established(*p.qp[1]); });
  };
  p.connect();
  p.run();
  CHECK(p.reached);
  CHECK(p.established_at > Time::us(100));
  CHECK(p.established_at < Time::us(200));  // the event's interrupt and ib_cm's work, not the REP's 4 s
  CHECK(p.qp[1]->state() == IBV_QPS_RTS);
  CHECK(p.passive().stats().resent == 0);  // the REP's timer was cancelled
  CHECK(p.b.net.sim.now() < Time::ms(1));
}

TEST_CASE("rdma cm: no REP to any REQ: unreachable after Max CM Retries") {
  Pair p("roce_v2");
  p.link(0, false);
  p.connect();
  p.run();
  CHECK_FALSE(p.reached);
  CHECK(p.connected_at == kReqWait * (1 + CmAgent::max_cm_retries()));
  CHECK(CmAgent::max_cm_retries() == 15);
  CHECK(p.active().stats().sent == 16);
  CHECK(p.active().stats().resent == 15);
  CHECK(p.accepted == 0);
}

TEST_CASE("rdma cm: a disconnect: DREQ, the peer's consumer told, its DREP; no timer left") {
  for (const int side : {0, 1}) {
    CAPTURE(side);
    Pair p("roce_v2");
    p.connect();
    p.disconnect_at(Time::ms(1), side);
    p.run();
    CHECK(p.dreqs[side] == 0);
    CHECK(p.dreqs[1 - side] == 1);
    CHECK(p.agent(side).stats().sent == (side == 0 ? 3 : 2));  // REQ and RTU, or REP; then the DREQ
    CHECK(p.agent(1 - side).stats().sent == (side == 0 ? 2 : 3));
    CHECK(p.agent(0).stats().resent + p.agent(1).stats().resent == 0);
    CHECK(p.b.net.sim.now() < Time::ms(2));  // the DREQ's timer was cancelled
    p.disconnect_at(Time::ms(3), 1 - side);  // over: nothing more is sent
    p.run();
    CHECK(p.agent(1 - side).stats().sent == (side == 0 ? 2 : 3));
  }
}

TEST_CASE(
    "rdma cm: a lost DREQ goes again after the REQ's wait; again after the last, the connection is over") {
  Pair p("ib");
  p.connect();
  p.link_at(Time::ms(1), 0, false);
  p.link_at(Time::ms(1) + kReqWait - Time::us(1), 0, true);
  p.disconnect_at(Time::ms(1), 0);
  p.run();
  CHECK(p.dreqs[1] == 1);
  CHECK(p.active().stats().resent == 1);
  CHECK(p.b.net.sim.now() > Time::ms(1) + kReqWait);
  CHECK(p.b.net.sim.now() < Time::ms(2) + kReqWait);

  Pair q("roce_v2");  // the passive side's DREQ, never answered: 16 sends, a REP's wait apart
  q.connect();
  q.link_at(Time::ms(1), 0, false);
  q.disconnect_at(Time::ms(1), 1);
  q.run(Time::s(100));
  CHECK(q.passive().stats().sent == 1 + 16);
  CHECK(q.passive().stats().resent == 15);
  CHECK(q.b.net.sim.now() == Time::ms(1) + kRepWait * 16);
}

TEST_CASE("rdma cm: DREQs that cross are each answered with a DREP; a DREQ again gets the DREP again") {
  Pair p("roce_v2");
  p.connect();
  p.disconnect_at(Time::ms(1), 0);
  p.disconnect_at(Time::ms(1), 1);
  p.run();
  CHECK(p.dreqs[0] + p.dreqs[1] == 0);   // neither consumer is told: both disconnected already
  CHECK(p.active().stats().sent == 4);   // REQ, RTU, DREQ, DREP
  CHECK(p.passive().stats().sent == 3);  // REP, DREQ, DREP
  CHECK(p.active().stats().resent + p.passive().stats().resent == 0);

  Pair q("ib");  // the DREP lost: the DREQ again, answered again
  q.connect();
  q.disconnect_at(Time::ms(1), 0);
  q.b.net.sim.at(Time::ms(1) + Time::us(5), [&q] {
    q.link(1, false);
    q.link_at(q.b.net.sim.now() + Time::us(50), 1, true);
  });
  q.run();
  CHECK(q.dreqs[1] == 1);
  CHECK(q.passive().stats().duplicates == 1);
  CHECK(q.passive().stats().sent == 3);  // REP, DREP twice
  CHECK(q.active().stats().resent == 1);
}

TEST_CASE("rdma cm: a DREQ before the RTU: the passive side's REP goes no more") {
  Pair p("roce_v2");
  p.on_connected = [&p] {  // the RTU is posted: lost
    p.link(0, false);
    p.link_at(p.b.net.sim.now() + Time::us(50), 0, true);
  };
  p.connect();
  p.disconnect_at(Time::ms(1), 0);
  p.run();
  CHECK(p.dreqs[1] == 1);
  CHECK(p.established_at == Time::max());
  CHECK(p.passive().stats().resent == 0);
  CHECK(p.b.net.sim.now() < Time::ms(2));
}
