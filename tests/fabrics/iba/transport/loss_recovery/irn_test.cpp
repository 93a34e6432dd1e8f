// IRN's bookkeeping (Mittal et al., SIGCOMM 2018, section 3): the PSN
// bitmap, the sender's loss recovery and retransmission choice, BDP-FC and
// the two timeouts; and the extension header's bytes.
#include "fabrics/iba/transport/loss_recovery/irn.hpp"

#include <doctest/doctest.h>

#include <array>
#include <deque>

#include "fabrics/ip/wire/irn_option.hpp"
#include "tests/fabrics/iba/transport/qp_pair.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

TEST_CASE("PsnBitmap: set, test and the window, across the 24-bit wrap") {
  PsnBitmap b(100, 0xFFFFF0);
  CHECK(b.capacity() == 100);
  CHECK(b.set(0xFFFFF0));
  CHECK(b.set(0x000005));                          // 21 past the base, beyond the wrap
  CHECK_FALSE(b.set(0xFFFFF0 + 100 - 0x1000000));  // one past the window (psn 0x54)
  CHECK_FALSE(b.set(0xFFFFEF));                    // before the base
  CHECK(b.test(0xFFFFF0));
  CHECK(b.test(0x000005));
  CHECK_FALSE(b.test(0x000004));
  CHECK(b.first_clear(0xFFFFF0, 0x000006) == 0xFFFFF1);
  b.advance_to(0x000005);
  CHECK(b.base() == 0x000005);
  CHECK_FALSE(b.test(0xFFFFF0));  // behind the base now
  CHECK(b.test(0x000005));        // kept
  // The slots it passed are clear when the window comes round to them again.
  b.advance_to(0x000005 + 100);
  CHECK_FALSE(b.test(0x000005 + 100));
  CHECK(b.set(0x000005 + 199));
  CHECK_FALSE(b.set(0x000005 + 200));
  b.advance_to(0x000005);  // never backwards
  CHECK(b.base() == 0x000005 + 100);
}

TEST_CASE("PsnBitmap: advancing past the whole window clears it") {
  PsnBitmap b(64, 10);
  for (uint32_t p = 10; p < 74; ++p) CHECK(b.set(p));
  b.advance_to(500);
  CHECK(b.first_clear(500, 564) == 500u);
  CHECK_FALSE(b.first_clear(500, 500).has_value());
}

TEST_CASE("IRN sender: a NACK starts recovery; holes below the highest SACK go again, once each") {
  IrnConfig c;
  IrnSender s(c, 32, 100);
  CHECK_FALSE(s.next_retransmit().has_value());
  // Sent 100..109; 101 and 103 lost; the receiver NACKs 102 (cum 101), then 104 and 105.
  s.on_cumulative(101);
  s.on_nack(101, 102, 110);
  CHECK(s.in_recovery());
  CHECK(s.next_retransmit() == 101u);  // the cumulative PSN first
  s.retransmitted(101);
  CHECK_FALSE(s.next_retransmit().has_value());  // 103 not known lost yet: nothing above it acked
  s.on_nack(101, 104, 110);
  CHECK(s.next_retransmit() == 103u);  // 102 was SACKed: skipped
  s.retransmitted(103);
  s.on_nack(101, 105, 110);
  CHECK_FALSE(s.next_retransmit().has_value());  // 104 SACKed, 103 already sent again
  // The retransmitted 101 arrives: cumulative 103 (102 was there); still in recovery (recovery PSN 109).
  s.on_cumulative(103);
  CHECK(s.in_recovery());
  CHECK_FALSE(s.next_retransmit().has_value());
  s.on_cumulative(110);  // past the recovery sequence: recovery ends
  CHECK_FALSE(s.in_recovery());
  CHECK(s.cumulative() == 110u);
}

TEST_CASE("IRN sender: a timeout takes every unacknowledged packet not SACKed for lost") {
  IrnConfig c;
  IrnSender s(c, 32, 0);
  s.on_nack(0, 2, 6);  // 0 and 1 missing, 2 SACKed, 3..5 in flight
  s.retransmitted(0);
  s.retransmitted(1);
  CHECK_FALSE(s.next_retransmit().has_value());
  s.on_timeout(6);
  CHECK(s.next_retransmit() == 0u);
  s.retransmitted(0);
  CHECK(s.next_retransmit() == 1u);
  s.retransmitted(1);
  CHECK(s.next_retransmit() == 3u);  // 2 was SACKed
  s.retransmitted(3, 3);             // a READ request covering 3..5
  CHECK_FALSE(s.next_retransmit().has_value());
}

TEST_CASE("IRN sender: BDP-FC caps the packets in flight; RTO_low for a few, RTO_high otherwise") {
  IrnConfig c;  // rto_low 100us, rto_high 320us, N = 3 (the paper's)
  IrnSender s(c, 4, 1000);
  CHECK(s.may_send_new(1000));
  CHECK(s.may_send_new(1003));
  CHECK_FALSE(s.may_send_new(1004));  // 4 unacknowledged: the cap
  s.on_cumulative(1002);
  CHECK(s.may_send_new(1005));
  CHECK_FALSE(s.may_send_new(1006));
  CHECK(s.rto(1005) == 100_us);  // 3 in flight
  CHECK(s.rto(1006) == 320_us);  // 4
}

