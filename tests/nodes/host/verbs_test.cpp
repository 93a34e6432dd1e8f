// The verbs layer a program sees (nodes/host/verbs.hpp), on RoCE v2 hosts:
// memory registration rules, the QP state machine's checks, posting in the
// wrong state or past the queue's depth, and an RDMA WRITE that moves bytes
// from one host's memory to the other's and completes.
#include "nodes/host/verbs.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <cstring>

#include "tests/fixtures/network.hpp"
#include "tests/fixtures/verbs_end.hpp"

using namespace rdmasim;

namespace {

struct Hosts {
  test::BuiltNetwork n{test::two_hosts("roce_v2")};
  verbs::Device& dev(int i) { return n.host(i).device(); }
};

}  // namespace

TEST_CASE("verbs: memory registration checks access and range (ibv_reg_mr(3))") {
  Hosts h;
  verbs::Device& d = h.dev(0);
  verbs::ProtectionDomain* pd = d.alloc_pd();
  const uint64_t buf = h.n.host(0).memory().allocate(8192);
  errno = 0;
  CHECK(d.reg_mr(pd, buf, 4096, IBV_ACCESS_REMOTE_WRITE) == nullptr);  // needs local write (IBA 10.6.3.1)
  CHECK(errno == EINVAL);
  CHECK(d.reg_mr(pd, buf, 4096, IBV_ACCESS_REMOTE_ATOMIC) == nullptr);
  errno = 0;
  CHECK(d.reg_mr(pd, buf + 4096, 8192, IBV_ACCESS_LOCAL_WRITE) == nullptr);  // past the buffer
  CHECK(errno == EFAULT);
  CHECK(d.reg_mr(nullptr, buf, 4096, IBV_ACCESS_LOCAL_WRITE) == nullptr);
  verbs::MemoryRegion* a = d.reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  verbs::MemoryRegion* b = d.reg_mr(pd, buf + 4096, 4096, IBV_ACCESS_LOCAL_WRITE);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->lkey != b->lkey);
  CHECK(a->rkey != a->lkey);
  CHECK(d.mr_by_lkey(b->lkey) == b);
  CHECK(d.dereg_mr(b) == 0);
  CHECK(d.mr_by_lkey(b->lkey) == nullptr);
}

TEST_CASE("verbs: ibv_modify_qp follows the QP state machine and its attribute masks") {
  Hosts h;
  test::VerbsEnd a = test::make_end(h.n.host(0));
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_RTS;
  CHECK(a.qp->modify(at, IBV_QP_STATE) == EINVAL);  // RESET -> RTS is no transition
  at = {};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  CHECK(a.qp->modify(at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT) == EINVAL);  // access flags required
  at.port_num = 2;
  CHECK(a.qp->modify(at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == EINVAL);
  CHECK(a.qp->state() == IBV_QPS_RESET);
  at.port_num = 1;
  CHECK(a.qp->modify(at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
  CHECK(a.qp->state() == IBV_QPS_INIT);
  ibv_qp_attr q{};
  CHECK(a.qp->query(q) == 0);
  CHECK(q.qp_state == IBV_QPS_INIT);
}

TEST_CASE("verbs: posting before RTS is EINVAL; a full send queue is ENOMEM") {
  Hosts h;
  test::VerbsEnd a = test::make_end(h.n.host(0));
  test::VerbsEnd b = test::make_end(h.n.host(1));
  CHECK(test::post_send(a, IBV_WR_SEND, 0, 64) == EINVAL);
  test::connect_ends(h.n.fabric, a, b);
  const uint32_t depth = a.qp->init_attr().cap.max_send_wr;
  for (uint32_t i = 0; i < depth; ++i)
    REQUIRE(test::post_send(a, IBV_WR_RDMA_WRITE, 0, 64, b.buf, b.mr->rkey, i) == 0);
  CHECK(test::post_send(a, IBV_WR_RDMA_WRITE, 0, 64, b.buf, b.mr->rkey) == ENOMEM);
  h.n.net.sim.run();
  ibv_wc wc[256];
  CHECK(a.cq->poll(256, wc) == static_cast<int>(depth));
  CHECK(a.cq->poll(256, wc) == 0);
}

TEST_CASE("verbs: an RDMA WRITE puts the sender's bytes into the receiver's memory and completes") {
  Hosts h;
  test::VerbsEnd a = test::make_end(h.n.host(0));
  test::VerbsEnd b = test::make_end(h.n.host(1));
  test::connect_ends(h.n.fabric, a, b);
  auto src = a.mem(0, 5000);
  for (size_t i = 0; i < src.size(); ++i) src[i] = std::byte(i * 7);
  REQUIRE(test::post_send(a, IBV_WR_RDMA_WRITE, 0, 5000, b.buf + 100, b.mr->rkey, 42) == 0);
  h.n.net.sim.run();
  ibv_wc wc{};
  REQUIRE(a.cq->poll(1, &wc) == 1);
  CHECK(wc.wr_id == 42);
  CHECK(wc.status == IBV_WC_SUCCESS);
  CHECK(wc.opcode == IBV_WC_RDMA_WRITE);
  CHECK(std::memcmp(b.mem(100, 5000).data(), src.data(), 5000) == 0);
  CHECK(b.cq->poll(1, &wc) == 0);  // a WRITE without immediate completes only at the sender
}
