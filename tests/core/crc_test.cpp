#include "core/crc.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/bytes.hpp"
#include "core/random.hpp"

using namespace rdmasim;

namespace {

std::span<const std::byte> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

template <size_t N>
std::vector<std::byte> bytes_of(const std::array<uint8_t, N>& a) {
  std::vector<std::byte> v;
  for (uint8_t b : a) v.push_back(std::byte{b});
  return v;
}

// Reference CRCs written as the specs describe them, one bit at a time in
// the unreflected form: bits of each byte enter least significant first, the
// register shifts left and is reflected at the end. Deliberately unlike the
// sliced table code under test.
uint32_t reflect(uint32_t v, int width) {
  uint32_t r = 0;
  for (int i = 0; i < width; ++i)
    if (v & (1u << i)) r |= 1u << (width - 1 - i);
  return r;
}
uint32_t bitwise_crc(std::span<const std::byte> data, int width, uint32_t poly) {
  const uint32_t top = 1u << (width - 1);
  const uint32_t mask = width == 32 ? 0xFFFFFFFFu : (1u << width) - 1;
  uint32_t reg = mask;
  for (std::byte byte : data) {
    for (int i = 0; i < 8; ++i) {
      const bool in = (u8(byte) >> i) & 1;
      const bool msb = reg & top;
      reg = (reg << 1) & mask;
      if (in != msb) reg ^= poly;
    }
  }
  return reflect(reg, width) ^ mask;
}

// IBA 1.x Table 29, the CRC example packet: a local (LRH, no GRH) packet of
// 52 bytes before the ICRC. Its VL nibble (byte 0) and BTH reserved byte
// (byte 12) are already ones, so the ICRC covers these bytes as they are.
constexpr std::array<uint8_t, 52> kIbaExample = {
    0xF0, 0x12, 0x37, 0x5C, 0x00, 0x0E, 0x17, 0xD2, 0x0A, 0x20, 0x24, 0x87, 0xFF,
    0x87, 0xB1, 0xB3, 0x00, 0x0D, 0xEC, 0x2A, 0x01, 0x71, 0x0A, 0x1C, 0x01, 0x5D,
    0x40, 0x02, 0x38, 0xF2, 0x7A, 0x05, 0x00, 0x00, 0x00, 0x0E, 0xBB, 0x88, 0x4D,
    0x85, 0xFD, 0x5C, 0xFB, 0xA4, 0x72, 0x8B, 0xC0, 0x69, 0x0E, 0xD4, 0x00, 0x00};

}  // namespace

TEST_CASE("crc check values of \"123456789\"") {
  CHECK(crc32(as_bytes("123456789")) == 0xCBF43926);
  CHECK(crc32c(as_bytes("123456789")) == 0xE3069283);
  CHECK(crc32(as_bytes("")) == 0);
  CHECK(crc32c(as_bytes("")) == 0);
  CHECK(vcrc16(as_bytes("")) == 0);
  // The VCRC has no entry in the CRC catalogues; its check value comes from
  // the bitwise reference below (and from the MPGA table entries, see crc.cpp).
  CHECK(vcrc16(as_bytes("123456789")) == bitwise_crc(as_bytes("123456789"), 16, 0x100B));
}

TEST_CASE("ICRC of the IBA spec example packet, and its wire bytes") {
  const auto pkt = bytes_of(kIbaExample);
  const uint32_t icrc = crc32(pkt);
  CHECK(icrc == 0x5AB72596);
  std::array<std::byte, 4> wire{};
  store_le32(wire, icrc);
  CHECK(wire == std::array<std::byte, 4>{std::byte{0x96}, std::byte{0x25}, std::byte{0xB7}, std::byte{0x5A}});
}

TEST_CASE("VCRC of the IBA spec example packet") {
  // VCRC covers LRH through ICRC: the 52 bytes then the ICRC bytes 96 25 B7 5A.
  auto pkt = bytes_of(kIbaExample);
  for (uint8_t b : {0x96, 0x25, 0xB7, 0x5A}) pkt.push_back(std::byte{b});
  const uint16_t vcrc = vcrc16(pkt);
  CHECK(vcrc == bitwise_crc(pkt, 16, 0x100B));
  CHECK(vcrc == 0xE508);  // pinned: a change of reflection, init or xor breaks it

  // A receiver that runs the CRC over the packet and the VCRC as sent (low
  // byte first) ends on the fixed residue of this CRC, whatever the packet.
  auto with_vcrc = pkt;
  with_vcrc.push_back(std::byte(vcrc & 0xFF));
  with_vcrc.push_back(std::byte(vcrc >> 8));
  const uint16_t residue = vcrc16(with_vcrc);
  Rng rng(7);
  std::vector<std::byte> other(97);
  for (auto& b : other) b = std::byte(rng.next());
  const uint16_t v2 = vcrc16(other);
  other.push_back(std::byte(v2 & 0xFF));
  other.push_back(std::byte(v2 >> 8));
  CHECK(vcrc16(other) == residue);
  // A single flipped bit anywhere is detected.
  with_vcrc[20] ^= std::byte{0x08};
  CHECK(vcrc16(with_vcrc) != residue);
}

TEST_CASE("sliced CRCs match the bitwise reference at every length and alignment") {
  Rng rng(42);
  std::vector<std::byte> buf(300);
  for (auto& b : buf) b = std::byte(rng.next());
  for (size_t off = 0; off < 8; ++off) {
    for (size_t len = 0; len + off <= buf.size(); len += (len < 40 ? 1 : 37)) {
      const std::span<const std::byte> s(buf.data() + off, len);
      CAPTURE(off);
      CAPTURE(len);
      CHECK(crc32(s) == bitwise_crc(s, 32, 0x04C11DB7));
      CHECK(crc32c(s) == bitwise_crc(s, 32, 0x1EDC6F41));
      CHECK(vcrc16(s) == bitwise_crc(s, 16, 0x100B));
    }
  }
}

TEST_CASE("incremental updates equal the one-shot CRC, split anywhere") {
  Rng rng(3);
  std::vector<std::byte> buf(257);
  for (auto& b : buf) b = std::byte(rng.next());
  const std::span<const std::byte> all(buf);
  for (size_t cut = 0; cut <= buf.size(); cut += 13) {
    CAPTURE(cut);
    CHECK(crc32_finish(crc32_update(crc32_update(kCrcInit, all.first(cut)), all.subspan(cut))) == crc32(all));
    CHECK(crc32c_finish(crc32c_update(crc32c_update(kCrcInit, all.first(cut)), all.subspan(cut))) ==
          crc32c(all));
    CHECK(vcrc16_finish(vcrc16_update(vcrc16_update(kVcrcInit, all.first(cut)), all.subspan(cut))) ==
          vcrc16(all));
  }
}
