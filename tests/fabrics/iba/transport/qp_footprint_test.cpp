// What a queue pair holds: an idle connected RC pair costs its objects and
// nothing per configured queue depth; queues grow with what is posted and
// in flight (issue 12: 10^5 QPs on one machine).
#include <doctest/doctest.h>
#include <malloc.h>

#include "tests/fabrics/iba/transport/qp_pair.hpp"

using namespace rdmasim;
using rdmasim::test::Pair;

namespace {
size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}
}  // namespace

TEST_CASE("an idle connected RC QP pair, both ends, holds under 2 KiB") {
  Pair p;
  p.connect_both();
  constexpr int kPairs = 256;
  verbs::QpInitAttr big;  // the configured maximum must not matter
  big.cap.max_send_wr = big.cap.max_recv_wr = 16384;
  big.cap.max_send_sge = big.cap.max_recv_sge = 16;
  const size_t before = heap_in_use();
  for (int i = 0; i < kPairs; ++i) {
    Pair::Side sa = p.sa, sb = p.sb;
    big.send_cq = big.recv_cq = p.sa.cq;
    sa.qp = p.a.device().create_qp(sa.pd, big);
    big.send_cq = big.recv_cq = p.sb.cq;
    sb.qp = p.b.device().create_qp(sb.pd, big);
    REQUIRE((sa.qp && sb.qp));
    Pair::connect(sa, p.b, sb, 1, 2);
    Pair::connect(sb, p.a, sa, 2, 1);
    REQUIRE(sa.qp->state() == IBV_QPS_RTS);
  }
  const size_t bytes = heap_in_use() - before;
  if (bytes == 0) {
    MESSAGE("this allocator keeps no malloc statistics (a sanitizer build): not measured");
    return;
  }
  MESSAGE("bytes per idle connected RC QP pair: " << bytes / kPairs);
  CHECK(bytes / kPairs < 2048);
}

TEST_CASE(
    "a QP's queues grow past their first block and keep order: many WRITEs, READs and SENDs in flight") {
  Pair p;
  p.connect_both();
  constexpr int kOps = 100;  // far beyond every ring's first block
  for (int i = 0; i < kOps; ++i) {
    REQUIRE(p.post_recv(p.sb, p.sb.buf + 0x80000 + i * 64, 64, 1000 + i) == 0);
  }
  p.fill(p.a, p.sa.buf, 0x10000, 3);
  int posted = 0;
  for (int i = 0; i < kOps; ++i) {
    const uint64_t off = uint64_t(i) * 512;
    const ibv_wr_opcode op = i % 3 == 0 ? IBV_WR_RDMA_WRITE : i % 3 == 1 ? IBV_WR_SEND : IBV_WR_RDMA_READ;
    const uint64_t local = op == IBV_WR_RDMA_READ ? p.sa.buf + 0x40000 + off : p.sa.buf + off;
    const uint64_t remote = op == IBV_WR_RDMA_READ ? p.sb.buf + 0x40000 + off : p.sb.buf + off;
    if (op == IBV_WR_RDMA_READ) p.fill(p.b, remote, 512, static_cast<uint8_t>(i));
    REQUIRE(p.post(p.sa, op, local, op == IBV_WR_SEND ? 64 : 512, remote, p.sb.mr->rkey, i) == 0);
    ++posted;
  }
  p.sim.run();
  std::vector<ibv_wc> wcs;
  for (auto batch = p.drain(p.sa); !batch.empty(); batch = p.drain(p.sa))
    wcs.insert(wcs.end(), batch.begin(), batch.end());
  REQUIRE(wcs.size() == size_t(posted));
  for (int i = 0; i < kOps; ++i) {
    CHECK(wcs[i].status == IBV_WC_SUCCESS);
    CHECK(wcs[i].wr_id == uint64_t(i));  // completions in posting order
  }
  for (int i = 0; i < kOps; ++i) {
    const uint64_t off = uint64_t(i) * 512;
    if (i % 3 == 0) CHECK(p.same(p.sa.buf + off, p.sb.buf + off, 512));
    if (i % 3 == 2) CHECK(p.same(p.sa.buf + 0x40000 + off, p.sb.buf + 0x40000 + off, 512));
  }
  CHECK(p.iba(p.sa).in_flight_bytes() == 0);
}
