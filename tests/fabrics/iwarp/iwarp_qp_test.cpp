// Verbs over iWARP (IwarpFabric, IwarpQp): what is refused as siw refuses
// it, the connection made at RTR/RTS, work posted before the MPA exchange
// ends, data placed, a bad rkey completing with IBV_WC_REM_ACCESS_ERR.
#include "fabrics/iwarp/iwarp_qp.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "fabrics/iwarp/iwarp_fabric.hpp"
#include "tests/fixtures/network.hpp"
#include "tests/fixtures/verbs_end.hpp"

using namespace rdmasim;

namespace {

constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

LinkConfig ip_link() {
  LinkConfig l;
  l.mtu = 1500;
  return l;
}

struct Bed {
  test::BuiltNetwork built{test::two_hosts("iwarp", ip_link())};
  Network& net = built.net;
  using Side = test::VerbsEnd;
  Side a = test::make_end(net.host(0), {64, 64 << 10, kAccess, IBV_QPT_RC});
  Side b = test::make_end(net.host(1), {64, 64 << 10, kAccess, IBV_QPT_RC});

  // a and b connected to each other.
  void connect() {
    test::RcPath p;
    p.access = kAccess;
    test::connect_ends(built.fabric, a, b, p);
  }

  int post(Side& s, ibv_wr_opcode op, uint64_t off, uint32_t len, uint64_t raddr, uint32_t rkey,
           uint64_t id) {
    return test::post_send(s, op, off, len, raddr, rkey, id);
  }

  std::span<std::byte> mem(Side& s, uint64_t off, size_t len) { return s.mem(off, len); }
};

}  // namespace

TEST_CASE("iwarp verbs: only RC queue pairs, no atomics, no immediate data") {
  Bed t;
  verbs::QpInitAttr init;
  init.send_cq = init.recv_cq = t.a.cq;
  for (ibv_qp_type type : {IBV_QPT_UD, IBV_QPT_UC}) {
    init.qp_type = type;
    errno = 0;
    CHECK(t.a.host->device().create_qp(t.a.pd, init) == nullptr);
    CHECK(errno == EOPNOTSUPP);
  }
  t.connect();
  for (ibv_wr_opcode op : {IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_SEND_WITH_IMM,
                           IBV_WR_RDMA_WRITE_WITH_IMM})
    CHECK(t.post(t.a, op, 0, 8, t.b.buf, t.b.mr->rkey, 1) == EINVAL);
}

TEST_CASE("iwarp verbs: write, read and send posted before the connection is up") {
  Bed t;
  t.connect();
  auto src = t.mem(t.a, 0, 20000);
  for (size_t i = 0; i < src.size(); ++i) src[i] = std::byte(i * 7 + 3);
  auto far = t.mem(t.b, 32768, 3000);
  for (size_t i = 0; i < far.size(); ++i) far[i] = std::byte(i * 5 + 1);
  // b posts a receive; a posts at once: the TCP and MPA handshakes come first.
  ibv_sge rsge{t.b.buf + 40000, 4096, t.b.mr->lkey};
  ibv_recv_wr rwr{};
  rwr.wr_id = 77;
  rwr.sg_list = &rsge;
  rwr.num_sge = 1;
  ibv_recv_wr* rbad = nullptr;
  REQUIRE(t.b.qp->post_recv(&rwr, &rbad) == 0);
  REQUIRE(t.post(t.a, IBV_WR_RDMA_WRITE, 0, 20000, t.b.buf, t.b.mr->rkey, 1) == 0);
  REQUIRE(t.post(t.a, IBV_WR_RDMA_READ, 24000, 3000, t.b.buf + 32768, t.b.mr->rkey, 2) == 0);
  REQUIRE(t.post(t.a, IBV_WR_SEND, 100, 1000, 0, 0, 3) == 0);
  t.net.sim.run(Time::ms(5));

  ibv_wc wc[8];
  REQUIRE(t.a.cq->poll(8, wc) == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(wc[i].status == IBV_WC_SUCCESS);
    CHECK(wc[i].wr_id == uint64_t(i + 1));  // in posting order
  }
  CHECK(wc[0].opcode == IBV_WC_RDMA_WRITE);
  CHECK(wc[1].opcode == IBV_WC_RDMA_READ);
  CHECK(wc[2].opcode == IBV_WC_SEND);
  REQUIRE(t.b.cq->poll(8, wc) == 1);
  CHECK(wc[0].wr_id == 77);
  CHECK(wc[0].opcode == IBV_WC_RECV);
  CHECK(wc[0].byte_len == 1000);
  auto placed = t.mem(t.b, 0, 20000);
  CHECK(std::memcmp(placed.data(), src.data(), 20000) == 0);
  CHECK(std::memcmp(t.mem(t.a, 24000, 3000).data(), far.data(), 3000) == 0);
  CHECK(std::memcmp(t.mem(t.b, 40000, 1000).data(), src.data() + 100, 1000) == 0);

  auto* qa = dynamic_cast<IwarpQp*>(t.a.qp);
  auto* qb = dynamic_cast<IwarpQp*>(t.b.qp);
  REQUIRE(qa);
  REQUIRE(qb);
  CHECK(qa->active() != qb->active());  // one end opened, the other listened
  CHECK(qa->endpoint()->phase() == IwarpEndpoint::Phase::full_operation);
  CHECK(qa->tcp()->flow().local_port == IwarpFabric::port_of(t.a.qp->qp_num()));
}

