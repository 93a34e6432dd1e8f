#include "apps/progress.hpp"

#include <doctest/doctest.h>

#include <sstream>

using namespace rdmasim;

TEST_CASE("ProgressLine: one line rewritten in place, with the time left when stop is set") {
  std::ostringstream out;
  ProgressLine line(out, Time::ms(5), true);
  CHECK_FALSE(line.due());  // nothing in the first second
  line.update(Time::ms(1), 2'000'000, 1'234'567, 312);
  const std::string first = out.str();
  CHECK(first.starts_with("\rsimulated 1.000 ms of 5.000 ms | "));
  CHECK(first.find(" M events/s | 1,234,567 frames | 312 flows done | ") != std::string::npos);
  CHECK(first.find(" s left") != std::string::npos);
  CHECK(first.find('\n') == std::string::npos);
  line.update(Time::ms(2), 4'000'000, 2'000'000, 400);
  CHECK(out.str().substr(first.size()).starts_with("\rsimulated 2.000 ms of 5.000 ms"));
  line.finish();
  CHECK(out.str().ends_with("\n"));
}

TEST_CASE("ProgressLine: without stop, no estimate; without flows, no flow count; silent if never shown") {
  std::ostringstream out;
  ProgressLine line(out, std::nullopt, false);
  line.update(Time::us(3), 10, 20, 0);
  CHECK(out.str().starts_with("\rsimulated 3.000 us | "));
  CHECK(out.str().find("flows") == std::string::npos);
  CHECK(out.str().find("left") == std::string::npos);
  std::ostringstream quiet;
  ProgressLine unused(quiet, Time::ms(1), false);
  unused.finish();
  CHECK(quiet.str().empty());
}
