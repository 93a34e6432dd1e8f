// IwarpEndpoint end to end: MPA startup, RDMA Write / Read / Send with exact
// bytes (also with markers and across loss), and Terminate for the errors
// RFC 5040 and RFC 5041 name.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fabrics/iwarp/mpa.hpp"
#include "tests/fabrics/iwarp/iwarp_testbed.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;
using namespace rdmasim::iwarp_test;

namespace {

std::vector<std::byte> text(const std::string& s) {
  std::vector<std::byte> v;
  for (char c : s) v.push_back(std::byte(static_cast<uint8_t>(c)));
  return v;
}

IwarpConfig config(bool markers = false, bool crc = true) {
  IwarpConfig c;
  c.markers = markers;
  c.crc = crc;
  return c;
}

}  // namespace

TEST_CASE("iwarp: MPA startup settles CRCs and markers and carries private data") {
  IwarpConfig ca = config(true, false), cb = config(false, true);
  ca.private_data = text("hello");
  cb.private_data = text("world!");
  IwarpPair p(ca, cb, link(10, 1_us), link(10, 1_us));
  p.t.sim.run(100_us);
  REQUIRE(p.a->phase() == IwarpEndpoint::Phase::full_operation);
  REQUIRE(p.b->phase() == IwarpEndpoint::Phase::full_operation);
  CHECK(p.ea.established);
  CHECK(p.eb.established);
  CHECK(p.ea.peer_pd == text("world!"));
  CHECK(p.eb.peer_pd == text("hello"));
  // CRCs when either side asks; markers toward whoever asked.
  CHECK(p.a->crc_enabled());
  CHECK(p.b->crc_enabled());
  CHECK(p.a->markers_from_peer());
  CHECK(p.b->markers_to_peer());
  CHECK(!p.a->markers_to_peer());
  CHECK(!p.b->markers_from_peer());
  CHECK(p.a->mulpdu() == 1454);
  CHECK(p.b->mulpdu() == 1442);
  // The first FPDU of each side follows its frame: 20 + IRD/ORD (Rev 2) + private data bytes.
  CHECK(p.a->mpa_revision() == 2);
  CHECK(p.a->stream_info().first_fpdu_seq == p.t.a->iss() + 1 + 29);
  CHECK(p.b->stream_info().first_fpdu_seq == p.t.b->iss() + 1 + 30);
}

// RFC 6581: each end offers IRD and ORD; neither then sends more Read
// Requests than the other serves. Without the negotiation a's ORD of 8
// would overrun b's IRD of 2 and b would terminate the stream.
TEST_CASE("iwarp: MPA revision 2 negotiates IRD and ORD") {
  IwarpConfig ca = config(), cb = config();
  ca.ord = 8;
  ca.ird = 4;
  cb.ord = 16;
  cb.ird = 2;
  ca.private_data = text("hi");
  IwarpPair p(ca, cb, link(10, 1_us), link(10, 1_us));
  auto& src = p.mb.add(0x201, 0, 64 << 10, true, false);
  src.bytes = pattern_bytes(64 << 10, 3);
  p.ma.add(0x101, 0, 64 << 10, false, false);
  for (int i = 0; i < 8; ++i)
    p.a->post_read(i, 0x101, static_cast<uint64_t>(i) * 8192, 8192, 0x201, static_cast<uint64_t>(i) * 8192);
  p.t.sim.run(100_ms);
  CHECK(p.a->mpa_revision() == 2);
  CHECK(p.b->mpa_revision() == 2);
  CHECK(p.a->ord() == 2);             // b serves 2
  CHECK(p.b->ord() == 4);             // a serves 4
  CHECK(p.eb.peer_pd == text("hi"));  // IRD/ORD are not the ULP's private data
  CHECK(p.eb.terms.empty());
  CHECK(p.ea.reads_done.size() == 8);
  CHECK(p.ma.regions[0x101].bytes == src.bytes);
}

TEST_CASE("iwarp: a revision 1 peer gets revision 1 and nothing is negotiated") {
  for (bool initiator_v1 : {true, false}) {
    CAPTURE(initiator_v1);
    IwarpConfig ca = config(), cb = config();
    (initiator_v1 ? ca : cb).mpa_revision = 1;
    ca.ord = 8;
    cb.ird = 2;
    cb.private_data = text("v");
    IwarpPair p(ca, cb, link(10, 1_us), link(10, 1_us));
    p.t.sim.run(1_ms);
    REQUIRE(p.ea.established);
    CHECK(p.a->mpa_revision() == 1);
    CHECK(p.b->mpa_revision() == 1);
    CHECK(p.a->ord() == 8);
    CHECK(p.ea.peer_pd == text("v"));
    CHECK(p.a->stream_info().first_fpdu_seq == p.t.a->iss() + 1 + 20 + (initiator_v1 ? 0 : 4));
  }
}