// A Terminate fails the WQE it names; the WQEs before it that TCP
// acknowledged complete successfully, the rest flush.
// perftest's ib_send_bw server takes its QP to RTR only, then posts credit
// WRITEs on it: the connection leaves it in RTS, as the iWARP CM does (siw at
// both ends), whichever end it is; its consumer's RTR -> RTS is still taken.
TEST_CASE("iwarp verbs: a QP left in RTR is in RTS once connected, at either end") {
  for (const bool active_stays : {false, true}) {
    CAPTURE(active_stays);
    Bed t;
    // a (the lower address) opens the connection, b listens.
    test::VerbsEnd& stays = active_stays ? t.a : t.b;
    test::VerbsEnd& other = active_stays ? t.b : t.a;
    test::RcPath p;
    p.access = kAccess;
    p.rts = false;
    p.ah = t.built.fabric.address(*stays.host, *other.host);
    p.dest_qp = other.qp->qp_num();
    test::connect_rc(*stays.qp, p);
    CHECK(t.post(stays, IBV_WR_RDMA_WRITE, 0, 4, other.buf, other.mr->rkey, 1) == EINVAL);  // not connected
    t.net.sim.run(Time::us(20));  // the other end comes later: a SYN before it listens waits for it
    p.rts = true;
    p.ah = t.built.fabric.address(*other.host, *stays.host);
    p.dest_qp = stays.qp->qp_num();
    test::connect_rc(*other.qp, p);
    t.net.sim.run(Time::ms(1));
    CHECK(stays.qp->state() == IBV_QPS_RTS);
    CHECK(static_cast<IwarpQp*>(stays.qp)->tcp()->stats().retransmits == 0);
    t.mem(stays, 0, 4)[0] = std::byte{0x2A};
    REQUIRE(t.post(stays, IBV_WR_RDMA_WRITE, 0, 4, other.buf, other.mr->rkey, 2) == 0);
    t.net.sim.run(Time::ms(2));
    ibv_wc wc{};
    REQUIRE(stays.cq->poll(1, &wc) == 1);
    CHECK((wc.wr_id == 2 && wc.status == IBV_WC_SUCCESS));
    CHECK(t.mem(other, 0, 1)[0] == std::byte{0x2A});
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTS;
    a.max_rd_atomic = 4;
    const int rtr_rts = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                        IBV_QP_MAX_QP_RD_ATOMIC;
    CHECK(stays.qp->modify(a, rtr_rts) == 0);
    CHECK(stays.qp->modify(a, rtr_rts) == EINVAL);  // once: now RTS -> RTS
  }
}

