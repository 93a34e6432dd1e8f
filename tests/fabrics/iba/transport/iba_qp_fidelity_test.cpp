// The IBA transport against what the specification, the Linux rxe driver and
// real HCAs do, one behaviour a test: RC recovery (READ retry, RNR timing and
// counters), the responder's class C errors, zero-length operations, the
// fence, and what a UD receive buffer holds.
#include <doctest/doctest.h>

#include "core/task.hpp"
#include "fabrics/iba/opcodes.hpp"
#include "fabrics/iba/wire/aeth.hpp"
#include "tests/fabrics/iba/transport/qp_pair.hpp"

using namespace rdmasim;
using rdmasim::test::Pair;

namespace {

// Runs until `done()` holds, in small steps (bounded).
template <typename F>
void run_until(Pair& p, F done) {
  for (int i = 0; i < 1'000'000 && !done(); ++i) p.sim.run(p.sim.now() + Time::ns(50));
  REQUIRE(done());
}

}  // namespace

TEST_CASE("a lost READ response starts one retry, not a storm (IBA 9.7.6.1.4, as rxe)") {
  Pair p(0.02);
  p.connect_both();
  p.fill(p.b, p.sb.buf, 30 * 16384, 5);
  for (uint64_t i = 0; i < 30; ++i)
    CHECK(p.post(p.sa, IBV_WR_RDMA_READ, p.sa.buf + i * 16384, 16384, p.sb.buf + i * 16384, p.sb.mr->rkey,
                 i) == 0);
  p.sim.run();
  auto wc = p.drain(p.sa);
  REQUIRE(wc.size() == 30);
  for (const auto& w : wc) CHECK(w.status == IBV_WC_SUCCESS);
  CHECK(p.same(p.sa.buf, p.sb.buf, 30 * 16384));
  REQUIRE(p.a.port(0).stats().drops + p.b.port(0).stats().drops > 0);
  // 30 READs of 16 packets need 480 responses; each loss costs at most the
  // rest of the READs in flight once more, never a request per response.
  CHECK(p.b.nic().stats().frames_sent < 2 * 480);
  CHECK(p.a.nic().stats().frames_sent < 3 * 30);
}

TEST_CASE("the RNR NAK timer is IBA table 45, in microseconds") {
  Pair p;
  p.connect_both(100, 200, /*rnr_retry=*/1, 7, /*min_rnr_timer=*/12);
  CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 100, 0, 0) == 0);
  CHECK(p.one_completion(p.sa).status == IBV_WC_RNR_RETRY_EXC_ERR);
  CHECK(p.iba(p.sa).stats().rnr_naks_received == 2);
  // One wait of 0.64 ms between the two NAKs, plus a few microseconds of wire.
  CHECK(p.sim.now() >= rnr_timer_duration(12));
  CHECK(p.sim.now() < rnr_timer_duration(12) + Time::us(50));
}

TEST_CASE("forward progress restores rnr_retry (IBA 9.7.5.2.8)") {
  Pair p;
  p.connect_both(100, 200, /*rnr_retry=*/2);
  for (uint64_t i = 1; i <= 3; ++i) {
    CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 100, 0, 0, i) == 0);
    run_until(p, [&] { return p.iba(p.sa).stats().rnr_naks_received == i; });
    CHECK(p.post_recv(p.sb, p.sb.buf, 4096, i) == 0);
    CHECK(p.one_completion(p.sa).status == IBV_WC_SUCCESS);
  }
}

TEST_CASE("a remote access error moves the responder to ERR and flushes its receives") {
  Pair p;
  p.connect_both();
  CHECK(p.post_recv(p.sb, p.sb.buf, 4096, 9) == 0);
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 100, p.sb.buf, p.sb.mr->rkey ^ 0x100) == 0);
  p.sim.run();
  auto wa = p.drain(p.sa);
  REQUIRE(wa.size() == 1);
  CHECK(wa[0].status == IBV_WC_REM_ACCESS_ERR);
  CHECK(p.sb.qp->state() == IBV_QPS_ERR);  // a class C error (IBA 9.9.3.1.3)
  auto wb = p.drain(p.sb);
  REQUIRE(wb.size() == 1);
  CHECK(wb[0].wr_id == 9);
  CHECK(wb[0].status == IBV_WC_WR_FLUSH_ERR);
}