TEST_CASE("iwarp: a rejected connection is reported and closed") {
  IwarpConfig cb = config();
  cb.reject = true;
  cb.private_data = text("busy");
  IwarpPair p(config(), cb, link(10, 1_us), link(10, 1_us));
  p.t.sim.run(10_ms);
  CHECK(p.ea.rejected);
  CHECK(!p.ea.established);
  CHECK(p.ea.peer_pd == text("busy"));
  CHECK(p.t.a->state() == TcpState::closed);
  CHECK(p.t.b->state() == TcpState::closed);
}

TEST_CASE("iwarp: Write, Read and Send move exact bytes") {
  struct Case {
    bool markers;
    double loss;
  };
  for (Case c : {Case{false, 0}, Case{true, 0}, Case{false, 0.01}, Case{true, 0.01}}) {
    CAPTURE(c.markers);
    CAPTURE(c.loss);
    IwarpPair p(config(c.markers), config(c.markers), link(10, 2_us, 4 << 20, c.loss),
                link(10, 2_us, 4 << 20, c.loss), TcpEndpointConfig{}, 3);
    constexpr size_t kLen = 1 << 20;
    // b exposes one region for RDMA Write and one for RDMA Read.
    p.mb.add(0x200, 0x10000, kLen, false, true);
    auto& src = p.mb.add(0x201, 0x900000, kLen, true, false);
    src.bytes = pattern_bytes(kLen, 77);
    auto& sink = p.ma.add(0x101, 0x5000, kLen, false, false);  // local only
    (void)sink;

    const auto wdata = pattern_bytes(kLen, 5);
    const auto s1 = pattern_bytes(3000, 9), s2 = pattern_bytes(100, 11);
    std::vector<std::byte> r1(4096), r2(4096), r3(4096);
    p.b->post_recv(31, r1);
    p.b->post_recv(32, r2);
    p.b->post_recv(33, r3);

    p.a->post_write(1, wdata, 0x200, 0x10000);
    p.a->post_read(2, 0x101, 0x5000, kLen, 0x201, 0x900000);
    p.a->post_send(3, s1);
    p.a->post_send(4, s2, /*solicited=*/true);
    p.a->post_send(5, BufferPiece{});
    p.t.sim.run(2_s);

    CHECK(p.mb.regions[0x200].bytes == wdata);
    CHECK(p.ma.regions[0x101].bytes == src.bytes);
    CHECK(p.ea.writes_done == std::vector<uint64_t>{1});
    CHECK(p.ea.reads_done == std::vector<uint64_t>{2});
    CHECK(p.ea.sends_done == std::vector<uint64_t>{3, 4, 5});
    REQUIRE(p.eb.placed.size() == 1);
    CHECK(p.eb.placed[0].stag == 0x200);
    CHECK(p.eb.placed[0].to == 0x10000);
    CHECK(p.eb.placed[0].length == kLen);
    REQUIRE(p.eb.recvs.size() == 3);
    CHECK(p.eb.recvs[0].wr_id == 31);
    CHECK(p.eb.recvs[0].msn == 1);
    CHECK(p.eb.recvs[0].length == 3000);
    CHECK(!p.eb.recvs[0].solicited);
    CHECK(p.eb.recvs[1].msn == 2);
    CHECK(p.eb.recvs[1].length == 100);
    CHECK(p.eb.recvs[1].solicited);
    CHECK(p.eb.recvs[2].msn == 3);
    CHECK(p.eb.recvs[2].length == 0);
    CHECK(std::equal(s1.begin(), s1.end(), r1.begin()));
    CHECK(std::equal(s2.begin(), s2.end(), r2.begin()));
    CHECK(p.ea.terms.empty());
    CHECK(p.eb.terms.empty());
    CHECK(p.b->stats().read_responses == 1);
    CHECK(p.a->markers_to_peer() == c.markers);
    if (c.markers) CHECK(p.a->stats().markers_sent > 0);
    if (c.loss > 0) CHECK(p.t.a->stats().retransmits > 0);
  }
}