TEST_CASE("iwarp verbs: a bad rkey fails its WRITE with IBV_WC_REM_ACCESS_ERR, the rest flushed") {
  struct Case {
    uint32_t len;
    size_t bad;  // which of the WRITEs has the bad rkey
    size_t count;
  };
  // 2000 bytes: one WRITE per segment. 100 bytes, posted before the
  // connection is up: all three in one segment, so b's answer acknowledges
  // every one of them and terminates on the second at once.
  for (Case c : {Case{2000, 0, 2}, Case{100, 1, 3}}) {
    CAPTURE(c.len);
    Bed t;
    t.connect();
    for (size_t i = 0; i < c.count; ++i) {
      const uint32_t rkey = i == c.bad ? t.b.mr->rkey ^ 0x5A5A00 : t.b.mr->rkey;
      REQUIRE(t.post(t.a, IBV_WR_RDMA_WRITE, 0, c.len, t.b.buf, rkey, i + 1) == 0);
    }
    t.net.sim.run(Time::ms(5));
    ibv_wc wc[4];
    REQUIRE(t.a.cq->poll(4, wc) == static_cast<int>(c.count));
    for (size_t i = 0; i < c.count; ++i) {
      CHECK(wc[i].wr_id == i + 1);
      CHECK(wc[i].status == (i < c.bad    ? IBV_WC_SUCCESS
                             : i == c.bad ? IBV_WC_REM_ACCESS_ERR
                                          : IBV_WC_WR_FLUSH_ERR));
    }
    CHECK(t.a.qp->state() == IBV_QPS_ERR);
    CHECK(t.b.qp->state() == IBV_QPS_ERR);
  }
}

TEST_CASE("iwarp verbs: a Send scatters over the receive WR's SGEs") {
  Bed t;
  t.connect();
  auto src = t.mem(t.a, 0, 150);
  for (size_t i = 0; i < src.size(); ++i) src[i] = std::byte(i * 3 + 1);
  // Two 100-byte SGEs, apart in memory: 150 bytes fill the first and half the second.
  ibv_sge rsge[2] = {{t.b.buf + 1000, 100, t.b.mr->lkey}, {t.b.buf + 5000, 100, t.b.mr->lkey}};
  ibv_recv_wr rwr{};
  rwr.wr_id = 9;
  rwr.sg_list = rsge;
  rwr.num_sge = 2;
  ibv_recv_wr* rbad = nullptr;
  REQUIRE(t.b.qp->post_recv(&rwr, &rbad) == 0);
  REQUIRE(t.post(t.a, IBV_WR_SEND, 0, 150, 0, 0, 1) == 0);
  t.net.sim.run(Time::ms(5));
  ibv_wc wc[2];
  REQUIRE(t.b.cq->poll(2, wc) == 1);
  CHECK(wc[0].status == IBV_WC_SUCCESS);
  CHECK(wc[0].byte_len == 150);
  CHECK(std::memcmp(t.mem(t.b, 1000, 100).data(), src.data(), 100) == 0);
  CHECK(std::memcmp(t.mem(t.b, 5000, 50).data(), src.data() + 100, 50) == 0);
  REQUIRE(t.a.cq->poll(2, wc) == 1);
  CHECK(wc[0].status == IBV_WC_SUCCESS);
}

