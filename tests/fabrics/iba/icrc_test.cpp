#include "fabrics/iba/icrc.hpp"

#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "core/bytes.hpp"
#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

namespace {

// Independent references, bit by bit: CRC-32 (reflected 0x04C11DB7) and the
// VCRC's CRC-16 (reflected 0x100B), both init all ones, final xor all ones.
uint32_t ref_crc32(const std::vector<std::byte>& b) {
  uint32_t c = 0xFFFFFFFF;
  for (std::byte x : b) {
    c ^= static_cast<uint8_t>(x);
    for (int i = 0; i < 8; ++i) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
  }
  return ~c;
}
uint16_t ref_crc16_iba(const std::vector<std::byte>& b) {
  uint16_t c = 0xFFFF;
  for (std::byte x : b) {
    c ^= static_cast<uint8_t>(x);
    for (int i = 0; i < 8; ++i) c = static_cast<uint16_t>((c >> 1) ^ (0xD008u & (0u - (c & 1u))));
  }
  return static_cast<uint16_t>(~c);
}

void ones(std::vector<std::byte>& b, size_t off, size_t n) {
  for (size_t i = off; i < off + n; ++i) b[i] = std::byte{0xFF};
}

// The ICRC as the specifications describe it: copy the whole covered frame,
// overwrite the variant fields at their absolute offsets, prepend eight
// bytes of ones where there is no LRH to keep, CRC the lot.
uint32_t ref_icrc(IcrcEncap e, std::vector<std::byte> f) {
  f.resize(f.size() - 4);  // the ICRC itself
  std::vector<std::byte> pre(8, std::byte{0xFF});
  auto mask_ipv6 = [&](size_t at) {
    f[at] |= std::byte{0x0F};
    ones(f, at + 1, 3);
    ones(f, at + 7, 1);
  };
  switch (e) {
    case IcrcEncap::RoceV2Ipv4: {
      const size_t ihl = (static_cast<uint8_t>(f[0]) & 0xF) * 4;
      ones(f, 1, 1);
      ones(f, 8, 1);
      ones(f, 10, 2);
      ones(f, ihl + 6, 2);
      ones(f, ihl + 8 + 4, 1);
      break;
    }
    case IcrcEncap::RoceV2Ipv6:
      mask_ipv6(0);
      ones(f, 46, 2);
      ones(f, 48 + 4, 1);
      break;
    case IcrcEncap::RoceV1:
      mask_ipv6(0);
      ones(f, 40 + 4, 1);
      break;
    case IcrcEncap::IbGlobal:
      f.erase(f.begin(), f.begin() + 8);  // the LRH is replaced by the ones
      mask_ipv6(0);
      ones(f, 40 + 4, 1);
      break;
    case IcrcEncap::IbLocal:
      pre.clear();
      f[0] |= std::byte{0xF0};
      ones(f, 8 + 4, 1);
      break;
  }
  pre.insert(pre.end(), f.begin(), f.end());
  return ref_crc32(pre);
}

std::vector<std::byte> icrc_bytes(uint32_t v) {
  std::vector<std::byte> b(4);
  store_le32(b, v);
  return b;
}

std::vector<std::byte> last4(const std::vector<std::byte>& f) { return {f.end() - 4, f.end()}; }

// IBA Table 29: a local RC RDMA WRITE ONLY with 14 bytes of payload and 2 of
// pad, its variant fields already ones (VL 15, Resv8a 0xff); the spec gives
// the ICRC 0x9625B75A stored big-endian, i.e. the wire bytes 96 25 b7 5a.
const auto kTable29 =
    hex("f0 12 37 5c 00 0e 17 d2"                          // LRH
        "0a 20 24 87 ff 87 b1 b3 00 0d ec 2a"              // BTH
        "01 71 0a 1c 01 5d 40 02 38 f2 7a 05 00 00 00 0e"  // RETH
        "bb 88 4d 85 fd 5c fb a4 72 8b c0 69 0e d4 00 00"  // payload, pad
        "96 25 b7 5a");                                    // ICRC

// A ConnectX-4 Lx RoCE v2 CNP (Scapy test/contrib/roce.uts), from the IPv4
// header on: TOS 0xc2, UDP checksum 0, BECN set, ICRC 82 fd 00 2a.
const auto kCx4Cnp =
    hex("45 c2 00 3c 71 8c 40 00 40 11 91 61 0a 00 11 01 0a 00 12 01"
        "00 00 12 b7 00 28 00 00"
        "81 00 ff ff 40 00 01 18 00 00 00 00"
        "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
        "82 fd 00 2a");

// The UC SEND ONLY that Scapy's RoCE test builds, ICRC 78 f3 53 f3.
const auto kScapyUcSend =
    hex("45 01 00 40 04 78 40 00 40 11 b4 d5 c0 a8 00 07 c0 a8 00 07"
        "c0 00 12 b7 00 2c ac a2"
        "24 60 ff ff 00 00 00 d3 00 cf 17 10"
        "46 30 81 8b e2 89 35 d9 0e 9a 95 50 54 01 be 88 5e 50 00 00"
        "78 f3 53 f3");

// Two ConnectX RoCE v1 frames (Scapy test/contrib/roce.uts), from the GRH on:
// an RC RDMA WRITE ONLY and its ACK.
const auto kRoceV1Write =
    hex("60 20 00 00 00 28 1b 40"
        "00 00 00 00 00 00 00 00 00 00 ff ff 0f 00 00 02"
        "00 00 00 00 00 00 00 00 00 00 ff ff 0f 00 00 02"
        "0a 70 ff ff 00 00 01 0a 80 a7 88 bc"
        "00 00 55 d4 c0 72 60 00 00 00 47 b3 00 00 00 05"
        "00 00 00 00 01 00 00 00"
        "e3 d8 56 bb");
const auto kRoceV1Ack =
    hex("60 20 00 00 00 14 1b 40"
        "00 00 00 00 00 00 00 00 00 00 ff ff 0f 00 00 02"
        "00 00 00 00 00 00 00 00 00 00 ff ff 0f 00 00 02"
        "11 40 ff ff 00 00 01 09 00 a7 88 c0"
        "00 00 00 05"
        "25 f0 c0 38");

}  // namespace

