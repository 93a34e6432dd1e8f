#include "workloads/payload_pattern.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace rdmasim;

namespace {
std::string text(const std::vector<std::byte>& b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}
}  // namespace

TEST_CASE("PayloadPattern: readable records that name workload, message and offset") {
  const PayloadPattern p("w0");
  std::vector<std::byte> b(64);
  p.fill(42, 0, b);
  CHECK(text(b) == "w0       m00000042 @00000000000\nw0       m00000042 @00000000020\n");
  // A long name is cut to 8 characters; the message number wraps at 10^8.
  std::vector<std::byte> c(32);
  PayloadPattern("websearch_flows").fill(100'000'007, 0x1000, c);
  CHECK(text(c) == "websearc m00000007 @00000001000\n");
}

TEST_CASE("PayloadPattern: any piece equals the same piece of the whole message") {
  const PayloadPattern p("flows");
  std::vector<std::byte> whole(1000);
  p.fill(7, 0, whole);
  for (size_t off : {0, 1, 31, 32, 33, 500, 999}) {
    std::vector<std::byte> piece(std::min<size_t>(77, whole.size() - off));
    p.fill(7, off, piece);
    CHECK(std::equal(piece.begin(), piece.end(), whole.begin() + static_cast<ptrdiff_t>(off)));
    CHECK(p.matches(7, off, piece));
  }
  // Same input, same bytes, every time.
  std::vector<std::byte> again(1000);
  p.fill(7, 0, again);
  CHECK(again == whole);
}

TEST_CASE("PayloadPattern: wrong bytes, another message or another offset do not match") {
  const PayloadPattern p("w1");
  std::vector<std::byte> b(256);
  p.fill(3, 64, b);
  CHECK(p.matches(3, 64, b));
  CHECK_FALSE(p.matches(4, 64, b));  // another message's bytes
  CHECK_FALSE(p.matches(3, 96, b));  // placed at the wrong offset
  CHECK_FALSE(PayloadPattern("w2").matches(3, 64, b));
  b[200] ^= std::byte{1};  // one corrupted byte
  CHECK_FALSE(p.matches(3, 64, b));
}
