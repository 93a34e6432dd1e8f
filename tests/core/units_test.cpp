#include "core/units.hpp"

#include <doctest/doctest.h>

#include <string>

#include "core/random.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

TEST_CASE("parse_time accepts whole picoseconds in any unit") {
  CHECK(parse_time("1us") == 1_us);
  CHECK(parse_time("1.5us") == 1500_ns);
  CHECK(parse_time("500 ns") == 500_ns);
  CHECK(parse_time(" 10ms ") == 10_ms);
  CHECK(parse_time("1s") == 1_s);
  CHECK(parse_time("250ps") == 250_ps);
  CHECK(parse_time("4096") == 4096_ps);  // a plain number is picoseconds
  CHECK(parse_time("0") == Time());
  CHECK(parse_time("0.001ns") == 1_ps);
  CHECK(parse_time("1_000ns") == 1_us);
  CHECK(parse_time("1.500us") == 1500_ns);
  CHECK(parse_time("2e3ns") == 2_us);
  CHECK(parse_time("1.0000001ms") == Time::ps(1'000'000'100));
  CHECK(parse_time("9223372036854775807ps") == Time::max());
}

TEST_CASE("parse_time rejects what is not a whole, non-negative time") {
  for (const char* bad :
       {"-1us", "1.5ps", "abc", "10 parsecs", "", "us", "1.0000001us", "1..5us", "0x10ns", "1 u s", "1us2",
        "9223372036854775808ps", "100000000s", "inf", "nan", "1e99s", "_1ns"}) {
    CAPTURE(bad);
    std::string why;
    CHECK_FALSE(parse_time(bad, &why).has_value());
    CHECK(why.find(std::string("'") + bad + "'") != std::string::npos);  // the error names the input
  }
}

TEST_CASE("parse_bytes and parse_rate") {
  CHECK(parse_bytes("64KiB") == 64_KiB);
  CHECK(parse_bytes("1MiB") == 1_MiB);
  CHECK(parse_bytes("4096") == Bytes(4096));
  CHECK(parse_bytes("4096B") == Bytes(4096));
  CHECK(parse_bytes("1.5KiB") == Bytes(1536));
  CHECK(parse_bytes("2GiB") == 2_GiB);
  CHECK(parse_bytes("9KB") == Bytes(9000));
  CHECK_FALSE(parse_bytes("0.1KiB"));  // 102.4 bytes
  CHECK_FALSE(parse_bytes("-1B"));
  CHECK_FALSE(parse_bytes("64kib"));
  CHECK_FALSE(parse_bytes("20000000000GiB"));

  CHECK(parse_rate("100Gbps") == 100_Gbps);
  CHECK(parse_rate("25Gbps") == 25_Gbps);
  CHECK(parse_rate("2.5Gbps") == DataRate(2'500'000'000));
  CHECK(parse_rate("100Mbps") == 100_Mbps);
  CHECK(parse_rate("1Tbps") == DataRate(1'000'000'000'000));
  std::string why;
  CHECK_FALSE(parse_rate("0Gbps", &why));
  CHECK(why.find("above 0") != std::string::npos);
  CHECK_FALSE(parse_rate("1.5bps"));
  CHECK_FALSE(parse_rate("fast"));
  CHECK_FALSE(parse_rate("100GB"));
}

TEST_CASE("to_string is exact and short, and parses back") {
  CHECK(to_string(1500_ns) == "1.5us");
  CHECK(to_string(1_us) == "1us");
  CHECK(to_string(Time()) == "0ps");
  CHECK(to_string(Time::ps(1'234'567)) == "1234.567ns");
  CHECK(to_string(Time::ps(1'000'000'000'001)) == "1000000000.001ns");
  CHECK(to_string(Time::ps(7)) == "7ps");
  CHECK(to_string(Time() - 1_us) == "-1us");
  CHECK(to_string(Time::ps(INT64_MIN)) == "-9223372036854775.808ns");
  CHECK(to_string(64_KiB) == "64KiB");
  CHECK(to_string(Bytes(1536)) == "1.5KiB");
  CHECK(to_string(Bytes(1100)) == "1100B");
  CHECK(to_string(Bytes(0)) == "0B");
  CHECK(to_string(100_Gbps) == "100Gbps");
  CHECK(to_string(DataRate(2'500'000'000)) == "2.5Gbps");
  CHECK(to_string(DataRate(1)) == "1bps");

  Rng rng(9);
  for (int i = 0; i < 20000; ++i) {
    const Time t = Time::ps(static_cast<int64_t>(rng.next() >> rng.between(1, 63)));
    REQUIRE(parse_time(to_string(t)) == t);
    const Bytes b(rng.next() >> rng.between(0, 63));
    REQUIRE(parse_bytes(to_string(b)) == b);
    const DataRate r(1 + (rng.next() >> rng.between(1, 63)));
    REQUIRE(parse_rate(to_string(r)) == r);
  }
  CHECK(parse_time(to_string(Time::max())) == Time::max());
}

TEST_CASE("DataRate::tx_time is exact, rounding up to a whole picosecond") {
  CHECK((100_Gbps).tx_time(4096) == 327680_ps);  // 32768 bits at 10 ps a bit
  CHECK((25_Gbps).tx_time(4096) == 1310720_ps);
  CHECK((100_Gbps).tx_time(0) == Time());
  CHECK((100_Gbps).tx_time(1) == 80_ps);
  CHECK(DataRate(3).tx_time(1) == Time::ps(2'666'666'666'667));  // 8/3 s, rounded up
  // Large transfers do not overflow: 1 GiB at 1 Gbps is 8.589934592 s.
  CHECK(DataRate(1'000'000'000).tx_time(1ull << 30) == Time::ps(8'589'934'592'000));
}
