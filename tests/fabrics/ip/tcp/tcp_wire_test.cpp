// fabrics/ip/wire/tcp.hpp: byte-literal round trips and the checksum
// against an independent implementation.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "fabrics/ip/wire/tcp.hpp"

using namespace rdmasim;

namespace {

template <size_t N>
std::array<std::byte, N> bytes(const uint8_t (&v)[N]) {
  std::array<std::byte, N> a{};
  for (size_t i = 0; i < N; ++i) a[i] = std::byte{v[i]};
  return a;
}

// RFC 1071 done the slow way: 16-bit words into a 32-bit sum, folded.
uint16_t naive_checksum(const std::vector<uint8_t>& data) {
  uint32_t s = 0;
  for (size_t i = 0; i < data.size(); i += 2) {
    const uint16_t w = static_cast<uint16_t>(data[i] << 8 | (i + 1 < data.size() ? data[i + 1] : 0));
    s += w;
  }
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  return static_cast<uint16_t>(~s);
}

}  // namespace

TEST_CASE("tcp wire: a Linux-style SYN round-trips byte for byte") {
  // 50000 -> 5001, seq 0x01020304, SYN, window 64240, options
  // MSS 1460, NOP NOP SACK-Permitted, NOP WS 7 (what Linux sends without timestamps).
  const uint8_t raw[] = {0xC3, 0x50, 0x13, 0x89, 0x01, 0x02, 0x03, 0x04, 0x00, 0x00, 0x00,
                         0x00, 0x80, 0x02, 0xFA, 0xF0, 0x00, 0x00, 0x00, 0x00, 0x02, 0x04,
                         0x05, 0xB4, 0x01, 0x01, 0x04, 0x02, 0x01, 0x03, 0x03, 0x07};
  auto wire = bytes(raw);
  auto v = ConstTcpView::check(wire);
  REQUIRE(v);
  CHECK(v->valid());
  CHECK(v->header_len() == 32);
  auto h = TcpHeader::parse(*v);
  REQUIRE(h);
  CHECK(h->src_port == 50000);
  CHECK(h->dst_port == 5001);
  CHECK(h->seq == 0x01020304u);
  CHECK(h->flags == tcp_flag::kSyn);
  CHECK(h->window == 64240);
  CHECK(h->options.mss == 1460);
  CHECK(h->options.sack_permitted);
  CHECK(h->options.window_scale == 7);
  CHECK(!h->options.timestamps);
  CHECK(h->header_len() == 32);

  std::array<std::byte, 32> out{};
  h->emit(*TcpView::check(out));
  CHECK(out == wire);
}

TEST_CASE("tcp wire: an ACK with SACK blocks and timestamps") {
  TcpHeader h;
  h.src_port = 1;
  h.dst_port = 2;
  h.seq = 0xFFFFFFF0u;
  h.ack = 0x00000010u;
  h.flags = tcp_flag::kAck | tcp_flag::kEce;
  h.window = 0x1234;
  h.options.timestamps = TcpTimestamps{0xAABBCCDD, 0x11223344};
  h.options.add_sack({100, 200});
  h.options.add_sack({300, 400});
  h.options.add_sack({500, 600});
  h.options.add_sack({700, 800});  // a fourth block does not fit beside timestamps (RFC 2018 3)
  // NOP NOP TS(10) NOP NOP SACK(2 + 3*8) = 12 + 28 = 40 bytes of options.
  CHECK(h.header_len() == 60);
  std::vector<std::byte> buf(h.header_len());
  h.emit(*TcpView::check(buf));
  const uint8_t expect_opts[] = {0x01, 0x01, 0x08, 0x0A, 0xAA, 0xBB, 0xCC, 0xDD, 0x11, 0x22,
                                 0x33, 0x44, 0x01, 0x01, 0x05, 0x1A, 0x00, 0x00, 0x00, 0x64,
                                 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00, 0x01, 0x2C, 0x00, 0x00,
                                 0x01, 0x90, 0x00, 0x00, 0x01, 0xF4, 0x00, 0x00, 0x02, 0x58};
  CHECK(std::equal(buf.begin() + 20, buf.end(), bytes(expect_opts).begin()));
  CHECK(u8(buf[12]) == 0xF0);  // data offset 15 words
  CHECK(u8(buf[13]) == 0x50);  // ECE | ACK

  auto back = TcpHeader::parse(*ConstTcpView::check(buf));
  REQUIRE(back);
  CHECK(back->options.sack_count == 3);
  CHECK(back->options.sack[2] == SackBlock{500, 600});
  CHECK(back->options.timestamps == TcpTimestamps{0xAABBCCDD, 0x11223344});
  CHECK(back->seq == 0xFFFFFFF0u);
  CHECK(back->ack == 0x10u);
}

