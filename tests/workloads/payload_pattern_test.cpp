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

TEST_CASE("SlotPattern: a slot holds its first message with one record a stamp naming the current one") {
  const PayloadPattern p("w");
  // Two slots of 100 bytes, a stamp every 64 bytes, messages numbered from 10.
  SlotPattern s(p, 10, 2, 100, 64);
  CHECK(s.size() == 200);
  auto bytes = [&](uint64_t off, size_t n) {
    std::vector<std::byte> b(n);
    s.fill(off, b);
    return b;
  };
  auto message = [&](uint64_t m, uint64_t off, size_t n) {
    std::vector<std::byte> b(n);
    p.fill(m, off, b);
    return b;
  };
  // First use: slot 1 is message 1 (pattern 11) whole.
  CHECK(bytes(100, 100) == message(11, 0, 100));
  s.put(3);  // message 3 through slot 1: the records at 0 and 64 name it
  CHECK(bytes(100, 32) == message(13, 0, 32));
  CHECK(bytes(132, 32) == message(11, 32, 32));
  CHECK(bytes(164, 32) == message(13, 64, 32));
  CHECK(bytes(196, 4) == message(11, 96, 4));
  CHECK(bytes(0, 100) == message(10, 0, 100));  // slot 0 untouched
  // A piece across records and slots is the same piece of the whole.
  const auto whole = bytes(0, 200);
  CHECK(bytes(90, 50) == std::vector<std::byte>(whole.begin() + 90, whole.begin() + 140));
  CHECK(s.matches(90, std::vector<std::byte>(whole.begin() + 90, whole.begin() + 140)));
  auto wrong = whole;
  wrong[170] ^= std::byte{1};
  CHECK_FALSE(s.matches(0, wrong));
  CHECK_FALSE(s.matches(100, bytes(0, 100)));  // slot 0's bytes at slot 1
}