TEST_CASE("an operation the responder QP does not enable is an invalid request, as rxe answers it") {
  for (ibv_wr_opcode op : {IBV_WR_RDMA_READ, IBV_WR_RDMA_WRITE, IBV_WR_ATOMIC_FETCH_AND_ADD}) {
    CAPTURE(op);
    Pair p;
    p.connect_both();
    // The region allows everything; the QP allows nothing remote.
    Pair::set_access(p.sb, 0);
    CHECK(p.post(p.sa, op, p.sa.buf, 8, p.sb.buf, p.sb.mr->rkey) == 0);
    p.sim.run();
    auto wa = p.drain(p.sa);
    REQUIRE(wa.size() == 1);
    CHECK(wa[0].status == IBV_WC_REM_INV_REQ_ERR);
    CHECK(p.sb.qp->state() == IBV_QPS_ERR);
  }
}

TEST_CASE("zero-length WRITE, WRITE_WITH_IMM and READ check neither R_Key nor address (C9-88)") {
  Pair p;
  p.connect_both();
  CHECK(p.post_recv(p.sb, p.sb.buf, 64, 70) == 0);
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE_WITH_IMM, p.sa.buf, 0, 0, 0, 1, 0, 0xABCD) ==
        0);  // the doorbell pattern
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 0, 0, 0, 2) == 0);
  CHECK(p.post(p.sa, IBV_WR_RDMA_READ, p.sa.buf, 0, 0, 0, 3) == 0);
  CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 0, 0, 0, 4) == 0);
  CHECK(p.post_recv(p.sb, p.sb.buf, 64, 71) == 0);
  p.sim.run();
  auto wa = p.drain(p.sa);
  REQUIRE(wa.size() == 4);
  for (const auto& w : wa) {
    CHECK(w.status == IBV_WC_SUCCESS);
    CHECK(w.byte_len == 0);
  }
  auto wb = p.drain(p.sb);
  REQUIRE(wb.size() == 2);
  CHECK(wb[0].status == IBV_WC_SUCCESS);
  CHECK(wb[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM);
  CHECK(ntohl(wb[0].imm_data) == 0xABCD);
  CHECK(wb[1].opcode == IBV_WC_RECV);
  CHECK(wb[1].byte_len == 0);
  CHECK(p.sb.qp->state() == IBV_QPS_RTS);
}

TEST_CASE("RECV_RDMA_WITH_IMM reports the RETH DMA length in byte_len") {
  Pair p;
  p.connect_both();
  CHECK(p.post_recv(p.sb, p.sb.buf, 64) == 0);
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE_WITH_IMM, p.sa.buf, 5000, p.sb.buf + 4096, p.sb.mr->rkey, 1, 0, 7) ==
        0);
  p.sim.run();
  auto wb = p.drain(p.sb);
  REQUIRE(wb.size() == 1);
  CHECK(wb[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM);
  CHECK(wb[0].byte_len == 5000);
}

TEST_CASE("a receive a SEND was filling is flushed when the QP enters ERR") {
  Pair p;
  p.connect_both(100, 200, 7, /*retry_cnt=*/0);
  CHECK(p.post_recv(p.sb, p.sb.buf, 8192, 1) == 0);
  CHECK(p.post_recv(p.sb, p.sb.buf + 8192, 8192, 2) == 0);
  CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 8192, 0, 0) == 0);  // 8 packets
  // Some packets of the SEND placed, not all.
  run_until(p, [&] { return p.b.nic().stats().frames_received >= 3; });
  p.sim.run(p.sim.now() + Time::ns(260));
  REQUIRE(p.drain(p.sb).empty());
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_ERR;
  REQUIRE(p.sb.qp->modify(a, IBV_QP_STATE) == 0);
  p.sim.run();
  auto wb = p.drain(p.sb);
  REQUIRE(wb.size() == 2);
  CHECK(wb[0].wr_id == 1);
  CHECK(wb[0].status == IBV_WC_WR_FLUSH_ERR);
  CHECK(wb[1].wr_id == 2);
  CHECK(wb[1].status == IBV_WC_WR_FLUSH_ERR);
}

