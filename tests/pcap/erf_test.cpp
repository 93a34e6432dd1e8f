#include "pcap/erf.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

TEST_CASE("erf: record header for an IB frame, little-endian timestamp, big-endian lengths") {
  // 1.5 s: seconds 1, fraction 0x80000000; type 21, varying length; a
  // 60-byte frame: rlen 76, wlen 60.
  const auto bytes = hex("00 00 00 80 01 00 00 00  15 04 00 4c 00 00 00 3c");
  const ErfHeader h = ErfHeader::infiniband(1'500'000'000, 60);
  std::vector<std::byte> out(16, std::byte{0xEE});
  h.emit(*ErfView::check(out));
  CHECK(out == bytes);
  const auto v = ConstErfView::check(bytes);
  REQUIRE(v);
  CHECK(v->type() == kErfTypeInfiniband);
  CHECK_FALSE(v->has_extension());
  CHECK(v->flags() == kErfFlagVaryingLength);
  CHECK(v->rlen() == 76);
  CHECK(v->lctr() == 0);
  CHECK(v->wlen() == 60);
  CHECK(v->timestamp() == (uint64_t{1} << 32 | 0x80000000));
  CHECK(ErfHeader::parse(*v) == h);
  CHECK_FALSE(ErfView::check(std::span<std::byte>(out).first(15)));
}

TEST_CASE("erf: nanosecond timestamps survive the 32.32 round trip") {
  for (uint64_t ns : {uint64_t{0}, uint64_t{1}, uint64_t{999'999'999}, uint64_t{1'000'000'000},
                      uint64_t{123'456'789'012}, uint64_t{4'000'000'000'000'000'000}}) {
    CAPTURE(ns);
    CHECK(erf_timestamp_to_ns(erf_timestamp_from_ns(ns)) == ns);
  }
  CHECK((erf_timestamp_from_ns(999'999'999) >> 32) == 0);
  CHECK(erf_timestamp_from_ns(1'000'000'000) == uint64_t{1} << 32);
}
