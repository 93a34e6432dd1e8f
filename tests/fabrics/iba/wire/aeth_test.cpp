#include "fabrics/iba/wire/aeth.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;
using rdmasim::test::hex;

TEST_CASE("aeth: a captured ACK, syndrome 0 (ACK, 0 credits) MSN 5") {
  const auto bytes = hex("00 00 00 05");
  const auto v = ConstAethView::check(bytes);
  REQUIRE(v);
  CHECK(v->syndrome() == 0);
  CHECK(v->msn() == 5);
  const Aeth a = Aeth::parse(*v);
  CHECK(a.type() == AethType::Ack);
  CHECK(a.value() == 0);
  std::vector<std::byte> out(4, std::byte{0xEE});
  a.emit(*AethView::check(out));
  CHECK(out == bytes);
  CHECK_FALSE(AethView::check(std::span<std::byte>(out).first(3)));
}

TEST_CASE("aeth: syndromes of ACK, RNR NAK and NAK (IBA 9.7.5.2.1)") {
  std::vector<std::byte> out(4);
  Aeth::ack(0xABCDEF).emit(*AethView::check(out));
  CHECK(out == hex("1f ab cd ef"));  // credits invalid: 0 00 11111
  Aeth::rnr_nak(7, 14).emit(*AethView::check(out));
  CHECK(out == hex("2e 00 00 07"));  // 0 01 01110
  Aeth::nak(9, NakCode::PsnSequenceError).emit(*AethView::check(out));
  CHECK(out == hex("60 00 00 09"));
  Aeth::nak(9, NakCode::InvalidRequest).emit(*AethView::check(out));
  CHECK(out[0] == std::byte{0x61});
  Aeth::nak(9, NakCode::RemoteAccessError).emit(*AethView::check(out));
  CHECK(out[0] == std::byte{0x62});
  Aeth::nak(9, NakCode::RemoteOperationalError).emit(*AethView::check(out));
  CHECK(out[0] == std::byte{0x63});
  Aeth::nak(9, NakCode::InvalidRdRequest).emit(*AethView::check(out));
  CHECK(out[0] == std::byte{0x64});

  const Aeth n = Aeth::parse(*ConstAethView::check(out));
  CHECK(n.type() == AethType::Nak);
  CHECK(n.nak_code() == NakCode::InvalidRdRequest);
  CHECK(aeth_type(0x2e) == AethType::RnrNak);
  CHECK(aeth_value(0x2e) == 14);
  CHECK(aeth_type(0x40) == AethType::Reserved);
}

TEST_CASE("aeth: credit count encoding (IBA Table 44)") {
  const uint32_t table[31] = {0,    1,    2,    3,    4,    6,     8,     12,    16,   24,   32,
                              48,   64,   96,   128,  192,  256,   384,   512,   768,  1024, 1536,
                              2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768};
  for (uint8_t c = 0; c < 31; ++c) {
    CHECK(aeth_credits(c) == table[c]);
    CHECK(aeth_credit_code(table[c]) == c);
  }
  CHECK_FALSE(aeth_credits(31));
  CHECK(aeth_credit_code(5) == 4);  // rounds down: 4 credits
  CHECK(aeth_credit_code(1'000'000) == 30);
}

TEST_CASE("aeth: RNR NAK timer encoding (IBA Table 45)") {
  // In units of 10 us; code 0 is the longest, 655.36 ms.
  const uint32_t table[32] = {65536, 1,    2,    3,    4,    6,     8,     12,    16,    24,   32,
                              48,    64,   96,   128,  192,  256,   384,   512,   768,   1024, 1536,
                              2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};
  for (uint8_t c = 0; c < 32; ++c) CHECK(rnr_timer_duration(c) == 10_us * table[c]);
  CHECK(rnr_timer_duration(14) == 1280_us);  // "1.28 ms"
}
