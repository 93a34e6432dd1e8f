// The QP state machine of IBA 10.3.1 (figure 130) as ibv_modify_qp(3)
// walks it: every legal transition for RC, UC and UD QPs, a sample of the
// illegal ones (EINVAL, as rdma-core's providers return, the state
// unchanged), the send queue drain (SQD) finishing only what it had
// started, and the send queue error state (SQE) a UD or UC send error
// leads to where an RC one goes to ERR.
#include <doctest/doctest.h>

#include <cerrno>

#include "tests/fabrics/iba/transport/qp_pair.hpp"

using namespace rdmasim;
using test::Pair;

namespace {

// The attributes each forward transition needs, per QP type (the Linux
// verbs core's required masks).
int required(ibv_qp_type t, ibv_qp_state to) {
  switch (to) {
    case IBV_QPS_INIT:
      return IBV_QP_PKEY_INDEX | IBV_QP_PORT | (t == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
    case IBV_QPS_RTR:
      if (t == IBV_QPT_UD) return 0;
      return IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
             (t == IBV_QPT_RC ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0);
    case IBV_QPS_RTS:
      return IBV_QP_SQ_PSN |
             (t == IBV_QPT_RC ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC
                              : 0);
    default:
      return 0;
  }
}

int move(verbs::QueuePair& qp, ibv_qp_state to, Host& peer, int extra = 0) {
  ibv_qp_attr a{};
  a.qp_state = to;
  a.port_num = 1;
  a.qkey = 0x11111111;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = peer.nic().gid();
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = 5;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = a.max_dest_rd_atomic = 1;
  a.en_sqd_async_notify = 1;
  // The forward steps need their attributes; staying in or returning to a state needs none.
  const bool forward = qp.state() != to && (to == IBV_QPS_INIT || to == IBV_QPS_RTR ||
                                            (to == IBV_QPS_RTS && qp.state() == IBV_QPS_RTR));
  return qp.modify(a, IBV_QP_STATE | (forward ? required(qp.type(), to) : 0) | extra);
}

// A new QP of `t` on a, brought to `s` by the shortest legal path.
verbs::QueuePair& qp_in(Pair& p, ibv_qp_type t, ibv_qp_state s) {
  verbs::QueuePair& qp = *p.make(p.a, t).qp;
  const ibv_qp_state path[] = {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD};
  if (s == IBV_QPS_ERR) {
    REQUIRE(move(qp, IBV_QPS_ERR, p.b) == 0);
    return qp;
  }
  for (ibv_qp_state step : path) {
    if (qp.state() == s) break;
    REQUIRE(move(qp, step, p.b) == 0);
  }
  REQUIRE(qp.state() == s);
  return qp;
}

const char* name(ibv_qp_state s) {
  static const char* names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
  return names[s];
}

}  // namespace

TEST_CASE("modify_qp: every legal transition of figure 130, for RC, UC and UD") {
  const ibv_qp_state from_states[] = {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR,
                                      IBV_QPS_RTS,   IBV_QPS_SQD,  IBV_QPS_ERR};
  for (ibv_qp_type t : {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD}) {
    Pair p;
    // Legal: the next state forward, RTS <-> SQD, staying (INIT, RTS, SQD), and ERR and RESET from anywhere.
    const std::pair<ibv_qp_state, ibv_qp_state> legal[] = {
        {IBV_QPS_RESET, IBV_QPS_INIT}, {IBV_QPS_INIT, IBV_QPS_INIT}, {IBV_QPS_INIT, IBV_QPS_RTR},
        {IBV_QPS_RTR, IBV_QPS_RTS},    {IBV_QPS_RTS, IBV_QPS_RTS},   {IBV_QPS_RTS, IBV_QPS_SQD},
        {IBV_QPS_SQD, IBV_QPS_SQD},    {IBV_QPS_SQD, IBV_QPS_RTS}};
    for (auto [from, to] : legal) {
      INFO(int(t), " ", name(from), " -> ", name(to));
      verbs::QueuePair& qp = qp_in(p, t, from);
      CHECK(move(qp, to, p.b) == 0);
      CHECK(qp.state() == to);
    }
    for (ibv_qp_state from : from_states)
      for (ibv_qp_state to : {IBV_QPS_ERR, IBV_QPS_RESET}) {
        INFO(int(t), " ", name(from), " -> ", name(to));
        verbs::QueuePair& qp = qp_in(p, t, from);
        CHECK(move(qp, to, p.b) == 0);
        CHECK(qp.state() == to);
      }
  }
}

TEST_CASE("modify_qp: illegal moves are EINVAL and leave the state as it was") {
  const std::pair<ibv_qp_state, ibv_qp_state> illegal[] = {
      {IBV_QPS_RESET, IBV_QPS_RTR}, {IBV_QPS_RESET, IBV_QPS_RTS}, {IBV_QPS_RESET, IBV_QPS_SQD},
      {IBV_QPS_INIT, IBV_QPS_RTS},  {IBV_QPS_INIT, IBV_QPS_SQD},  {IBV_QPS_RTR, IBV_QPS_INIT},
      {IBV_QPS_RTR, IBV_QPS_SQD},   {IBV_QPS_RTS, IBV_QPS_INIT},  {IBV_QPS_RTS, IBV_QPS_RTR},
      {IBV_QPS_RTS, IBV_QPS_SQE},   {IBV_QPS_SQD, IBV_QPS_INIT},  {IBV_QPS_SQD, IBV_QPS_RTR},
      {IBV_QPS_SQD, IBV_QPS_SQE},   {IBV_QPS_ERR, IBV_QPS_RTS},   {IBV_QPS_ERR, IBV_QPS_INIT},
      {IBV_QPS_ERR, IBV_QPS_SQD}};
  for (ibv_qp_type t : {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD}) {
    Pair p;
    for (auto [from, to] : illegal) {
      INFO(int(t), " ", name(from), " -> ", name(to));
      verbs::QueuePair& qp = qp_in(p, t, from);
      CHECK(move(qp, to, p.b) == EINVAL);
      CHECK(qp.state() == from);
    }
    // Attributes a transition does not take: the drain notice only on RTS -> SQD;
    // an RC QP may change its timeout in SQD, UC and UD QPs have none.
    CHECK(move(qp_in(p, t, IBV_QPS_RTS), IBV_QPS_RTS, p.b, IBV_QP_EN_SQD_ASYNC_NOTIFY) == EINVAL);
    CHECK(move(qp_in(p, t, IBV_QPS_SQD), IBV_QPS_SQD, p.b, IBV_QP_TIMEOUT) == (t == IBV_QPT_RC ? 0 : EINVAL));
  }
}

TEST_CASE("SQD: the messages started are finished (and resent), none after them starts, then RTS resumes") {
  for (double loss : {0.0, 0.02}) {
    CAPTURE(loss);
    Pair p(loss);
    p.connect_both();
    const uint32_t len = 256 * 1024;
    p.fill(p.a, p.sa.buf, len, 3);
    CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, len, p.sb.buf, p.sb.mr->rkey, 1) == 0);
    CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 4096, p.sb.buf + len, p.sb.mr->rkey, 2) == 0);
    p.sim.run(Time::us(2));
    REQUIRE(p.drain(p.sa).empty());
    CHECK(move(*p.sa.qp, IBV_QPS_SQD, p.b, IBV_QP_EN_SQD_ASYNC_NOTIFY) == 0);
    CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 4096, p.sb.buf + len, p.sb.mr->rkey, 3) == 0);
    // The receive side goes on in SQD: b's WRITE to a completes.
    CHECK(p.post(p.sb, IBV_WR_RDMA_WRITE, p.sb.buf, 1024, p.sa.buf + len, p.sa.mr->rkey, 9) == 0);
    p.sim.run();
    auto wa = p.drain(p.sa);
    REQUIRE(wa.size() == 1);
    CHECK(wa[0].wr_id == 1);
    CHECK(wa[0].status == IBV_WC_SUCCESS);
    CHECK(p.same(p.sa.buf, p.sb.buf, len));
    auto wb = p.drain(p.sb);
    REQUIRE(wb.size() == 1);
    CHECK(wb[0].status == IBV_WC_SUCCESS);
    CHECK(p.sa.qp->state() == IBV_QPS_SQD);
    verbs::AsyncEvent e{};
    REQUIRE(p.a.device().get_async_event(e));
    CHECK(e.type == IBV_EVENT_SQ_DRAINED);
    CHECK(e.qp == p.sa.qp);
    CHECK_FALSE(p.a.device().get_async_event(e));
    CHECK(move(*p.sa.qp, IBV_QPS_RTS, p.b) == 0);
    p.sim.run();
    wa = p.drain(p.sa);
    REQUIRE(wa.size() == 2);
    CHECK(wa[0].wr_id == 2);
    CHECK(wa[1].wr_id == 3);
    CHECK(wa[0].status == IBV_WC_SUCCESS);
    CHECK(wa[1].status == IBV_WC_SUCCESS);
  }
}

