// The loss recovery seam (loss_recovery.hpp): the same QP roles, the same
// packets, and what each strategy decides at the point the roles ask it.
// Packets are injected straight into a NIC; the link is down, so that
// nothing else arrives.
#include "fabrics/iba/transport/loss_recovery/loss_recovery.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "tests/fabrics/iba/transport/qp_pair.hpp"

using namespace rdmasim;
using rdmasim::test::Pair;

namespace {

// a sends a WRITE of 8 packets (PSNs 100..107), all lost; then b's NACK
// says 102 is expected and 104 arrived (its SACK). The PSNs a sends next,
// before any retransmission timer fires.
std::vector<uint32_t> sent_after_nack(Pair& p) {
  auto sent = Pair::record_bth(p.a);
  Port::set_link_up(p.a.port(0), false);
  REQUIRE(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 8 * 1024, p.sb.buf, p.sb.mr->rkey) == 0);
  p.sim.run(Time::us(20));
  REQUIRE(sent->size() == 8);
  sent->clear();
  IbaHeaders h;
  h.opcode = RC_ACKNOWLEDGE;
  h.psn = 102;
  h.syndrome = 0x60;  // NAK: PSN sequence error (IBA 9.3.5)
  IrnExt sack;
  sack.kind = IrnExt::Sack;
  sack.sn = 104;
  Pair::inject_from(p.b, p.sb, p.a, p.sa, h, 0, &sack);
  p.sim.run(Time::us(40));
  std::vector<uint32_t> psns;
  for (const Pair::SentBth& s : *sent) psns.push_back(s.psn);
  return psns;
}

// b expects PSN 100; WRITE ONLY requests of 64 bytes at 102, then 100 and
// 101, arrive with IRN's extension header. What b answers.
std::vector<Pair::SentBth> answers_to_gap(Pair& p) {
  auto sent = Pair::record_bth(p.b);
  Port::set_link_up(p.a.port(0), false);
  p.fill(p.b, p.sb.buf, 3 * 64, 1);
  IbaHeaders h;
  h.opcode = RC_RDMA_WRITE_ONLY;
  h.ack_req = true;
  h.rkey = p.sb.mr->rkey;
  h.dma_len = 64;
  IrnExt e;
  e.kind = IrnExt::Write;
  e.rkey = h.rkey;
  e.dma_len = h.dma_len;
  for (uint32_t psn : {102u, 100u, 101u}) {
    h.psn = psn;
    h.va = e.va = p.sb.buf + 64 * (psn - 100);
    Pair::inject_from(p.a, p.sa, p.b, p.sb, h, 64, &e);
  }
  p.sim.run();
  return *sent;
}

}  // namespace

TEST_CASE("loss recovery: after a NACK for a hole IRN sends the hole again, go-back-N everything from it") {
  Pair gbn;
  gbn.connect_both();
  CHECK(sent_after_nack(gbn) == std::vector<uint32_t>{102, 103, 104, 105, 106, 107});
  test::IrnPair irn;
  CHECK(sent_after_nack(irn) == std::vector<uint32_t>{102, 103});  // 104 was SACKed
}

TEST_CASE("loss recovery: a request beyond the expected PSN is NAKed by go-back-N, placed by IRN") {
  Pair gbn;
  gbn.connect_both();
  auto g = answers_to_gap(gbn);
  REQUIRE(g.size() >= 2);
  CHECK((g.front().syndrome == 0x60 && g.front().psn == 100));  // the gap, NAKed once
  CHECK(g.back().psn == 101);                                   // 102 must come again
  CHECK(gbn.b.memory().view(gbn.sb.buf + 128, 1)[0] != std::byte{0});

  test::IrnPair irn;
  auto i = answers_to_gap(irn);
  REQUIRE(i.size() >= 2);
  CHECK((i.front().syndrome == 0x60 && i.front().psn == 100));         // a NACK (with a SACK of 102)
  CHECK((i.back().psn == 102 && i.back().syndrome == 0x1F));           // 101 filled the hole: 102 is acked
  CHECK(irn.b.memory().view(irn.sb.buf + 128, 1)[0] == std::byte{0});  // placed on arrival
}

TEST_CASE("loss recovery: IRN's strategy is made for RC QPs only; go-back-N is shared") {
  IrnConfig c;
  CHECK(make_loss_recovery(&c, IBV_QPT_RC) != nullptr);
  CHECK(make_loss_recovery(&c, IBV_QPT_UC) == nullptr);
  CHECK(make_loss_recovery(nullptr, IBV_QPT_RC) == nullptr);
  CHECK(&go_back_n() == &go_back_n());
}