TEST_CASE("iwarp: every TCP segment carries whole FPDUs") {
  for (bool markers : {false, true}) {
    CAPTURE(markers);
    IwarpPair p(config(markers), config(markers), link(10, 2_us), link(10, 2_us));
    p.mb.add(0x200, 0, 300'000, false, true);
    std::vector<std::byte> r(64);
    for (int i = 0; i < 20; ++i) p.b->post_recv(100 + i, r);
    size_t segments = 0, records = 0, bad = 0;
    p.t.sw.drop = [&](uint16_t in, ConstTcpView s) {
      const auto payload = s.payload();
      if (in != 0 || payload.empty() || mpa::is_frame(payload)) return false;
      const MpaStreamInfo info = p.a->stream_info();
      const MarkerPlan plan{info.markers, 0};
      size_t n = 0;
      const size_t walked =
          for_each_record(payload, s.seq() - info.first_fpdu_seq, plan, [&](auto, uint16_t) { ++n; });
      ++segments;
      records += n;
      if (walked != payload.size() || n == 0) ++bad;
      if (markers && n != 1) ++bad;  // Wireshark expects one FPDU per segment with markers
      return false;
    };
    const auto w = pattern_bytes(300'000, 1);
    p.a->post_write(1, w, 0x200, 0);
    const auto small = pattern_bytes(40, 2);
    for (int i = 0; i < 20; ++i) p.a->post_send(10 + i, small);
    p.t.sim.run(1_s);
    CHECK(p.eb.recvs.size() == 20);
    CHECK(p.mb.regions[0x200].bytes == w);
    CHECK(segments > 200);
    CHECK(bad == 0);
    if (!markers) CHECK(records > segments);  // small Sends were packed together
  }
}

TEST_CASE("iwarp: a Write to an invalid STag ends in a Terminate") {
  IwarpPair p(config(), config(), link(10, 1_us), link(10, 1_us));
  const auto w = pattern_bytes(5000, 1);
  p.a->post_write(1, w, 0x999, 0);
  p.t.sim.run(20_ms);
  REQUIRE(p.eb.terms.size() == 1);
  CHECK(p.eb.terms[0].local);
  CHECK(p.eb.terms[0].error == term::kDdpTaggedInvalidStag);
  REQUIRE(p.ea.terms.size() == 1);
  CHECK(!p.ea.terms[0].local);
  CHECK(p.ea.terms[0].error == term::kDdpTaggedInvalidStag);
  CHECK(p.ea.terms[0].wr_id == std::optional<uint64_t>{1});  // the quoted DDP header names the Write
  CHECK(p.b->stats().terminates_sent == 1);
  CHECK(p.a->stats().terminates_received == 1);
  CHECK(p.a->phase() == IwarpEndpoint::Phase::closed);
  CHECK(p.b->phase() == IwarpEndpoint::Phase::closed);
  CHECK(p.t.a->state() == TcpState::closed);
  CHECK(p.t.b->state() == TcpState::closed);
}

TEST_CASE("iwarp: access violation, bounds, too-short buffer, no buffer, bad Read source") {
  struct Case {
    const char* name;
    TermError expect;
  };
  for (Case c : {Case{"write to a read-only region", term::kRdmapAccessRights},
                 Case{"write past the end", term::kDdpTaggedBaseBounds},
                 Case{"send into a short buffer", term::kDdpUntaggedTooLong},
                 Case{"send with no buffer", term::kDdpUntaggedNoBuffer},
                 Case{"read from an invalid STag", term::kRdmapInvalidStag},
                 Case{"read without remote read", term::kRdmapAccessRights}}) {
    const std::string n = c.name;
    CAPTURE(n);
    IwarpPair p(config(), config(), link(10, 1_us), link(10, 1_us));
    p.mb.add(0x300, 0x1000, 4096, true, false);  // readable, not writable
    p.mb.add(0x301, 0x1000, 4096, false, true);  // writable, not readable
    p.ma.add(0x100, 0, 4096, false, false);
    const auto data = pattern_bytes(100, 1);
    std::vector<std::byte> small(50);
    if (n == "write to a read-only region") p.a->post_write(1, data, 0x300, 0x1000);
    if (n == "write past the end") p.a->post_write(1, data, 0x301, 0x1000 + 4050);
    if (n == "send into a short buffer") {
      p.b->post_recv(7, small);
      p.a->post_send(1, data);
    }
    if (n == "send with no buffer") p.a->post_send(1, data);
    if (n == "read from an invalid STag") p.a->post_read(1, 0x100, 0, 100, 0x777, 0);
    if (n == "read without remote read") p.a->post_read(1, 0x100, 0, 100, 0x301, 0x1000);
    p.t.sim.run(20_ms);
    REQUIRE(p.eb.terms.size() == 1);
    CHECK(p.eb.terms[0].error == c.expect);
    REQUIRE(p.ea.terms.size() == 1);
    CHECK(p.ea.terms[0].error == c.expect);
    CHECK(!p.ea.terms[0].local);
    CHECK(p.ea.reads_done.empty());
    CHECK(p.eb.recvs.empty());
  }
}

TEST_CASE("iwarp: ORD bounds outstanding reads; responses interleave with sends") {
  IwarpConfig ca = config();
  ca.ord = 2;
  IwarpPair p(ca, config(), link(10, 2_us), link(10, 2_us));
  auto& src = p.mb.add(0x201, 0, 64 << 10, true, false);
  src.bytes = pattern_bytes(64 << 10, 3);
  p.ma.add(0x101, 0, 16 * (4 << 10), false, false);
  for (int i = 0; i < 16; ++i)
    p.a->post_read(i, 0x101, static_cast<uint64_t>(i) * (4 << 10), 4 << 10, 0x201,
                   static_cast<uint64_t>(i) * 1024);
  size_t max_outstanding = 0;
  p.t.ha.port(0).on_tx([&](Time, Packet&) {
    max_outstanding = std::max<size_t>(max_outstanding, p.a->stats().reads - p.ea.reads_done.size());
  });
  p.t.sim.run(100_ms);
  REQUIRE(p.ea.reads_done.size() == 16);
  for (int i = 0; i < 16; ++i) CHECK(p.ea.reads_done[i] == static_cast<uint64_t>(i));
  CHECK(max_outstanding <= 2);
  for (int i = 0; i < 16; ++i) {
    const auto& got = p.ma.regions[0x101].bytes;
    CHECK(std::equal(got.begin() + i * (4 << 10), got.begin() + (i + 1) * (4 << 10),
                     src.bytes.begin() + i * 1024));
  }
}

// Issue: a peer that goes silent must not leave an end waiting forever. Each
// case silences b at some point; a must fail (iwarp_closed) within TCP's
// retransmission limit, as it does when its own segments go unacknowledged.
TEST_CASE("iwarp: a silent peer fails the waiting end within TCP's retransmission limit") {
  TcpEndpointConfig tcp;
  tcp.max_retries = 4;
  const Time limit = 200_ms;  // well past give_up_time() for 4 retries: 1+2+4+8+16 ms
  SUBCASE("the passive end's peer never connects") {
    IwarpPair p(config(), config(), link(10, 1_us, 4 << 20, 1.0), link(10, 1_us), tcp);
    p.t.sim.run(limit);
    CHECK(p.eb.closed);  // listened, heard nothing
    CHECK(p.ea.closed);  // its SYNs went unanswered
    CHECK(p.b->phase() == IwarpEndpoint::Phase::closed);
  }
  SUBCASE("the MPA Reply never arrives though the Request was acknowledged") {
    IwarpPair p(config(), config(), link(10, 1_us), link(10, 1_us), tcp);
    // From b, only segments without payload or RST get through: a's MPA
    // Request is acknowledged, the Reply and b's final RST are lost.
    p.t.sw.drop = [](uint16_t in, ConstTcpView s) {
      return in == 1 && (!s.payload().empty() || (s.flags() & tcp_flag::kRst));
    };
    p.t.sim.run(limit);
    CHECK(p.ea.closed);
    CHECK(!p.ea.established);
    CHECK(p.t.a->state() == TcpState::closed);
  }
  SUBCASE("Read Responses stop once the Read Request was acknowledged") {
    IwarpPair p(config(), config(), link(10, 1_us), link(10, 1_us), tcp);
    p.mb.add(0x201, 0, 64 << 10, true, false);
    p.ma.add(0x101, 0, 64 << 10, false, false);
    p.t.sim.run(100_us);
    REQUIRE(p.ea.established);
    p.t.sw.drop = [](uint16_t in, ConstTcpView s) {
      return in == 1 && (!s.payload().empty() || (s.flags() & tcp_flag::kRst));
    };
    p.a->post_read(1, 0x101, 0, 64 << 10, 0x201, 0);
    p.t.sim.run(limit);
    CHECK(p.ea.reads_done.empty());
    CHECK(p.ea.closed);
    CHECK(p.t.a->state() == TcpState::closed);
  }
}

TEST_CASE("iwarp: an idle connection nobody waits on stays up") {
  TcpEndpointConfig tcp;
  tcp.max_retries = 2;
  IwarpPair p(config(), config(), link(10, 1_us), link(10, 1_us), tcp);
  p.mb.add(0x201, 0, 4096, true, false);
  p.ma.add(0x101, 0, 4096, false, false);
  p.a->post_read(1, 0x101, 0, 4096, 0x201, 0);
  p.t.sim.run(1_s);
  CHECK(p.ea.reads_done == std::vector<uint64_t>{1});
  CHECK(!p.ea.closed);
  CHECK(!p.eb.closed);
  CHECK(p.a->phase() == IwarpEndpoint::Phase::full_operation);
  CHECK(p.b->phase() == IwarpEndpoint::Phase::full_operation);
}