TEST_CASE("icrc: IBA Table 29 sample packet, native IB local") {
  CHECK(icrc_bytes(compute_icrc_ib_local(kTable29)) == hex("96 25 b7 5a"));
  CHECK(icrc_ok(IcrcEncap::IbLocal, kTable29));
  // On the wire the VL and Resv8a hold anything: the ICRC does not change.
  auto f = kTable29;
  f[0] = std::byte{0x00};  // VL 0
  f[8 + 4] = std::byte{0x00};
  CHECK(icrc_bytes(compute_icrc_ib_local(f)) == hex("96 25 b7 5a"));
  f[0] = std::byte{0x31};  // VL 3 but LVer 1: LVer is invariant
  CHECK(icrc_bytes(compute_icrc_ib_local(f)) != hex("96 25 b7 5a"));
}

TEST_CASE("icrc: captured and published RoCE v2 over IPv4 frames") {
  CHECK(icrc_bytes(compute_icrc_roce_v2_ipv4(kCx4Cnp)) == last4(kCx4Cnp));
  CHECK(icrc_bytes(compute_icrc_roce_v2_ipv4(kScapyUcSend)) == last4(kScapyUcSend));
  auto f = kScapyUcSend;
  store_le32(std::span<std::byte>(f).last(4), 0);
  fill_icrc_roce_v2_ipv4(f);
  CHECK(f == kScapyUcSend);
}

TEST_CASE("icrc: captured RoCE v1 frames") {
  CHECK(icrc_bytes(compute_icrc_roce_v1(kRoceV1Write)) == last4(kRoceV1Write));
  CHECK(icrc_bytes(compute_icrc_roce_v1(kRoceV1Ack)) == last4(kRoceV1Ack));
  CHECK(icrc_ok(IcrcEncap::RoceV1, kRoceV1Ack));
  auto bad = kRoceV1Ack;
  bad[40 + 12 + 3] = std::byte{0x06};  // MSN 6
  CHECK_FALSE(icrc_ok(IcrcEncap::RoceV1, bad));
}