// The receive queue is a deque, whose blocks (12 WQEs each in libstdc++)
// lie anywhere in the heap. A receive's endpoint id once came from
// subtracting element addresses: past the first block it was garbage, and
// when it fell below the queue's base the Send that filled the receive was
// dropped without a completion (the iwarp_lossy example's Send workload,
// depending on the output path's length). The endpoint's ids are checked
// directly, so this fails whatever the allocator does.
TEST_CASE("iwarp verbs: every Send completes its receive while the receive queue cycles through its blocks") {
  Bed t;
  t.connect();
  constexpr int kRounds = 40, kPerRound = 5;  // 200 receives: many deque blocks (12 WQEs each in libstdc++)
  auto src = t.mem(t.a, 0, 64);
  uint64_t next = 0;
  auto* qb = dynamic_cast<IwarpQp*>(t.b.qp);
  REQUIRE(qb);
  t.net.sim.run(Time::ms(1));  // connected: each receive goes to the endpoint as it is posted
  REQUIRE(qb->endpoint()->phase() == IwarpEndpoint::Phase::full_operation);
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kPerRound; ++i) {
      const uint64_t id = next + static_cast<uint64_t>(i);
      ibv_sge rsge{t.b.buf + 1024 * (id % 32), 64, t.b.mr->lkey};
      ibv_recv_wr rwr{};
      rwr.wr_id = 1000 + id;
      rwr.sg_list = &rsge;
      rwr.num_sge = 1;
      ibv_recv_wr* rbad = nullptr;
      REQUIRE(t.b.qp->post_recv(&rwr, &rbad) == 0);
    }
    // The endpoint knows the receives by consecutive ids, oldest first.
    const IwarpEndpoint& ep = *qb->endpoint();
    REQUIRE(ep.recvs_posted() == kPerRound);
    for (size_t i = 0; i < ep.recvs_posted(); ++i) CHECK(ep.posted_recv_id(i) == ep.posted_recv_id(0) + i);
    for (int i = 0; i < kPerRound; ++i) {
      const uint64_t id = next + static_cast<uint64_t>(i);
      src[0] = std::byte(id);
      REQUIRE(t.post(t.a, IBV_WR_SEND, 0, 16 + static_cast<uint32_t>(id % 40), 0, 0, id) == 0);
    }
    t.net.sim.run(t.net.sim.now() + Time::ms(1));
    ibv_wc wc[kPerRound + 1];
    REQUIRE(t.a.cq->poll(kPerRound + 1, wc) == kPerRound);
    const int got = t.b.cq->poll(kPerRound + 1, wc);
    CAPTURE(round);
    REQUIRE(got == kPerRound);
    for (int i = 0; i < kPerRound; ++i) {
      const uint64_t id = next + static_cast<uint64_t>(i);
      CHECK(wc[i].status == IBV_WC_SUCCESS);
      CHECK(wc[i].wr_id == 1000 + id);
      CHECK(wc[i].byte_len == 16 + id % 40);
    }
    next += kPerRound;
  }
}

// MPA has no disconnect message: the QP's leaving RTS closes its TCP
// connection with a FIN, and the peer's QP, on that FIN, enters ERR, flushes
// what was outstanding and tells its consumer (RDMA_CM_EVENT_DISCONNECTED;
// siw's IW_CM_EVENT_DISCONNECT). The closing side's consumer is not told.
TEST_CASE("iwarp verbs: a QP to ERR or RESET closes its connection; the peer is flushed and told") {
  for (const ibv_qp_state leave : {IBV_QPS_ERR, IBV_QPS_RESET}) {
    CAPTURE(leave);
    Bed t;
    t.connect();
    int told_a = 0, told_b = 0;
    CHECK(t.a.qp->on_connection_closed([&] { ++told_a; }));
    CHECK(t.b.qp->on_connection_closed([&] { ++told_b; }));
    ibv_sge sge{t.b.buf, 4096, t.b.mr->lkey};
    ibv_recv_wr rwr{};
    rwr.sg_list = &sge;
    rwr.num_sge = 1;
    ibv_recv_wr* rbad = nullptr;
    for (uint64_t id : {1, 2}) {
      rwr.wr_id = id;
      REQUIRE(t.b.qp->post_recv(&rwr, &rbad) == 0);
    }
    REQUIRE(t.post(t.a, IBV_WR_SEND, 0, 100, 0, 0, 7) == 0);
    t.net.sim.run(Time::ms(1));
    ibv_wc wc[4];
    REQUIRE(t.a.cq->poll(4, wc) == 1);
    CHECK(wc[0].status == IBV_WC_SUCCESS);
    REQUIRE(t.b.cq->poll(4, wc) == 1);
    CHECK(wc[0].status == IBV_WC_SUCCESS);

    ibv_qp_attr attr{};
    attr.qp_state = leave;
    REQUIRE(t.a.qp->modify(attr, IBV_QP_STATE) == 0);
    auto* qa = dynamic_cast<IwarpQp*>(t.a.qp);
    auto* qb = dynamic_cast<IwarpQp*>(t.b.qp);
    REQUIRE(qa);
    REQUIRE(qb);
    t.net.sim.run(t.net.sim.now() + Time::us(100));
    CHECK(t.b.qp->state() == IBV_QPS_ERR);
    REQUIRE(t.b.cq->poll(4, wc) == 1);  // the second receive, flushed
    CHECK(wc[0].wr_id == 2);
    CHECK(wc[0].status == IBV_WC_WR_FLUSH_ERR);
    CHECK(told_b == 1);
    CHECK(told_a == 0);
    CHECK(qb->endpoint()->phase() == IwarpEndpoint::Phase::closed);
    // b answered the FIN with its own: closed; a waits in TIME-WAIT (RFC 9293 3.6).
    CHECK(qb->tcp()->state() == TcpState::closed);
    CHECK(qa->tcp()->state() == TcpState::time_wait);
    t.net.sim.run(t.net.sim.now() + Time::ms(2));
    CHECK(qa->tcp()->state() == TcpState::closed);
    CHECK(told_b == 1);
    CHECK(t.a.cq->poll(4, wc) == 0);
  }
}

