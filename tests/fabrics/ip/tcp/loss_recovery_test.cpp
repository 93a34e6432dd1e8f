// TcpLossRecovery on its own: the scoreboard and the recovery state machine
// fed by hand, as TcpConnection's input, output and timer feed it.
#include "fabrics/ip/tcp/loss_recovery.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

constexpr uint32_t kMss = 1000;

struct Bed {
  CongestionController cc{CongestionControl::newreno, kMss, 10, 1.0 / 16};
  TcpLossRecovery r{cc};
  uint64_t una = 0, nxt = 0;
  bool sack = false;

  TcpLossRecovery::Sender snd() const { return {una, nxt, kMss, sack}; }
  // `n` full segments sent back to back.
  void send(int n) {
    for (int i = 0; i < n; ++i) {
      TcpLossRecovery::Seg s;
      s.start = nxt;
      s.end = nxt + kMss;
      s.transmissions = 1;
      r.sent(s);
      nxt = s.end;
    }
  }
  TcpLossRecovery::Outcome dupack() {
    r.duplicate_ack(snd());
    TcpLossRecovery::Ack a;
    a.dup = true;
    return r.on_ack(AckSample{Time{}, 0, false, Time{}, una, nxt, true}, a, snd(), Time{});
  }
  TcpLossRecovery::Outcome ack_to(uint64_t off) {
    TcpLossRecovery::Ack a;
    a.acked = off - una;
    r.cumulative_ack(off, a.acked, Time{}, kMss);
    una = off;
    return r.on_ack(AckSample{Time{}, a.acked, false, Time{}, una, nxt, true}, a, snd(), Time{});
  }
  // A SACK option covering stream offsets [l, r) (sequence = offset here).
  uint64_t sack_range(uint64_t l, uint64_t rr) {
    TcpOptions o;
    o.add_sack({static_cast<uint32_t>(l), static_cast<uint32_t>(rr)});
    return r.sack(o, static_cast<uint32_t>(una), snd());
  }
};

}  // namespace

TEST_CASE("loss recovery: three duplicate ACKs start NewReno fast recovery, a full ACK ends it") {
  Bed b;
  b.send(10);
  CHECK(b.r.pipe(b.nxt - b.una) == 10 * kMss);
  CHECK(b.r.next_retransmit() == nullptr);
  CHECK(b.dupack() == TcpLossRecovery::Outcome::open);
  CHECK(b.dupack() == TcpLossRecovery::Outcome::open);
  CHECK(b.dupack() == TcpLossRecovery::Outcome::entered_recovery);  // RFC 5681 3.2
  CHECK(b.r.state() == TcpLossRecovery::State::recovery);
  // The head is lost and goes at once, whatever cwnd says.
  TcpLossRecovery::Seg* s = b.r.next_retransmit();
  REQUIRE(s);
  CHECK(s->start == 0);
  CHECK(b.r.may_retransmit(*s, b.r.pipe(b.nxt - b.una)));
  b.r.retransmitted(*s, Time{});
  CHECK(b.r.next_retransmit() == nullptr);
  // A partial ACK (RFC 6582 step 4): the next segment is lost too.
  CHECK(b.ack_to(kMss) == TcpLossRecovery::Outcome::handled);
  s = b.r.next_retransmit();
  REQUIRE(s);
  CHECK(s->start == kMss);
  b.r.retransmitted(*s, Time{});
  // An ACK of everything sent before recovery began ends it, cwnd = ssthresh.
  CHECK(b.ack_to(b.nxt) == TcpLossRecovery::Outcome::handled);
  CHECK(b.r.state() == TcpLossRecovery::State::open);
  CHECK(b.cc.cwnd() == b.cc.ssthresh());
  CHECK(b.r.empty());
}

TEST_CASE("loss recovery: with SACK a segment is lost once three segments above it are SACKed") {
  Bed b;
  b.sack = true;
  b.send(6);
  CHECK(b.sack_range(2 * kMss, 4 * kMss) == 2 * kMss);
  CHECK(b.r.next_retransmit() == nullptr);  // two above the hole: not yet (RFC 6675 IsLost)
  CHECK(b.sack_range(2 * kMss, 5 * kMss) == kMss);
  // Three SACKed above segments 0 and 1: both lost.
  TcpLossRecovery::Seg* s = b.r.next_retransmit();
  REQUIRE(s);
  CHECK(s->start == 0);
  CHECK(b.r.pipe(b.nxt - b.una) == kMss);  // 6 sent - 3 SACKed - 2 lost
  TcpLossRecovery::Ack a;
  a.newly_sacked = kMss;
  CHECK(b.r.on_ack(AckSample{}, a, b.snd(), Time{}) == TcpLossRecovery::Outcome::entered_recovery);
}

TEST_CASE("loss recovery: a timeout presumes everything not SACKed lost, in order") {
  Bed b;
  b.sack = true;
  b.send(4);
  b.sack_range(kMss, 2 * kMss);
  b.r.timeout(b.nxt);
  CHECK(b.r.state() == TcpLossRecovery::State::loss);
  std::vector<uint64_t> order;
  while (TcpLossRecovery::Seg* s = b.r.next_retransmit()) {
    order.push_back(s->start);
    b.r.retransmitted(*s, Time{});
  }
  CHECK(order == std::vector<uint64_t>{0, 2 * kMss, 3 * kMss});
  // Karn: nothing acked was sent once, so no RTT sample.
  CHECK_FALSE(b.r.cumulative_ack(b.nxt, b.nxt, 1_ns, kMss));
}
