// The IBA transport and the verbs in front of it, on two hosts joined by one
// RoCE v2 link: QP state machine checks, errno of misused verbs, and the
// completion statuses of failed operations.
#include <doctest/doctest.h>

#include "tests/fabrics/iba/transport/qp_pair.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;
using rdmasim::test::Pair;

TEST_CASE("modify_qp enforces the IBA state machine and its required attributes") {
  Pair p;
  verbs::QueuePair* qp = p.sa.qp;
  CHECK(qp->state() == IBV_QPS_RESET);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;  // RESET -> RTR skips INIT
  CHECK(qp->modify(a, IBV_QP_STATE) == EINVAL);
  a.qp_state = IBV_QPS_INIT;  // RC INIT needs PKEY_INDEX, PORT, ACCESS_FLAGS
  a.port_num = 1;
  CHECK(qp->modify(a, IBV_QP_STATE | IBV_QP_PORT) == EINVAL);
  CHECK(qp->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS | IBV_QP_QKEY) ==
        EINVAL);  // QKEY is not an RC attribute
  a.port_num = 2;
  CHECK(qp->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == EINVAL);
  a.port_num = 1;
  CHECK(qp->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
  CHECK(qp->state() == IBV_QPS_INIT);
  // Posting sends before RTS is EINVAL; receives are fine from INIT on.
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 8, p.sb.buf, p.sb.mr->rkey) == EINVAL);
  CHECK(p.post_recv(p.sa, p.sa.buf, 64) == 0);
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  CHECK(qp->modify(a, IBV_QP_STATE | IBV_QP_PATH_MTU) == EINVAL);  // AV, DEST_QPN, RQ_PSN ... missing
  a.qp_state = IBV_QPS_ERR;
  CHECK(qp->modify(a, IBV_QP_STATE) == 0);
  p.sim.run();
  auto wc = p.drain(p.sa);
  REQUIRE(wc.size() == 1);
  CHECK(wc[0].status == IBV_WC_WR_FLUSH_ERR);  // the posted receive is flushed
}

TEST_CASE("verbs misuse returns the errno real verbs return") {
  Pair p;
  verbs::Device& d = p.a.device();
  errno = 0;
  CHECK(d.reg_mr(p.sa.pd, p.sa.buf, 4096, IBV_ACCESS_REMOTE_WRITE) == nullptr);  // needs LOCAL_WRITE
  CHECK(errno == EINVAL);
  CHECK(d.reg_mr(p.sa.pd, 0x1000, 4096, IBV_ACCESS_LOCAL_WRITE) == nullptr);  // not host memory
  CHECK(errno == EFAULT);
  CHECK(d.create_cq(0) == nullptr);
  CHECK(errno == EINVAL);
  p.connect_both();
  // A full send queue: ENOMEM.
  int rc = 0;
  for (int i = 0; i < 200 && rc == 0; ++i)
    rc = p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 8, p.sb.buf, p.sb.mr->rkey);
  CHECK(rc == ENOMEM);
  // Atomics need exactly 8 bytes.
  Pair q;
  q.connect_both();
  CHECK(q.post(q.sa, IBV_WR_ATOMIC_FETCH_AND_ADD, q.sa.buf, 4, q.sb.buf, q.sb.mr->rkey) == EINVAL);
}

TEST_CASE("RDMA WRITE, READ, SEND and atomics move the bytes, across the PSN wrap") {
  Pair p;
  p.connect_both(0xFFFFF0, 0xFFFFFA);  // PSNs wrap at 2^24 during the transfer
  p.fill(p.a, p.sa.buf, 64 << 10, 3);
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 40000, p.sb.buf, p.sb.mr->rkey, 1) == 0);
  p.fill(p.b, p.sb.buf + 100000, 30000, 9);
  CHECK(p.post(p.sa, IBV_WR_RDMA_READ, p.sa.buf + 200000, 30000, p.sb.buf + 100000, p.sb.mr->rkey, 2) == 0);
  CHECK(p.post_recv(p.sb, p.sb.buf + 300000, 8192, 70) == 0);
  CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 5000, 0, 0, 3) == 0);
  CHECK(p.post(p.sa, IBV_WR_ATOMIC_FETCH_AND_ADD, p.sa.buf + 400000, 8, p.sb.buf + 400000, p.sb.mr->rkey,
               4) == 0);
  p.sim.run();
  auto wa = p.drain(p.sa);
  REQUIRE(wa.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(wa[i].status == IBV_WC_SUCCESS);
    CHECK(wa[i].wr_id == i + 1);  // RC completes in order
  }
  CHECK(wa[1].opcode == IBV_WC_RDMA_READ);
  CHECK(wa[3].opcode == IBV_WC_FETCH_ADD);
  CHECK(p.same(p.sa.buf, p.sb.buf, 40000));
  CHECK(p.same(p.sa.buf + 200000, p.sb.buf + 100000, 30000));
  CHECK(p.same(p.sa.buf, p.sb.buf + 300000, 5000));
  uint64_t v = 0;
  std::memcpy(&v, p.b.memory().view(p.sb.buf + 400000, 8).data(), 8);
  CHECK(v == 5);
  auto wb = p.drain(p.sb);
  REQUIRE(wb.size() == 1);
  CHECK(wb[0].status == IBV_WC_SUCCESS);
  CHECK(wb[0].opcode == IBV_WC_RECV);
  CHECK(wb[0].byte_len == 5000);
}