TEST_CASE("SQE: a UD send error stops the send queue only; SQE -> RTS sends again") {
  Pair p(0, IBV_QPT_UD);
  p.ud_ready(0x22);
  verbs::AddressHandle* ah = p.ah_to_b();
  CHECK(p.post_ud(ah, 64, 0x22, 1, p.sa.mr->lkey + 1000) == 0);  // its gather fails
  CHECK(p.post_ud(ah, 64, 0x22, 2) == 0);
  p.sim.run();
  auto wa = p.drain(p.sa);
  REQUIRE(wa.size() == 2);
  CHECK(wa[0].status == IBV_WC_LOC_PROT_ERR);
  CHECK(wa[1].status == IBV_WC_WR_FLUSH_ERR);
  CHECK(p.sa.qp->state() == IBV_QPS_SQE);
  CHECK(p.post_ud(ah, 64, 0x22, 3) == 0);  // posted in SQE: flushed
  p.sim.run();
  wa = p.drain(p.sa);
  REQUIRE(wa.size() == 1);
  CHECK(wa[0].status == IBV_WC_WR_FLUSH_ERR);
  // The receive queue goes on: b's datagram reaches a.
  ibv_ah_attr to_a{};
  to_a.is_global = 1;
  to_a.grh.dgid = p.a.nic().gid();
  verbs::AddressHandle* ah_b = p.b.device().create_ah(p.sb.pd, to_a);
  CHECK(p.post_recv(p.sa, p.sa.buf, 4096, 40) == 0);
  ibv_sge sge{p.sb.buf, 64, p.sb.mr->lkey};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.wr.ud.ah = ah_b;
  wr.wr.ud.remote_qpn = p.sa.qp->qp_num();
  wr.wr.ud.remote_qkey = 0x22;
  CHECK(p.sb.qp->post_send(&wr, nullptr) == 0);
  p.sim.run();
  wa = p.drain(p.sa);
  REQUIRE(wa.size() == 1);
  CHECK(wa[0].wr_id == 40);
  CHECK(wa[0].status == IBV_WC_SUCCESS);
  CHECK(move(*p.sa.qp, IBV_QPS_SQD, p.b) == EINVAL);
  CHECK(move(*p.sa.qp, IBV_QPS_RTS, p.b) == 0);
  CHECK(p.post_recv(p.sb, p.sb.buf, 4096, 50) == 0);
  CHECK(p.post_ud(ah, 64, 0x22, 4) == 0);
  p.sim.run();
  wa = p.drain(p.sa);
  REQUIRE(wa.size() == 1);
  CHECK(wa[0].wr_id == 4);
  CHECK(wa[0].status == IBV_WC_SUCCESS);
  auto wb = p.drain(p.sb);
  REQUIRE(wb.size() == 1);
  CHECK(wb[0].wr_id == 50);
}