TEST_CASE("tcp wire: malformed headers and options are refused") {
  std::array<std::byte, 24> b{};
  b[12] = std::byte{0x40};  // data offset 4 < 5
  CHECK(!ConstTcpView::check(b)->valid());
  b[12] = std::byte{0x70};  // 28 bytes claimed, 24 present
  CHECK(!ConstTcpView::check(b)->valid());
  b[12] = std::byte{0x60};  // 24 bytes: 4 bytes of options
  b[20] = std::byte{0x02};  // MSS with length 3
  b[21] = std::byte{0x03};
  CHECK(!TcpHeader::parse(*ConstTcpView::check(b)));
  b[21] = std::byte{0x08};  // runs past the end
  CHECK(!TcpHeader::parse(*ConstTcpView::check(b)));
  b[20] = std::byte{0xFE};  // unknown kind, length 4: skipped
  b[21] = std::byte{0x04};
  CHECK(TcpHeader::parse(*ConstTcpView::check(b)));
}

TEST_CASE("tcp wire: checksum over the IPv4 and IPv6 pseudo-headers") {
  TcpHeader h;
  h.src_port = 49152;
  h.dst_port = 80;
  h.seq = 12345;
  h.ack = 67890;
  h.flags = tcp_flag::kAck | tcp_flag::kPsh;
  h.window = 512;
  std::vector<std::byte> seg(h.header_len() + 7);  // odd payload length
  h.emit(*TcpView::check(seg));
  for (size_t i = 20; i < seg.size(); ++i) seg[i] = std::byte(static_cast<uint8_t>(i * 37));

  const auto src = Ipv4Address::from_u32(0xC0A80001), dst = Ipv4Address::from_u32(0xC0A800C7);
  const auto ph = TcpPseudoHeader::v4(src, dst);
  tcp_fill_checksum(seg, ph);
  CHECK(tcp_verify_checksum(seg, ph));

  // Independent: pseudo-header bytes + segment with a zero checksum field.
  std::vector<uint8_t> v = {0xC0, 0xA8, 0x00, 0x01, 0xC0, 0xA8,
                            0x00, 0xC7, 0x00, 6,    0x00, static_cast<uint8_t>(seg.size())};
  for (size_t i = 0; i < seg.size(); ++i) v.push_back(i == 16 || i == 17 ? 0 : u8(seg[i]));
  CHECK(load_be16(std::span<const std::byte>(seg).subspan(16, 2)) == naive_checksum(v));

  seg[25] ^= std::byte{1};
  CHECK(!tcp_verify_checksum(seg, ph));
  seg[25] ^= std::byte{1};
  CHECK(tcp_verify_checksum(seg, ph.reversed()));  // the sum does not depend on the order of the addresses

  Ipv6Address s6, d6;
  s6.octets[0] = 0xFE, s6.octets[1] = 0x80, s6.octets[15] = 1;
  d6.octets[0] = 0xFE, d6.octets[1] = 0x80, d6.octets[15] = 2;
  const auto ph6 = TcpPseudoHeader::v6(s6, d6);
  tcp_fill_checksum(seg, ph6);
  CHECK(tcp_verify_checksum(seg, ph6));
  std::vector<uint8_t> w(s6.octets.begin(), s6.octets.end());
  w.insert(w.end(), d6.octets.begin(), d6.octets.end());
  for (uint8_t x : {0, 0, 0, static_cast<int>(seg.size()), 0, 0, 0, 6}) w.push_back(x);
  for (size_t i = 0; i < seg.size(); ++i) w.push_back(i == 16 || i == 17 ? 0 : u8(seg[i]));
  CHECK(load_be16(std::span<const std::byte>(seg).subspan(16, 2)) == naive_checksum(w));
}

TEST_CASE("tcp wire: sequence comparisons wrap") {
  CHECK(seq_lt(0xFFFFFFF0u, 0x10u));
  CHECK(!seq_lt(0x10u, 0xFFFFFFF0u));
  CHECK(seq_le(5, 5));
}