TEST_CASE("IRN: BDP-FC's cap from the line rate and base RTT") {
  IrnConfig c;
  c.base_rtt = 10_us;
  CHECK(irn_bdp_packets(c, DataRate(100'000'000'000), 4096) == 31);  // 125000 bytes
  CHECK(irn_bdp_packets(c, DataRate(25'000'000'000), 1024) == 31);   // 31250 bytes
  CHECK(irn_bdp_packets(c, DataRate(1'000'000), 4096) == 1);         // at least one
  c.bdp_packets = 7;
  CHECK(irn_bdp_packets(c, DataRate(100'000'000'000), 4096) == 7);
}

TEST_CASE("IrnOption: the bytes of a WRITE packet's extension header, and back") {
  std::array<std::byte, IrnOption::kLen> b{};
  IrnExt e;
  e.kind = IrnExt::Write;
  e.sn = 0x01020304;
  e.offset = 0x2000;
  e.va = 0x1122334455667788;
  e.rkey = 0xAABBCCDD;
  e.dma_len = 0x10000;
  IrnOption::emit(b, e);
  const std::array<uint8_t, IrnOption::kLen> want = {
      0x1E, 28,   1,    0,    0x01, 0x02, 0x03, 0x04, 0x00, 0x00, 0x20, 0x00, 0x11, 0x22,
      0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x01, 0x00, 0x00};
  for (size_t i = 0; i < want.size(); ++i) CHECK(u8(b[i]) == want[i]);
  CHECK(IrnOption::parse(b) == e);
  b[2] = std::byte{9};  // an unknown kind is not IRN's
  CHECK_FALSE(IrnOption::parse(b).has_value());
  b[2] = std::byte{1};
  b[0] = std::byte{0x5E};  // HPCC's option
  CHECK_FALSE(IrnOption::parse(b).has_value());
}

TEST_CASE("IRN READ: the holes before a placed response are asked for once each") {
  // A READ of 10 packets at PSNs 100..109. Responses 100 and 101 came in
  // order (expected 102); 104 and 107 came beyond it.
  std::deque<IrnReadAsk> asks;
  IrnReadRx rd(100, 10);
  CHECK(rd.got.set(104));
  CHECK(rd.ask_holes(102, 104, asks));  // 102 and 103: one hole
  REQUIRE(asks.size() == 1);
  CHECK(asks[0].read == 100);
  CHECK(asks[0].psn == 102);
  CHECK(asks[0].end == 104);
  CHECK(rd.got.set(107));
  CHECK(rd.ask_holes(102, 107, asks));  // only 105 and 106 are new: 102, 103 were asked
  REQUIRE(asks.size() == 2);
  CHECK(asks[1].psn == 105);
  CHECK(asks[1].end == 107);
  CHECK_FALSE(rd.ask_holes(102, 107, asks));  // asked already: nothing more
  // An ACK beyond the READ: everything not placed to its end is missing.
  CHECK(rd.ask_holes(102, 110, asks));
  REQUIRE(asks.size() == 3);
  CHECK(asks[2].psn == 108);
  CHECK(asks[2].end == 110);
  // After a timeout the bookkeeping starts asking again from the READ's start;
  // placed PSNs split the holes.
  rd.asked_end = rd.first;
  asks.clear();
  CHECK(rd.ask_holes(102, 110, asks));
  REQUIRE(asks.size() == 3);
  CHECK((asks[0].psn == 102 && asks[0].end == 104));
  CHECK((asks[1].psn == 105 && asks[1].end == 107));
  CHECK((asks[2].psn == 108 && asks[2].end == 110));
}

TEST_CASE("IRN READ: holes across the 24-bit PSN wrap") {
  std::deque<IrnReadAsk> asks;
  IrnReadRx rd(0xFFFFFE, 6);  // PSNs 0xFFFFFE .. 0x000003
  CHECK(rd.got.set(0x000001));
  CHECK(rd.ask_holes(0xFFFFFE, 0x000001, asks));
  REQUIRE(asks.size() == 1);
  CHECK(asks[0].psn == 0xFFFFFE);
  CHECK(asks[0].end == 0x000001);
}

TEST_CASE(
    "IRN: RTO_low and RTO_high retransmit without spending retry_cnt; a stall spends it per ACK timeout") {
  // Link down for 3 ms: IRN's timers fire every 100 to 320 us meanwhile,
  // far more often than retry_cnt (2). The WRITE completes once the link is back.
  test::IrnPair p(2);
  p.fill(p.a, p.sa.buf, 65536, 3);
  CHECK(p.post(p.sa, IBV_WR_RDMA_WRITE, p.sa.buf, 65536, p.sb.buf, p.sb.mr->rkey, 1) == 0);
  p.sim.at(Time::us(1), [&] { Port::set_link_up(p.a.port(0), false); });
  p.sim.at(Time::ms(3), [&] { Port::set_link_up(p.a.port(0), true); });
  p.sim.run();
  auto wc = p.drain(p.sa);
  REQUIRE(wc.size() == 1);
  CHECK(wc[0].status == IBV_WC_SUCCESS);
  CHECK(p.same(p.sa.buf, p.sb.buf, 65536));
  CHECK(p.iba(p.sa).stats().timeouts > 2);

  // A link that stays down: the QP fails as a go-back-N QP with the same
  // attributes does, after retry_cnt + 1 local ACK timeouts without progress.
  test::IrnPair dead(2);
  Port::set_link_up(dead.a.port(0), false);
  CHECK(dead.post(dead.sa, IBV_WR_RDMA_WRITE, dead.sa.buf, 100, dead.sb.buf, dead.sb.mr->rkey, 1) == 0);
  Time failed;
  dead.sim.run();
  failed = dead.sim.last_event_time();
  auto wd = dead.drain(dead.sa);
  REQUIRE(wd.size() == 1);
  CHECK(wd[0].status == IBV_WC_RETRY_EXC_ERR);
  const Time ack_timeout = Time::ns(4096) * 1024;
  CHECK(failed >= ack_timeout * 3);
  CHECK(failed <= ack_timeout * 3 + dead.irn.rto_high);
}