TEST_CASE("IBV_SEND_FENCE holds a SEND until the READ before it has completed") {
  Pair p;
  p.connect_both();
  p.fill(p.a, p.sa.buf, 4096, 1);   // X: stale bytes
  p.fill(p.b, p.sb.buf, 4096, 99);  // Y: what the READ brings into X
  CHECK(p.post_recv(p.sb, p.sb.buf + 8192, 4096) == 0);
  CHECK(p.post(p.sa, IBV_WR_RDMA_READ, p.sa.buf, 4096, p.sb.buf, p.sb.mr->rkey, 1) == 0);
  CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 4096, 0, 0, 2, IBV_SEND_FENCE) == 0);
  p.sim.run();
  auto wa = p.drain(p.sa);
  REQUIRE(wa.size() == 2);
  CHECK(wa[0].status == IBV_WC_SUCCESS);
  CHECK(wa[1].status == IBV_WC_SUCCESS);
  auto v = p.b.memory().view(p.sb.buf, 8192 + 4096);
  CHECK(std::memcmp(v.data(), v.data() + 8192, 4096) == 0);  // the SEND carried Y's bytes
}

namespace {
// The first 40 bytes of b's receive buffer after a 64-byte UD SEND from a.
std::vector<std::byte> ud_grh_area(Pair& p) {
  p.ud_ready(0x1234);
  CHECK(p.post_recv(p.sb, p.sb.buf, 4096) == 0);
  CHECK(p.post_ud(p.ah_to_b(), 64, 0x1234) == 0);
  p.sim.run();
  REQUIRE(p.drain(p.sb).size() == 1);
  auto g = p.b.memory().view(p.sb.buf, 40);
  return {g.begin(), g.end()};
}
}  // namespace

TEST_CASE("a UD receive buffer starts with what rxe and mlx5 write there") {
  SUBCASE("RoCE v2 over IPv4: 20 zero bytes, then the IPv4 header") {
    Pair p(0, IBV_QPT_UD, IpVersion::ipv4);
    auto g = ud_grh_area(p);
    for (int i = 0; i < 20; ++i) CHECK(g[i] == std::byte{0});
    CHECK(g[20] == std::byte{0x45});                               // version 4, IHL 5
    CHECK(g[29] == std::byte{17});                                 // UDP
    CHECK(std::memcmp(&g[32], &p.a.nic().gid().raw[12], 4) == 0);  // source address
    CHECK(std::memcmp(&g[36], &p.b.nic().gid().raw[12], 4) == 0);  // destination address
  }
  SUBCASE("RoCE v2 over IPv6: the IPv6 header, next header UDP") {
    Pair p(0, IBV_QPT_UD, IpVersion::ipv6);
    auto g = ud_grh_area(p);
    CHECK((std::to_integer<int>(g[0]) >> 4) == 6);
    CHECK(g[6] == std::byte{17});
    CHECK(std::memcmp(&g[8], p.a.nic().gid().raw, 16) == 0);
    CHECK(std::memcmp(&g[24], p.b.nic().gid().raw, 16) == 0);
  }
}

