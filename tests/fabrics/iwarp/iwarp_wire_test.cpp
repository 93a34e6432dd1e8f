// MPA, DDP and RDMAP wire formats: byte literals, markers, and the MPA CRC
// against an independent bitwise CRC32c.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "fabrics/ip/wire/tcp.hpp"
#include "fabrics/iwarp/ddp.hpp"
#include "fabrics/iwarp/fpdu.hpp"
#include "fabrics/iwarp/mpa.hpp"
#include "fabrics/iwarp/mpa_seal.hpp"
#include "fabrics/iwarp/rdmap.hpp"

using namespace rdmasim;

namespace {

std::vector<std::byte> bytes(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int x : v) out.push_back(std::byte(static_cast<uint8_t>(x)));
  return out;
}

// CRC-32C one bit at a time (reflected polynomial 0x82F63B78), written
// independently of core/crc.cpp.
uint32_t bitwise_crc32c(std::span<const std::byte> b) {
  uint32_t c = 0xFFFFFFFF;
  for (std::byte x : b) {
    c ^= u8(x);
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
  }
  return ~c;
}

}  // namespace

TEST_CASE("mpa: request and reply frames byte for byte") {
  // Request: key, C set, Rev 1, 4 bytes of private data.
  auto req = bytes({'M', 'P', 'A', ' ', 'I',  'D',  ' ',  'R',  'e',  'q',  ' ',  'F',
                    'r', 'a', 'm', 'e', 0x40, 0x01, 0x00, 0x04, 0xDE, 0xAD, 0xBE, 0xEF});
  auto v = ConstMpaFrameView::check(req);
  REQUIRE(v);
  CHECK(v->is_request());
  CHECK(!v->is_reply());
  CHECK(v->complete());
  CHECK(v->frame_len() == 24);
  auto h = MpaFrameHeader::parse(*v);
  REQUIRE(h);
  CHECK(h->request);
  CHECK(h->crc);
  CHECK(!h->markers);
  CHECK(!h->reject);
  CHECK(h->revision == 1);
  CHECK(h->pd_length == 4);
  CHECK(u8(v->private_data()[3]) == 0xEF);
  std::vector<std::byte> out(24);
  h->emit(*MpaFrameView::check(out));
  std::copy(req.begin() + 20, req.end(), out.begin() + 20);
  CHECK(out == req);

  // Reply: M and C set, rejected, no private data.
  MpaFrameHeader rep{false, true, true, true, 1, 0};
  std::vector<std::byte> r(20);
  rep.emit(*MpaFrameView::check(r));
  CHECK(mpa::key_is(r, "MPA ID Rep Frame"));
  CHECK(u8(r[16]) == 0xE0);
  CHECK(u8(r[17]) == 0x01);
  CHECK(MpaFrameHeader::parse(*ConstMpaFrameView::check(r)) == rep);
  CHECK(mpa::is_frame(r));
  r[4] = std::byte{'X'};
  CHECK(!MpaFrameHeader::parse(*ConstMpaFrameView::check(r)));
}

TEST_CASE("mpa: revision 2 frames carry IRD and ORD first (RFC 6581)") {
  // Request: C and E (enhanced) set, Rev 2, 8 bytes of private data: IRD 16
  // with P (peer-to-peer) and Z, ORD 4 with W, then 4 bytes of the ULP's.
  auto req = bytes({'M', 'P', 'A',  ' ',  'I',  'D',  ' ',  'R',  'e',  'q',  ' ',  'F',  'r',  'a',
                    'm', 'e', 0x50, 0x02, 0x00, 0x08, 0xC0, 0x10, 0x80, 0x04, 0x01, 0x02, 0x03, 0x04});
  auto v = ConstMpaFrameView::check(req);
  REQUIRE(v);
  auto h = MpaFrameHeader::parse(*v);
  REQUIRE(h);
  CHECK(h->revision == 2);
  CHECK(h->enhanced);
  CHECK(h->crc);
  CHECK(v->reserved() == 0);
  auto io = MpaIrdOrd::parse(v->private_data());
  REQUIRE(io);
  CHECK(io->ird == 16);
  CHECK(io->ord == 4);
  CHECK(io->peer_to_peer);
  CHECK(io->zero_length_send_rtr);
  CHECK(io->write_rtr);
  CHECK(!io->read_rtr);
  std::vector<std::byte> out(req.size());
  h->emit(*MpaFrameView::check(out));
  io->emit(std::span<std::byte>(out).subspan(20));
  std::copy(req.begin() + 24, req.end(), out.begin() + 24);
  CHECK(out == req);
  CHECK(!MpaIrdOrd::parse(std::span<const std::byte>(req).subspan(20, 3)));
}

