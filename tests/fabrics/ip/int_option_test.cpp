#include "fabrics/ip/wire/int_option.hpp"

#include <doctest/doctest.h>

#include <array>

using namespace rdmasim;
using namespace rdmasim::literals;

TEST_CASE("IntOption: bytes of an option with one sample, and the round trip") {
  std::array<std::byte, IntOption::kLen> b{};
  IntStack s;
  IntOption o = IntOption::emit(b, s, false);
  CHECK(u8(b[0]) == 0x5E);  // copy 0, class 2 (measurement), number 30 (RFC 4727)
  CHECK(u8(b[1]) == 40);
  CHECK(u8(b[2]) == 0x00);
  // rate index 9 (100 Gb/s), ts 0x3FFFFF, tx 1, qlen 2
  IntHop h;
  h.rate = 9;
  h.ts = 0x3FFFFF;
  h.tx = 1;
  h.qlen = 2;
  CHECK(o.push(h));
  // echo 0, hops 001, then rate 1001 | ts 22 ones | tx 17 bits 0...01 | qlen 17 bits 0...010
  CHECK(u8(b[2]) == 0x19);
  CHECK(u8(b[3]) == 0xFF);
  CHECK(u8(b[4]) == 0xFF);
  CHECK(u8(b[5]) == 0xFC);  // the last 6 ts bits (data bits 24..29), then tx's first 2 bits
  CHECK(u8(b[6]) == 0x00);
  CHECK(u8(b[7]) == 0x02);  // tx's last bit is data bit 46; qlen starts at bit 47
  CHECK(u8(b[8]) == 0x00);
  CHECK(u8(b[9]) == 0x02);  // qlen 2: data bit 62
  auto again = IntOption::find(b);
  REQUIRE(again);
  CHECK(!again->echo());
  CHECK(again->stack().hops == 1);
  CHECK(again->stack().hop[0] == h);
  for (int i = 0; i < 4; ++i) CHECK(again->push(h));
  CHECK(!again->push(h));  // five samples fill it
  CHECK(again->stack().hops == 5);
  // An echo is left alone by switches.
  std::array<std::byte, IntOption::kLen> e{};
  IntOption echo = IntOption::emit(e, again->stack(), true);
  CHECK(echo.echo());
  CHECK(!echo.push(h));
  CHECK(IntOption::find(e)->stack() == again->stack());
  b[0] = std::byte{0x44};  // another option (timestamp) is not ours
  CHECK(!IntOption::find(b));
}

TEST_CASE("IntOption: five different samples, each field at its widest, read back unchanged") {
  std::array<std::byte, IntOption::kLen> b{};
  IntStack s;
  s.hops = IntStack::kMaxHops;
  for (uint32_t i = 0; i < IntStack::kMaxHops; ++i) {
    IntHop& h = s.hop[i];
    h.rate = static_cast<uint8_t>(i % 2 ? 15 : 1 + i);
    h.ts = i == 2 ? 0x3FFFFF : 0x2AAAAA ^ (i * 0x1111);
    h.tx = i == 3 ? 0x1FFFF : 0x15555 ^ (i * 0x101);
    h.qlen = i == 4 ? 0x1FFFF : (0x0AAAA + i) & 0x1FFFF;
  }
  IntOption::emit(b, s, true);
  auto o = IntOption::find(b);
  REQUIRE(o);
  CHECK(o->echo());
  CHECK(o->stack() == s);
  CHECK(u8(b[39]) == (s.hop[4].qlen & 0xFF));  // the last sample ends at the option's last byte
}