TEST_CASE("an RC send error takes the QP to ERR, not SQE; an RC QP has no SQE -> RTS") {
  Pair p;
  p.connect_both();
  ibv_sge sge{p.sa.buf, 64, p.sa.mr->lkey + 1000};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = p.sb.buf;
  wr.wr.rdma.rkey = p.sb.mr->rkey;
  CHECK(p.sa.qp->post_send(&wr, nullptr) == 0);
  CHECK(p.one_completion(p.sa).status == IBV_WC_LOC_PROT_ERR);
  CHECK(p.sa.qp->state() == IBV_QPS_ERR);
}

TEST_CASE(
    "SQE on UC: a message failing halfway stops the send queue; the peer drops the part, takes a later one") {
  Pair p(0, IBV_QPT_UC);
  p.ready();
  CHECK(p.post_recv(p.sb, p.sb.buf, 4096, 60) == 0);
  // Three packets; the second's bytes reach into an SGE with a wrong lkey.
  ibv_sge sges[2] = {{p.sa.buf, 1500, p.sa.mr->lkey}, {p.sa.buf + 1500, 1500, p.sa.mr->lkey + 1000}};
  ibv_send_wr wr{};
  wr.wr_id = 1;
  wr.sg_list = sges;
  wr.num_sge = 2;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  CHECK(p.sa.qp->post_send(&wr, nullptr) == 0);
  p.sim.run();
  auto wa = p.drain(p.sa);
  REQUIRE(wa.size() == 1);
  CHECK(wa[0].status == IBV_WC_LOC_PROT_ERR);
  CHECK(p.sa.qp->state() == IBV_QPS_SQE);
  CHECK(p.drain(p.sb).empty());  // the first packet alone completes nothing
  CHECK(move(*p.sa.qp, IBV_QPS_RTS, p.b) == 0);
  // The next PSN is in sequence but its ONLY does not fit the message b
  // was in: b drops it and the partial message (9.8.3, as rxe does) and
  // takes the one after.
  CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 50, 0, 0, 2) == 0);
  CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 100, 0, 0, 3) == 0);
  p.sim.run();
  wa = p.drain(p.sa);
  REQUIRE(wa.size() == 2);
  CHECK(wa[0].status == IBV_WC_SUCCESS);
  CHECK(wa[1].status == IBV_WC_SUCCESS);
  auto wb = p.drain(p.sb);
  REQUIRE(wb.size() == 1);
  CHECK(wb[0].wr_id == 60);
  CHECK(wb[0].status == IBV_WC_SUCCESS);
  CHECK(wb[0].byte_len == 100);
}