TEST_CASE("icrc: variant fields do not count, invariant ones do") {
  // RoCE v2 over IPv4: TOS, TTL, IP checksum, UDP checksum, BTH byte 4.
  auto f = kCx4Cnp;
  for (size_t off : {size_t{1}, size_t{8}, size_t{10}, size_t{11}, size_t{26}, size_t{27}, size_t{32}}) {
    auto g = f;
    g[off] ^= std::byte{0x5A};
    CAPTURE(off);
    CHECK(compute_icrc_roce_v2_ipv4(g) == compute_icrc_roce_v2_ipv4(f));
  }
  for (size_t off : {size_t{0}, size_t{2}, size_t{6}, size_t{9}, size_t{12}, size_t{19}, size_t{20},
                     size_t{24}, size_t{28}, size_t{31}, size_t{33}, size_t{40}, size_t{55}}) {
    auto g = f;
    g[off] ^= std::byte{0x01};
    CAPTURE(off);
    CHECK(compute_icrc_roce_v2_ipv4(g) != compute_icrc_roce_v2_ipv4(f));
  }
  // GRH (RoCE v1): TClass, FlowLabel, HopLmt vary; IPVer and PayLen do not.
  for (size_t off : {size_t{1}, size_t{2}, size_t{3}, size_t{7}}) {
    auto g = kRoceV1Write;
    g[off] ^= std::byte{0xA5};
    CHECK(icrc_ok(IcrcEncap::RoceV1, g));
  }
  auto g = kRoceV1Write;
  g[0] ^= std::byte{0x0F};  // low nibble of byte 0 is TClass
  CHECK(icrc_ok(IcrcEncap::RoceV1, g));
  g[0] ^= std::byte{0x10};  // IPVer
  CHECK_FALSE(icrc_ok(IcrcEncap::RoceV1, g));
  g = kRoceV1Write;
  g[5] ^= std::byte{0x01};  // PayLen
  CHECK_FALSE(icrc_ok(IcrcEncap::RoceV1, g));
}

TEST_CASE("icrc: agrees with the bitwise reference on random frames of every kind") {
  std::mt19937 rng(12345);
  auto rnd = [&](size_t n) {
    std::vector<std::byte> v(n);
    for (auto& b : v) b = std::byte(rng() & 0xFF);
    return v;
  };
  struct Kind {
    IcrcEncap e;
    size_t headers;  // the minimum the function needs
  };
  const Kind kinds[] = {{IcrcEncap::RoceV2Ipv4, 20 + 8 + 12},
                        {IcrcEncap::RoceV2Ipv6, 40 + 8 + 12},
                        {IcrcEncap::RoceV1, 40 + 12},
                        {IcrcEncap::IbLocal, 8 + 12},
                        {IcrcEncap::IbGlobal, 8 + 40 + 12}};
  for (const Kind& k : kinds) {
    for (int i = 0; i < 200; ++i) {
      const size_t payload = rng() % 300;
      auto f = rnd(k.headers + payload + 4);
      if (k.e == IcrcEncap::RoceV2Ipv4) {
        const size_t ihl = 5 + (i % 3 == 0 ? rng() % 4 : 0);  // sometimes with options
        f[0] = std::byte(0x40 | ihl);
        f.insert(f.begin() + 20, (ihl - 5) * 4, std::byte{0x01});
      }
      CAPTURE(static_cast<int>(k.e));
      CAPTURE(f.size());
      REQUIRE(compute_icrc(k.e, f) == ref_icrc(k.e, f));
      fill_icrc(k.e, f);
      REQUIRE(icrc_ok(k.e, f));
      REQUIRE(load_le32(std::span<const std::byte>(f).last(4)) == ref_icrc(k.e, f));
    }
  }
}