TEST_CASE("AckReq: within long messages every 65 packets (as rxe), and on READ and atomic requests") {
  Pair p;
  p.connect_both();
  auto sent = Pair::record_bth(p.a);
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 256 << 10, p.sb.buf, p.sb.mr->rkey, 1) == 0);
  CHECK(p.post(p.sa, IBV_WR_RDMA_READ, p.sa.buf, 4096, p.sb.buf, p.sb.mr->rkey, 2) == 0);
  CHECK(p.post(p.sa, IBV_WR_ATOMIC_FETCH_AND_ADD, p.sa.buf, 8, p.sb.buf, p.sb.mr->rkey, 3) == 0);
  p.sim.run();
  REQUIRE(p.drain(p.sa).size() == 3);
  std::vector<size_t> asked;
  for (size_t i = 0; i < sent->size(); ++i)
    if ((*sent)[i].ack_req) asked.push_back(i);
  REQUIRE(sent->size() == 256 + 2);
  // WRITE packets 66, 132, 198 and the last; then the READ and the atomic.
  CHECK(asked == std::vector<size_t>{65, 131, 197, 255, 256, 257});
  CHECK(p.iba(p.sb).stats().acks_sent == 4);
}

TEST_CASE("the solicited event bit is only on SEND and WRITE with immediate (IBA 9.2.2)") {
  Pair p;
  p.connect_both();
  auto sent = Pair::record_bth(p.a);
  CHECK(p.post_recv(p.sb, p.sb.buf, 4096, 1) == 0);
  CHECK(p.post_recv(p.sb, p.sb.buf, 4096, 2) == 0);
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 64, p.sb.buf, p.sb.mr->rkey, 1, IBV_SEND_SOLICITED) == 0);
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE_WITH_IMM, p.sa.buf, 64, p.sb.buf, p.sb.mr->rkey, 2,
               IBV_SEND_SOLICITED) == 0);
  CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 64, 0, 0, 3, IBV_SEND_SOLICITED) == 0);
  p.sim.run();
  REQUIRE(sent->size() == 3);
  CHECK_FALSE((*sent)[0].se);
  CHECK((*sent)[1].se);
  CHECK((*sent)[2].se);
}

TEST_CASE("a PSN sequence error NAK consumes retry_cnt, as in rxe") {
  Pair p;
  p.connect_both(100, 200, 7, /*retry_cnt=*/0);
  auto sent = Pair::record_bth(p.a);
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 64 << 10, p.sb.buf, p.sb.mr->rkey) == 0);
  // Lose a few packets from the middle of the message: the responder NAKs the gap.
  run_until(p, [&] { return sent->size() >= 10; });
  Port::set_link_up(p.a.port(0), false);
  p.sim.run(p.sim.now() + Time::ns(300));
  Port::set_link_up(p.a.port(0), true);
  p.sim.run();
  CHECK(p.iba(p.sb).stats().seq_naks_sent == 1);
  auto wc = p.drain(p.sa);
  REQUIRE(wc.size() == 1);
  CHECK(wc[0].status == IBV_WC_RETRY_EXC_ERR);
}

TEST_CASE("a UD SEND longer than the port MTU: success, and nothing sent (C10-93.1.1, as rxe)") {
  Pair p(0, IBV_QPT_UD);
  p.ud_ready(0x1234);
  CHECK(p.post_recv(p.sb, p.sb.buf, 8192) == 0);
  CHECK(p.post_ud(p.ah_to_b(), 4097, 0x1234) == 0);
  p.sim.run();
  auto wa = p.drain(p.sa);
  REQUIRE(wa.size() == 1);
  CHECK(wa[0].status == IBV_WC_SUCCESS);
  CHECK(p.a.nic().stats().frames_sent == 0);
  CHECK(p.drain(p.sb).empty());
}