// Data the peer sends after the close crosses the FIN: the closing side, whose
// QP reads no more, answers it with a RST (the kernel's answer to data for a
// released socket), and the peer's WRITE fails with its connection; its
// consumer is told.
TEST_CASE("iwarp verbs: data that crosses the FIN is answered with a RST") {
  Bed t;
  t.connect();
  t.net.sim.run(Time::ms(1));
  int told_b = 0;
  CHECK(t.b.qp->on_connection_closed([&] { ++told_b; }));
  REQUIRE(t.post(t.b, IBV_WR_RDMA_WRITE, 0, 60000, t.a.buf, t.a.mr->rkey, 5) == 0);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  REQUIRE(t.a.qp->modify(attr, IBV_QP_STATE) == 0);
  t.net.sim.run(t.net.sim.now() + Time::us(100));
  auto* qa = dynamic_cast<IwarpQp*>(t.a.qp);
  auto* qb = dynamic_cast<IwarpQp*>(t.b.qp);
  REQUIRE(qa);
  REQUIRE(qb);
  // Reset at both ends, well within the 1 ms TIME-WAIT an orderly close leaves a in.
  CHECK(qa->tcp()->state() == TcpState::closed);
  CHECK(qb->tcp()->state() == TcpState::closed);
  CHECK(t.b.qp->state() == IBV_QPS_ERR);
  ibv_wc wc[2];
  REQUIRE(t.b.cq->poll(2, wc) == 1);
  CHECK(wc[0].wr_id == 5);
  CHECK(wc[0].status != IBV_WC_SUCCESS);
  CHECK(told_b == 1);
}

// A QP taken back through RESET and connected again opens a new TCP
// connection: the old endpoint, which refers to the old connection, went
// first (it was destroyed after the connection it reads, a use after free
// that AddressSanitizer reports).
TEST_CASE("iwarp verbs: a QP reset and connected again carries data on a new connection") {
  Bed t;
  t.connect();
  REQUIRE(t.post(t.a, IBV_WR_RDMA_WRITE, 0, 1000, t.b.buf, t.b.mr->rkey, 1) == 0);
  t.net.sim.run(Time::ms(1));
  ibv_wc wc[4];
  REQUIRE(t.a.cq->poll(4, wc) == 1);
  CHECK(wc[0].status == IBV_WC_SUCCESS);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RESET;
  for (test::VerbsEnd* s : {&t.a, &t.b}) REQUIRE(s->qp->modify(attr, IBV_QP_STATE) == 0);
  t.net.sim.run(t.net.sim.now() + Time::ms(5));  // both FINs exchanged, TIME-WAIT over
  t.connect();
  std::memset(t.mem(t.a, 4096, 2000).data(), 0x5a, 2000);
  REQUIRE(t.post(t.a, IBV_WR_RDMA_WRITE, 4096, 2000, t.b.buf + 8192, t.b.mr->rkey, 2) == 0);
  t.net.sim.run(t.net.sim.now() + Time::ms(5));
  REQUIRE(t.a.cq->poll(4, wc) == 1);
  CHECK(wc[0].wr_id == 2);
  CHECK(wc[0].status == IBV_WC_SUCCESS);
  const auto landed = t.mem(t.b, 8192, 2000);
  CHECK(std::all_of(landed.begin(), landed.end(), [](std::byte x) { return x == std::byte{0x5a}; }));
}