TEST_CASE("ddp/rdmap: a tagged RDMA Write header") {
  // T=1 L=1 DV=1 | RV=1 op=Write | STag 0x11223344 | TO 0x0102030405060708
  auto w = bytes({0xC1, 0x40, 0x11, 0x22, 0x33, 0x44, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08});
  auto v = ConstDdpView::check(w);
  REQUIRE(v);
  const DdpHeader h = DdpHeader::parse(*v);
  CHECK(h.tagged);
  CHECK(h.last);
  CHECK(h.version == 1);
  CHECK(rdmap_version(h.ulp_control) == 1);
  CHECK(rdmap_opcode_bits(h.ulp_control) == 0);
  CHECK(h.stag == 0x11223344u);
  CHECK(h.to == 0x0102030405060708ull);
  CHECK(h.length() == ddp::kTaggedLen);
  std::vector<std::byte> out(14);
  h.emit(out);
  CHECK(out == w);
  CHECK(!ConstDdpView::check(std::span<const std::byte>(w).first(13)));
}

TEST_CASE("ddp/rdmap: an untagged Send with Solicited Event and a Read Request") {
  // T=0 L=0 DV=1 | RV=1 op=Send SE | rsvd | QN 0 | MSN 7 | MO 1454
  auto s = bytes({0x01, 0x45, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0x05, 0xAE});
  const DdpHeader h = DdpHeader::parse(*ConstDdpView::check(s));
  CHECK(!h.tagged);
  CHECK(!h.last);
  CHECK(h.qn == 0);
  CHECK(h.msn == 7);
  CHECK(h.mo == 1454);
  CHECK(rdmap_info(rdmap_opcode_bits(h.ulp_control)).solicited);
  std::vector<std::byte> out(18);
  h.emit(out);
  CHECK(out == s);

  ReadRequestHeader rr{0xAABBCCDD, 0x1000, 65536, 0x01020304, 0xFFFF000000000000ull};
  std::vector<std::byte> b(ReadRequestHeader::kLen);
  rr.emit(b);
  CHECK(b == bytes({0xAA, 0xBB, 0xCC, 0xDD, 0, 0, 0,    0,    0, 0, 0x10, 0, 0, 1,
                    0,    0,    1,    2,    3, 4, 0xFF, 0xFF, 0, 0, 0,    0, 0, 0}));
  CHECK(ReadRequestHeader::parse(b) == rr);
}

TEST_CASE("rdmap: the opcode table") {
  static_assert(kRdmapOps[0x0].tagged && kRdmapOps[0x2].tagged);
  static_assert(!kRdmapOps[0x1].tagged && kRdmapOps[0x1].queue == rdmap::kQueueReadRequest);
  static_assert(kRdmapOps[0x7].queue == rdmap::kQueueTerminate);
  CHECK(!rdmap_info(0x8).valid);  // RFC 5040 has no atomics
  CHECK(rdmap_info(0x6).invalidate);
  CHECK(rdmap_control(RdmapOpcode::terminate) == 0x47);
}

TEST_CASE("rdmap: terminate header with the offending DDP and Read Request headers") {
  auto ddp = bytes({0x41, 0x41, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 0});
  auto rrh = std::vector<std::byte>(28, std::byte{0x5A});
  TerminateHeader t;
  t.error = term::kRdmapInvalidStag;
  t.m = t.d = t.r = true;
  t.ddp_segment_length = 46;
  t.ddp_header = ddp;
  t.rdmap_header = rrh;
  CHECK(t.length() == 4 + 2 + 18 + 28);
  std::vector<std::byte> b(t.length());
  t.emit(b);
  CHECK(u8(b[0]) == 0x01);  // layer RDMAP, EType remote protection
  CHECK(u8(b[1]) == 0x00);  // invalid STag
  CHECK(u8(b[2]) == 0xE0);  // M D R
  CHECK(load_be16(std::span<const std::byte>(b).subspan(4, 2)) == 46);
  auto back = TerminateHeader::parse(b);
  REQUIRE(back);
  CHECK(back->error == term::kRdmapInvalidStag);
  CHECK(back->ddp_header.size() == 18);
  CHECK(std::equal(back->rdmap_header.begin(), back->rdmap_header.end(), rrh.begin()));

  TerminateHeader d;
  d.error = term::kDdpUntaggedTooLong;
  std::vector<std::byte> c(d.length());
  d.emit(c);
  CHECK(c == bytes({0x12, 0x05, 0x00, 0x00}));
  CHECK(describe(term::kDdpUntaggedTooLong) ==
        "DDP untagged buffer: DDP message too long for available buffer");
  CHECK(describe(term::kRdmapAccessRights) == "RDMAP: access rights violation");
}