TEST_CASE("RoCE: an address without a GRH is EINVAL, in ibv_create_ah and ibv_modify_qp") {
  Pair p;
  ibv_ah_attr ah{};
  ah.dlid = 1;
  errno = 0;
  CHECK(p.a.device().create_ah(p.sa.pd, ah) == nullptr);
  CHECK(errno == EINVAL);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  REQUIRE(p.sa.qp->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
  a.qp_state = IBV_QPS_RTR;
  a.ah_attr = ah;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = p.sb.qp->qp_num();
  CHECK(p.sa.qp->modify(a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) == EINVAL);
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = p.b.nic().gid();
  CHECK(p.sa.qp->modify(a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) == 0);
}

TEST_CASE("a shared receive queue feeds a QP's receives and raises its limit event once") {
  Pair p;
  ibv_srq_init_attr init{};
  init.attr.max_wr = 4;
  init.attr.max_sge = 1;
  verbs::SharedReceiveQueue* srq = p.b.device().create_srq(p.sb.pd, init);
  REQUIRE(srq);
  Pair::new_qp(p.b, p.sb, p.sb.cq, srq);
  p.connect_both();
  CHECK(p.post_recv(p.sb, p.sb.buf, 64) == EINVAL);  // receives go to the SRQ
  for (uint64_t i = 0; i < 3; ++i) {
    ibv_sge sge{p.sb.buf + i * 4096, 4096, p.sb.mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = 10 + i;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    CHECK(srq->post(&wr, nullptr) == 0);
  }
  ibv_srq_attr limit{};
  limit.srq_limit = 5;
  CHECK(srq->modify(limit, IBV_SRQ_LIMIT) == EINVAL);  // above max_wr
  limit.srq_limit = 2;
  CHECK(srq->modify(limit, IBV_SRQ_LIMIT) == 0);
  for (uint64_t i = 1; i <= 3; ++i) CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 100, 0, 0, i) == 0);
  p.sim.run();
  auto wb = p.drain(p.sb);
  REQUIRE(wb.size() == 3);
  for (uint64_t i = 0; i < 3; ++i) {
    CHECK(wb[i].wr_id == 10 + i);
    CHECK(wb[i].status == IBV_WC_SUCCESS);
  }
  verbs::AsyncEvent e{};
  REQUIRE(p.b.device().get_async_event(e));
  CHECK(e.type == IBV_EVENT_SRQ_LIMIT_REACHED);
  CHECK(e.srq == srq);
  CHECK_FALSE(p.b.device().get_async_event(e));  // disarmed after one event
  ibv_srq_attr now{};
  srq->query(now);
  CHECK(now.srq_limit == 0);
  // An empty SRQ: the next SEND meets RNR NAKs.
  CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 100, 0, 0, 4) == 0);
  p.sim.run(p.sim.now() + Time::us(100));
  CHECK(p.iba(p.sb).stats().rnr_naks_sent > 0);
}

TEST_CASE("CQ overflow: IBV_EVENT_CQ_ERR and the QPs completing to it go to ERR") {
  Pair p;
  Pair::new_qp(p.a, p.sa, p.a.device().create_cq(2));
  p.connect_both();
  for (uint64_t i = 1; i <= 4; ++i)
    CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 64, p.sb.buf, p.sb.mr->rkey, i) == 0);
  p.sim.run();
  CHECK(p.sa.cq->overflowed());
  CHECK(p.sa.qp->state() == IBV_QPS_ERR);
  verbs::AsyncEvent e{};
  REQUIRE(p.a.device().get_async_event(e));
  CHECK(e.type == IBV_EVENT_CQ_ERR);
  CHECK(e.cq == p.sa.cq);
  CHECK(p.drain(p.sa).size() == 2);
}

TEST_CASE("the responder enforces max_dest_rd_atomic: one READ too many is an invalid request") {
  Pair p;
  Pair::connect(p.sa, p.b, p.sb, 100, 200);  // the requester may have 4 READs in flight
  Pair::connect(p.sb, p.a, p.sa, 200, 100, 7, 7, 10, 1, /*max_dest_rd_atomic=*/1);
  for (uint64_t i = 1; i <= 2; ++i)
    CHECK(p.post(p.sa, IBV_WR_RDMA_READ, p.sa.buf, 16384, p.sb.buf, p.sb.mr->rkey, i) == 0);
  p.sim.run();
  auto wa = p.drain(p.sa);
  REQUIRE(wa.size() == 2);
  CHECK(wa[0].status == IBV_WC_REM_INV_REQ_ERR);
  CHECK(wa[1].status == IBV_WC_WR_FLUSH_ERR);
  CHECK(p.sb.qp->state() == IBV_QPS_ERR);
}