TEST_CASE("a wrong rkey completes with IBV_WC_REM_ACCESS_ERR and flushes the rest") {
  Pair p;
  p.connect_both();
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 100, p.sb.buf, p.sb.mr->rkey ^ 0x100, 1) == 0);
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 100, p.sb.buf, p.sb.mr->rkey, 2) == 0);
  p.sim.run();
  auto wc = p.drain(p.sa);
  REQUIRE(wc.size() == 2);
  CHECK(wc[0].status == IBV_WC_REM_ACCESS_ERR);
  CHECK(wc[1].status == IBV_WC_WR_FLUSH_ERR);
  CHECK(p.sa.qp->state() == IBV_QPS_ERR);
  // In the error state new work is flushed at once.
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 100, p.sb.buf, p.sb.mr->rkey, 3) == 0);
  CHECK(p.one_completion(p.sa).status == IBV_WC_WR_FLUSH_ERR);
}

TEST_CASE("a READ outside the region and a misaligned atomic fail as real hardware fails them") {
  Pair p;
  p.connect_both();
  CHECK(p.post(p.sa, IBV_WR_RDMA_READ, p.sa.buf, 4096, p.sb.buf + (1 << 20) - 100, p.sb.mr->rkey) == 0);
  p.sim.run();
  auto wc = p.drain(p.sa);
  REQUIRE(wc.size() == 1);
  CHECK(wc[0].status == IBV_WC_REM_ACCESS_ERR);

  Pair q;
  q.connect_both();
  CHECK(q.post(q.sa, IBV_WR_ATOMIC_CMP_AND_SWP, q.sa.buf, 8, q.sb.buf + 4, q.sb.mr->rkey) == 0);
  CHECK(q.one_completion(q.sa).status == IBV_WC_REM_INV_REQ_ERR);
}

TEST_CASE("SEND without a posted receive: RNR NAKs, then IBV_WC_RNR_RETRY_EXC_ERR") {
  Pair p;
  p.connect_both(100, 200, /*rnr_retry=*/1);
  CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 100, 0, 0) == 0);
  CHECK(p.one_completion(p.sa).status == IBV_WC_RNR_RETRY_EXC_ERR);
  CHECK(p.b.nic().device().qps().size() == 1);
}

TEST_CASE("SEND without a receive succeeds once the receiver posts one (RNR retry)") {
  Pair p;
  p.connect_both(100, 200, /*rnr_retry=*/7);
  CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 100, 0, 0) == 0);
  p.sim.run(Time::us(50));
  CHECK(p.drain(p.sa).empty());
  CHECK(p.post_recv(p.sb, p.sb.buf, 4096) == 0);
  CHECK(p.one_completion(p.sa).status == IBV_WC_SUCCESS);
}

TEST_CASE("a receive buffer too small: local length error there, invalid request here") {
  Pair p;
  p.connect_both();
  CHECK(p.post_recv(p.sb, p.sb.buf, 10) == 0);
  CHECK(p.post(p.sa, IBV_WR_SEND, p.sa.buf, 100, 0, 0) == 0);
  p.sim.run();
  auto wa = p.drain(p.sa);
  auto wb = p.drain(p.sb);
  REQUIRE(wa.size() == 1);
  REQUIRE(wb.size() == 1);
  CHECK(wa[0].status == IBV_WC_REM_INV_REQ_ERR);
  CHECK(wb[0].status == IBV_WC_LOC_LEN_ERR);
}

TEST_CASE("under 5% loss go-back-N still delivers every byte in order") {
  Pair p(0.05);
  p.connect_both();
  p.fill(p.a, p.sa.buf, 1 << 19, 1);
  for (uint64_t i = 0; i < 8; ++i)
    CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf + i * 65536, 65536, p.sb.buf + i * 65536, p.sb.mr->rkey,
                 i) == 0);
  p.sim.run();
  auto wc = p.drain(p.sa);
  REQUIRE(wc.size() == 8);
  for (const auto& w : wc) CHECK(w.status == IBV_WC_SUCCESS);
  CHECK(p.same(p.sa.buf, p.sb.buf, 1 << 19));
  CHECK(p.a.port(0).stats().drops + p.b.port(0).stats().drops > 0);
}

TEST_CASE("a dead link exhausts retry_cnt: IBV_WC_RETRY_EXC_ERR") {
  Pair p;
  p.connect_both(100, 200, 7, /*retry_cnt=*/2);
  Port::set_link_up(p.a.port(0), false);
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 100, p.sb.buf, p.sb.mr->rkey, 1) == 0);
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 100, p.sb.buf, p.sb.mr->rkey, 2) == 0);
  p.sim.run();
  auto wc = p.drain(p.sa);
  REQUIRE(wc.size() == 2);
  CHECK(wc[0].status == IBV_WC_RETRY_EXC_ERR);
  CHECK(wc[1].status == IBV_WC_WR_FLUSH_ERR);
  // 1 try + 2 retries, each with a 4.096us * 2^10 timeout.
  CHECK(p.sim.now() >= Time::ns(4096) * 1024 * 3);
}

TEST_CASE("UD: a datagram with the wrong Q_Key is dropped silently") {
  Pair p(0, IBV_QPT_UD);
  p.ud_ready(0x1234);
  verbs::AddressHandle* h = p.ah_to_b();
  CHECK(p.post_recv(p.sb, p.sb.buf, 4096) == 0);
  for (uint32_t qkey : {0x9999u, 0x1234u}) CHECK(p.post_ud(h, 64, qkey, qkey) == 0);
  p.sim.run();
  auto wb = p.drain(p.sb);
  REQUIRE(wb.size() == 1);  // only the matching Q_Key arrived
  CHECK(wb[0].status == IBV_WC_SUCCESS);
  CHECK(wb[0].byte_len == 64 + 40);  // GRH + payload
  CHECK((wb[0].wc_flags & IBV_WC_GRH) != 0);
  CHECK(wb[0].src_qp == p.sa.qp->qp_num());
}