TEST_CASE("mpa: pad, FPDU length and MULPDU") {
  CHECK(mpa::pad_length(14) == 0);  // 2 + 14 = 16
  CHECK(mpa::pad_length(15) == 3);
  CHECK(mpa::pad_length(17) == 1);
  CHECK(mpa::fpdu_length(15) == 2 + 15 + 3 + 4);
  CHECK(mpa::mulpdu(1460, false) == 1454);
  CHECK(mpa::mulpdu(1460, true) == 1442);  // 1460 - (6 + 4 * 3)
  CHECK(mpa::mulpdu(8960, false) == 8954);
  // MULPDU works wherever the FPDU lands among the markers.
  for (size_t emss : {536u, 1460u, 1448u, 4052u, 8960u}) {
    const size_t u = mpa::mulpdu(emss, true);
    MarkerPlan p{true, 0};
    for (uint64_t start = 0; start < 1024; start += 4) {
      CAPTURE(emss);
      CAPTURE(start);
      CHECK(p.record_length(start, mpa::fpdu_length(u)) <= emss);
    }
  }
}

TEST_CASE("mpa: markers every 512 octets, FPDUPTR pointing back, scatter and gather") {
  MarkerPlan p{true, 1000};
  // An FPDU of 1200 bytes starting 8 bytes before a marker position: markers at
  // 1512 and 2024 fall inside it.
  const uint64_t start = 1504;
  std::vector<std::byte> fpdu(1200);
  for (size_t i = 0; i < fpdu.size(); ++i) fpdu[i] = std::byte(static_cast<uint8_t>(i * 7 + 1));
  const size_t len = p.record_length(start, fpdu.size());
  CHECK(len == 1212);  // markers at 1512, 2024 and 2536
  std::vector<std::byte> rec(len);
  p.scatter(start, fpdu, rec);
  // First marker 8 bytes in: reserved 0, FPDUPTR 8.
  CHECK(std::vector<std::byte>(rec.begin() + 8, rec.begin() + 12) == bytes({0, 0, 0, 8}));
  CHECK(std::vector<std::byte>(rec.begin() + 520, rec.begin() + 524) ==
        bytes({0, 0, 0x02, 0x08}));  // 520 back
  std::vector<std::byte> back(fpdu.size());
  CHECK(p.gather(start, rec, back) == fpdu.size());
  CHECK(back == fpdu);

  // A record that starts on a marker position begins with that marker.
  const uint64_t on = 1000 + 512 * 3;
  CHECK(p.at(on));
  CHECK(p.record_length(on, 508) == 512);
  CHECK(p.record_length(on, 509) == 517);  // 4 + 508, then a marker, then 1
  std::vector<std::byte> r2(512);
  p.scatter(on, std::span<const std::byte>(fpdu).first(508), r2);
  CHECK(std::vector<std::byte>(r2.begin(), r2.begin() + 4) == bytes({0, 0, 0, 0}));
  CHECK(r2[4] == fpdu[0]);
  // The position right after it belongs to the next record: no marker at the end.
  CHECK(p.at(on + 512));

  // Random placements round-trip.
  for (uint64_t s = 1000; s < 1000 + 2048; s += 12) {
    for (size_t n : {8u, 20u, 508u, 512u, 1024u, 1200u}) {
      const size_t l = p.record_length(s, n);
      std::vector<std::byte> rr(l), g(n);
      p.scatter(s, std::span<const std::byte>(fpdu).first(n), rr);
      CHECK(p.gather(s, rr, g) == n);
      CHECK(std::equal(g.begin(), g.end(), fpdu.begin()));
    }
  }
}