TEST_CASE("icrc: frames too short for their headers get 0") {
  CHECK(compute_icrc_roce_v2_ipv4(hex("45 00")) == 0);
  CHECK(compute_icrc_roce_v2_ipv4(std::vector<std::byte>(20 + 8 + 12 + 3)) == 0);
  CHECK(compute_icrc_roce_v2_ipv6(std::vector<std::byte>(40 + 8 + 12 + 3)) == 0);
  CHECK(compute_icrc_roce_v1(std::vector<std::byte>(40 + 12 + 3)) == 0);
  CHECK(compute_icrc_ib_local(std::vector<std::byte>(8 + 12 + 3)) == 0);
  CHECK(compute_icrc_ib_global(std::vector<std::byte>(8 + 40 + 12 + 3)) == 0);
  CHECK(compute_icrc_roce_v2_ipv4(std::vector<std::byte>{}) == 0);
  std::vector<std::byte> ihl4(64);
  ihl4[0] = std::byte{0x44};
  CHECK(compute_icrc_roce_v2_ipv4(ihl4) == 0);
  // Exactly the headers and the ICRC: fine.
  CHECK(compute_icrc_ib_local(std::vector<std::byte>(8 + 12 + 4)) != 0);
}

TEST_CASE("icrc: native IB frame with its VCRC") {
  // Table 29's packet with VL 0 and a VCRC after the ICRC.
  auto f = kTable29;
  f[0] = std::byte{0x00};
  f[12] = std::byte{0x00};
  std::fill(f.end() - 4, f.end(), std::byte{0});
  f.resize(f.size() + 2);
  fill_ib_crcs(f);
  CHECK(std::vector<std::byte>(f.end() - 6, f.end() - 2) == hex("96 25 b7 5a"));
  const uint16_t vcrc = ref_crc16_iba(std::vector<std::byte>(f.begin(), f.end() - 2));
  CHECK(f[f.size() - 2] == std::byte(vcrc & 0xFF));  // low byte first (core/crc.hpp)
  CHECK(f[f.size() - 1] == std::byte(vcrc >> 8));
  // A switch moving it to VL 2 recomputes only the VCRC.
  f[0] = std::byte{0x20};
  fill_vcrc(f);
  CHECK(std::vector<std::byte>(f.end() - 6, f.end() - 2) == hex("96 25 b7 5a"));
  CHECK(load_le32(std::span<const std::byte>(f).subspan(f.size() - 6, 4)) ==
        compute_icrc_ib_local(std::span<const std::byte>(f).first(f.size() - 2)));
  const uint16_t vcrc2 = ref_crc16_iba(std::vector<std::byte>(f.begin(), f.end() - 2));
  CHECK(vcrc2 != vcrc);
  CHECK(f[f.size() - 2] == std::byte(vcrc2 & 0xFF));

  // With a GRH (LNH 3) the whole LRH is variant.
  std::vector<std::byte> g = hex("00 13 00 01 00 18 00 02");  // LNH 3, PktLen 24 words
  const auto grh =
      hex("60 00 00 00 00 28 1b 01"
          "fe 80 00 00 00 00 00 00 00 02 c9 03 00 00 00 01"
          "fe 80 00 00 00 00 00 00 00 02 c9 03 00 00 00 02");
  g.insert(g.end(), grh.begin(), grh.end());
  g.insert(g.end(), kTable29.begin() + 8, kTable29.end() - 4);  // BTH .. pad
  g.resize(g.size() + 4 + 2);
  fill_ib_crcs(g);
  const auto covered = std::vector<std::byte>(g.begin(), g.end() - 2);
  CHECK(load_le32(std::span<const std::byte>(g).subspan(g.size() - 6, 4)) ==
        ref_icrc(IcrcEncap::IbGlobal, covered));
  auto h = g;
  h[2] = std::byte{0x77};  // DLID: a router rewrites it, the ICRC stays
  h[7] = std::byte{0x99};
  CHECK(icrc_ok(IcrcEncap::IbGlobal, std::span<const std::byte>(h).first(h.size() - 2)));
}
