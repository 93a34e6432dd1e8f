// RecordQueue: whole records in a ring that grows on demand up to the send
// buffer size and costs what it holds.
#include "fabrics/ip/tcp/record_queue.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

using namespace rdmasim;

namespace {

void put(RecordQueue& q, size_t n, uint8_t fill, bool solo = false) {
  auto s = q.reserve(n);
  REQUIRE(s.size() == n);
  std::memset(s.data(), fill, n);
  q.commit(solo);
}

}  // namespace

TEST_CASE("tcp: the send buffer allocates only what it holds, up to its limit") {
  RecordQueue q(1 << 20);
  CHECK(q.allocated() == 0);  // a connection that never sends costs nothing
  put(q, 100, 1);
  CHECK(q.allocated() == 4096);
  for (int i = 0; i < 60; ++i) put(q, 1000, static_cast<uint8_t>(i + 2));
  CHECK(q.used() == 60'100);
  CHECK(q.allocated() == 64 << 10);  // doubled as records arrived
  // Growing moved the records: their bytes are where the offsets say.
  std::vector<std::byte> out(2048);
  q.copy_out(100 + 59 * 1000, 1000, out.data());
  CHECK(std::count(out.begin(), out.begin() + 1000, std::byte{61}) == 1000);
  q.copy_out(0, 100, out.data());
  CHECK(out[99] == std::byte{1});
  CHECK(q.segment_length(100, 3000) == 3000);

  // The limit holds: more than it never fits, acknowledged bytes make room.
  RecordQueue small(8192);
  for (int i = 0; i < 8; ++i) put(small, 1024, static_cast<uint8_t>(i));
  CHECK(small.allocated() == 8192);
  CHECK(small.reserve(1).empty());
  small.release_before(2048);
  CHECK(small.used() == 6144);
  put(small, 2048, 9);  // wraps to the ring's start
  CHECK(small.allocated() == 8192);
  small.copy_out(8192, 2048, out.data());
  CHECK(out[0] == std::byte{9});

  small.release_all();
  CHECK(small.allocated() == 0);
  CHECK(small.end_offset() == 8192 + 2048);
}

TEST_CASE("tcp: an acknowledged send buffer gives a large ring's memory back and keeps its layout") {
  // A finished flow's connection stays open until the run ends: it held a
  // megabyte of ring for nothing.
  RecordQueue q(1 << 20);
  for (int i = 0; i < 200; ++i) put(q, 4096, static_cast<uint8_t>(i));
  CHECK(q.allocated() == 1 << 20);
  q.release_before(100 * 4096);
  CHECK(q.allocated() == 1 << 20);  // records still held: nothing goes
  q.release_before(q.end_offset());
  CHECK(q.used() == 0);
  CHECK(q.allocated() == 0);
  // The next record takes the ring again, at its size (so records lie
  // where they did), and its bytes are right.
  put(q, 3000, 7);
  CHECK(q.allocated() == 1 << 20);
  std::vector<std::byte> out(3000);
  q.copy_out(200 * 4096, 3000, out.data());
  CHECK(std::count(out.begin(), out.end(), std::byte{7}) == 3000);

  // A small ring stays: what a connection of small records reuses.
  RecordQueue small(1 << 20);
  put(small, 1000, 1);
  small.release_before(small.end_offset());
  CHECK(small.allocated() == 4096);
}