TEST_CASE("P_Key: one table entry, and packets of another partition are dropped (IBA 10.9.3)") {
  Pair p;
  ibv_port_attr port{};
  REQUIRE(p.b.device().query_port(1, port) == 0);
  CHECK(port.pkey_tbl_len == 1);
  uint16_t pkey = 0;
  CHECK(p.b.device().query_pkey(1, 0, pkey) == 0);
  CHECK(pkey == 0xFFFF);
  CHECK(p.b.device().query_pkey(1, 1, pkey) == EINVAL);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.pkey_index = 1;
  CHECK(p.sb.qp->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == EINVAL);
  p.connect_both();
  CHECK(p.post_recv(p.sb, p.sb.buf, 64) == 0);
  // A SEND ONLY at b's expected PSN, with P_Key `key`, straight into b's NIC.
  auto inject = [&](uint16_t key) {
    IbaHeaders h;
    h.opcode = RC_SEND_ONLY;
    h.pkey = key;
    h.psn = 100;
    p.inject(h, 16);
  };
  inject(0x8001);  // another partition
  inject(0x0001);
  CHECK(p.iba(p.sb).stats().pkey_violations == 2);
  inject(0x7FFF);  // a limited member of the default partition talks to a full member
  p.sim.run();
  CHECK(p.iba(p.sb).stats().pkey_violations == 2);
  auto wb = p.drain(p.sb);
  REQUIRE(wb.size() == 1);
  CHECK(wb[0].status == IBV_WC_SUCCESS);
  CHECK(wb[0].byte_len == 16);
}

namespace {
// A program that sleeps on a completion channel: arm, poll, get the event,
// ack it; records when it woke and what it found.
Task sleeper(verbs::CompletionChannel& ch, verbs::CompletionQueue& cq, bool solicited_only,
             std::vector<uint64_t>& got, Simulator& sim, Time& woke) {
  cq.req_notify(solicited_only);
  ibv_wc wc{};
  while (cq.poll(1, &wc) == 0) {
    verbs::CompletionQueue* from = co_await ch.get_event();
    CHECK(from == &cq);
    woke = sim.now();
    cq.req_notify(solicited_only);  // re-arm, then poll: nothing is lost in between
  }
  got.push_back(wc.wr_id);
}
}  // namespace

TEST_CASE("completion channels: ibv_req_notify_cq, solicited only, and the arm-then-poll idiom") {
  Pair p;
  verbs::CompletionChannel* ch = p.b.device().create_comp_channel();
  verbs::CompletionQueue* cq = p.b.device().create_cq(16, ch);
  Pair::new_qp(p.b, p.sb, cq);
  p.connect_both();
  for (uint64_t i = 1; i <= 3; ++i) CHECK(p.post_recv(p.sb, p.sb.buf, 4096, i) == 0);
  std::vector<uint64_t> got;
  Time woke;
  sleeper(*ch, *cq, /*solicited_only=*/true, got, p.sim, woke);
  // Without SE: a completion, but no event for a solicited-only arming.
  CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 64, 0, 0, 1) == 0);
  p.sim.run();
  CHECK(cq->depth() == 1);
  CHECK(ch->pending() == 0);
  CHECK(got.empty());
  // With SE: the event wakes the program, which polls the first completion.
  CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 64, 0, 0, 2, IBV_SEND_SOLICITED) == 0);
  const Time posted = p.sim.now();
  p.sim.run();
  REQUIRE(got.size() == 1);
  CHECK(got[0] == 1);
  CHECK(woke > posted);
  CHECK(cq->interrupts() == 1);
  // Arm, then poll: a completion already queued is found without an event.
  sleeper(*ch, *cq, false, got, p.sim, woke);
  REQUIRE(got.size() == 2);
  CHECK(got[1] == 2);
}