TEST_CASE("mpa: the FPDU CRC32c matches an independent bitwise CRC32c") {
  const std::string check = "123456789";
  CHECK(bitwise_crc32c(std::as_bytes(std::span(check.data(), check.size()))) == 0xE3069283u);

  // A Send FPDU of 21 payload bytes: 2 + 18 + 21 + 3 pad + 4 CRC.
  std::vector<std::byte> rec(mpa::fpdu_length(18 + 21));
  CHECK(rec.size() == 48);
  store_be16(rec, 39);
  DdpHeader h;
  h.ulp_control = rdmap_control(RdmapOpcode::send);
  h.msn = 1;
  h.emit(std::span<std::byte>(rec).subspan(2));
  for (size_t i = 0; i < 21; ++i) rec[20 + i] = std::byte(static_cast<uint8_t>('a' + i));
  fpdu_fill_crc(rec);
  const uint32_t expect = bitwise_crc32c(std::span<const std::byte>(rec).first(rec.size() - 4));
  // On the wire least significant byte first.
  CHECK(u8(rec[44]) == (expect & 0xFF));
  CHECK(u8(rec[47]) == (expect >> 24));
  CHECK(fpdu_crc_ok(rec));
  rec[10] ^= std::byte{0x20};
  CHECK(!fpdu_crc_ok(rec));
}

TEST_CASE("mpa seal: CRCs of every FPDU in a segment, then the TCP checksum") {
  // A TCP segment carrying two FPDUs; the stream's first FPDU is 40 bytes
  // before this segment, so with markers one falls inside.
  auto make_segment = [](const MarkerPlan& plan, uint64_t start, std::vector<size_t> ulpdus) {
    TcpHeader th;
    th.src_port = 49152;
    th.dst_port = 18515;
    th.seq = 1000 + static_cast<uint32_t>(start);
    th.flags = tcp_flag::kAck | tcp_flag::kPsh;
    std::vector<std::byte> seg(th.header_len());
    th.emit(*TcpView::check(seg));
    uint64_t pos = start;
    for (size_t u : ulpdus) {
      std::vector<std::byte> f(mpa::fpdu_length(u));
      store_be16(f, static_cast<uint16_t>(u));
      for (size_t i = 0; i < u; ++i) f[2 + i] = std::byte(static_cast<uint8_t>(i + u));
      std::vector<std::byte> r(plan.record_length(pos, f.size()));
      plan.scatter(pos, f, r);
      seg.insert(seg.end(), r.begin(), r.end());
      pos += r.size();
    }
    return seg;
  };
  const auto ph = TcpPseudoHeader::v4(Ipv4Address::from_u32(0x0A000001), Ipv4Address::from_u32(0x0A000002));
  for (bool markers : {false, true}) {
    CAPTURE(markers);
    MarkerPlan plan{markers, 0};
    auto seg = make_segment(plan, 40, {600, 101});
    MpaStreamInfo info{true, markers, 1000};
    iwarp_seal(seg, ph, &info);
    CHECK(tcp_verify_checksum(seg, ph));
    // Check every record with the bitwise CRC.
    auto payload = std::span<const std::byte>(seg).subspan(20);
    size_t n = 0;
    const size_t walked = for_each_record(payload, 40, plan, [&](std::span<const std::byte> r, uint16_t) {
      ++n;
      CHECK(load_le32(r.last(4)) == bitwise_crc32c(r.first(r.size() - 4)));
    });
    CHECK(n == 2);
    CHECK(walked == payload.size());
    if (markers) CHECK(payload.size() == mpa::fpdu_length(600) + mpa::fpdu_length(101) + 4);
  }
  // CRCs not negotiated: the fields stay zero. Request frames are left alone.
  auto seg = make_segment(MarkerPlan{}, 0, {30});
  MpaStreamInfo off{false, false, 1000};
  iwarp_seal(seg, ph, &off);
  CHECK(load_le32(std::span<const std::byte>(seg).last(4)) == 0);
  CHECK(tcp_verify_checksum(seg, ph));

  MpaStreamRegistry reg;
  TcpFlow f{ph, 49152, 18515};
  reg.publish(f, MpaStreamInfo{true, false, 1000});
  CHECK(reg.find(ph, 49152, 18515));
  CHECK(!reg.find(ph.reversed(), 18515, 49152));
  reg.seal(seg, ph);
  CHECK(load_le32(std::span<const std::byte>(seg).last(4)) ==
        bitwise_crc32c(std::span<const std::byte>(seg).subspan(20, 32)));
  reg.forget(f);
  CHECK(reg.size() == 0);
}
