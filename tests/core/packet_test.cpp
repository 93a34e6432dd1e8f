#include "core/packet.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstring>
#include <utility>

#include "core/ring.hpp"

using namespace rdmasim;

namespace {

std::array<std::byte, 64> pattern() {
  std::array<std::byte, 64> a{};
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::byte>(i * 7 + 1);
  return a;
}

}  // namespace

TEST_CASE("a deferred payload is read in when the frame's bytes are needed") {
  PacketPool pool;
  const auto src = pattern();
  Packet p = pool.make(32);
  auto place = p.push_back(src.size());
  p.defer(place, src.data());
  std::memset(p.push_back(4).data(), 0xEE, 4);   // a trailer after the payload
  std::memset(p.push_front(8).data(), 0xAA, 8);  // a header in front
  CHECK(p.deferred());
  CHECK(p.size() == 8 + src.size() + 4);

  SUBCASE("source_of hands the sender's bytes over without a copy") {
    const auto part = p.raw_bytes().subspan(8, src.size());
    const Payload got = p.source_of(part);
    CHECK(!got.computed());
    CHECK(got.stored().data() == src.data());
    CHECK(got.size() == src.size());
    CHECK(p.deferred());
  }
  SUBCASE("a part that is not the whole payload is read in first") {
    const auto part = p.raw_bytes().subspan(8, 16);
    const auto got = p.source_of(part).stored();
    CHECK(got.data() == part.data());
    CHECK(!p.deferred());
    CHECK(std::memcmp(got.data(), src.data(), 16) == 0);
  }
  SUBCASE("bytes() reads it in; headers around it are untouched") {
    const auto b = std::as_const(p).bytes();
    CHECK(!p.deferred());
    CHECK(b[0] == std::byte{0xAA});
    CHECK(std::memcmp(b.data() + 8, src.data(), src.size()) == 0);
    CHECK(b[8 + src.size()] == std::byte{0xEE});
  }
  SUBCASE("a clone carries the payload's bytes") {
    Packet c = p.clone();
    CHECK(!c.deferred());
    CHECK(std::memcmp(c.bytes().data() + 8, src.data(), src.size()) == 0);
  }
  SUBCASE("a buffer handed out again has nothing deferred") {
    p = Packet{};
    Packet q = pool.make(32);
    CHECK(!q.deferred());
    std::memset(q.push_back(src.size()).data(), 0x55, src.size());
    CHECK(q.bytes()[0] == std::byte{0x55});
  }
}

TEST_CASE("a parked frame holds no room for its deferred payload and reads back the same") {
  PacketPool pool;
  std::array<std::byte, 1024> src{};
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(i * 13 + 5);
  Packet p = pool.make(128, 1024 + 4);
  p.defer(p.push_back(src.size()), src.data());
  std::memset(p.push_back(4).data(), 0xEE, 4);     // an ICRC's place behind the payload
  std::memset(p.push_front(60).data(), 0xAA, 60);  // headers in front
  p.meta().priority = 3;
  const size_t size = p.size();
  const size_t big = p.capacity();
  CHECK(big >= 128 + 1024 + 4);

  const size_t carved = pool.carved_bytes();
  p.park();
  CHECK(p.parked());
  CHECK(pool.carved_bytes() - carved == sizeof(PacketBuffer) + 64);  // the smallest class: headers and ICRC
  CHECK(p.size() == size);
  CHECK(p.meta().priority == 3);
  CHECK(pool.in_use() == 1);
  p.park();  // again: nothing changes
  CHECK(p.parked());

  SUBCASE("its headers, payload and trailer come back at their places when read") {
    const auto b = p.bytes();
    CHECK_FALSE(p.parked());
    CHECK(p.capacity() >= size + 68);
    CHECK(b[0] == std::byte{0xAA});
    CHECK(b[59] == std::byte{0xAA});
    CHECK(std::memcmp(b.data() + 60, src.data(), src.size()) == 0);
    CHECK(b[60 + src.size()] == std::byte{0xEE});
    CHECK(b[size - 1] == std::byte{0xEE});
  }
  SUBCASE("raw_bytes() unparks with the payload still deferred, and source_of hands it over") {
    const auto part = p.raw_bytes().subspan(60, src.size());
    CHECK_FALSE(p.parked());
    CHECK(p.deferred());
    CHECK(p.raw_bytes()[size - 4] == std::byte{0xEE});
    CHECK(p.source_of(part).stored().data() == src.data());
  }
  SUBCASE("header_bytes() reads and rewrites the headers where they are, parked") {
    const auto h = p.header_bytes();
    CHECK(p.parked());
    REQUIRE(h.size() == 60);
    CHECK(h[0] == std::byte{0xAA});
    h[1] = std::byte{0x55};  // a switch rewriting a header field
    CHECK(p.parked());
    const auto b = p.bytes();
    CHECK(b[1] == std::byte{0x55});
    CHECK(std::memcmp(b.data() + 60, src.data(), src.size()) == 0);
    CHECK(b[size - 1] == std::byte{0xEE});
  }
  SUBCASE("the small buffer goes back to its class; the frame keeps its id") {
    const uint64_t id = p.meta().id;
    p.unpark();
    CHECK(p.meta().id == id);
    CHECK(pool.in_use() == 1);
  }
  SUBCASE("a frame whose payload was read in, or small, is not parked") {
    Packet q = pool.make(128, 64);
    q.defer(q.push_back(64), src.data());
    q.park();
    CHECK_FALSE(q.parked());
    (void)p.bytes();
    p.park();
    CHECK_FALSE(p.parked());
  }
}

TEST_CASE("pad_to appends zeros behind the frame, deferred payload and trailer included, up to a length") {
  PacketPool pool;
  const auto src = pattern();
  Packet p = pool.make(32, 128);
  std::memset(p.push_back(50).data(), 0xAA, 50);  // 50 bytes of headers
  p.pad_to(60);
  REQUIRE(p.size() == 60);
  const auto b = std::as_const(p).bytes();
  CHECK(b[49] == std::byte{0xAA});
  for (size_t i = 50; i < 60; ++i) CHECK(b[i] == std::byte{0});
  p.pad_to(60);  // as long already: unchanged
  p.pad_to(20);
  CHECK(p.size() == 60);

  // Behind a deferred payload and its trailer; the payload is still deferred.
  Packet q = pool.make(32, 128);
  std::memset(q.push_back(8).data(), 0xAA, 8);
  q.defer(q.push_back(6), src.data());
  std::memset(q.push_back(4).data(), 0xEE, 4);
  q.pad_to(60);
  CHECK(q.deferred());
  REQUIRE(q.size() == 60);
  const auto c = q.bytes();
  CHECK(std::memcmp(c.data() + 8, src.data(), 6) == 0);
  CHECK(c[17] == std::byte{0xEE});
  for (size_t i = 18; i < 60; ++i) CHECK(c[i] == std::byte{0});

  // A frame long enough stays parked: padding does not read its bytes.
  std::array<std::byte, 1024> big{};
  Packet r = pool.make(128, 1024 + 4);
  r.defer(r.push_back(big.size()), big.data());
  std::memset(r.push_front(60).data(), 0xAA, 60);
  r.park();
  REQUIRE(r.parked());
  r.pad_to(60);
  CHECK(r.parked());
  CHECK(r.size() == 1084);
}

TEST_CASE("a switch's PFC count rides with the frame, not with its copies or its next buffer") {
  PacketPool pool;
  Packet p = pool.make(32);
  p.push_back(100);
  p.meta().pfc_class = 3;
  p.meta().pfc_port = 7;
  p.meta().pfc_bytes = 100;
  SUBCASE("growing into a larger buffer keeps it: the same frame, still held") {
    p.push_back(2000);
    CHECK(p.meta().pfc_bytes == 100);
    CHECK(p.meta().pfc_port == 7);
    CHECK(p.meta().pfc_class == 3);
  }
  SUBCASE("a flood copy was never received, so nothing holds it") {
    Packet c = p.clone();
    CHECK(c.meta().pfc_bytes == 0);
    CHECK(p.meta().pfc_bytes == 100);
  }
  SUBCASE("a buffer handed out again starts unheld") {
    p = Packet{};
    CHECK(pool.make(32).meta().pfc_bytes == 0);
  }
}

TEST_CASE("a ring keeps FIFO order across growth and wrap-around") {
  Ring<Packet> r;
  PacketPool pool;
  uint64_t pushed = 0, popped = 0;
  for (int round = 0; round < 50; ++round) {
    for (int k = 0; k < round % 13 + 1; ++k) {
      Packet p = pool.make();
      p.meta().flow_hash = static_cast<uint32_t>(pushed++);
      r.push_back(std::move(p));
    }
    for (int k = 0; k < round % 7 + 1 && !r.empty(); ++k) CHECK(r.take_front().meta().flow_hash == popped++);
  }
  CHECK(r.size() == pushed - popped);
  r.remove_if([](const Packet& p) { return p.meta().flow_hash % 2 == 0; });
  uint32_t last = 0;
  bool first = true;
  for (size_t i = 0; i < r.size(); ++i) {
    CHECK(r[i].meta().flow_hash % 2 == 1);
    if (!first) CHECK(r[i].meta().flow_hash > last);
    last = r[i].meta().flow_hash;
    first = false;
  }
  r.clear();
  CHECK(pool.in_use() == 0);
}

TEST_CASE("a packet's buffer is sized by what it asks for: ACK-sized, MTU-sized, jumbo") {
  PacketPool pool;
  CHECK(pool.make(128, 64).capacity() == 256);                // an ACK: headers only
  CHECK(pool.make(0, 64).capacity() == 64);                   // a PFC frame; a parked middle packet's headers
  CHECK(pool.make(0, 80).capacity() == 128);                  // a parked first packet's (with a RETH)
  CHECK(pool.make(146, 1024 + 64).capacity() == 1280);        // a 1 KiB-MTU data frame
  CHECK(pool.make(146, 4096 + 64).capacity() == 4352);        // a 4 KiB-MTU data frame
  CHECK(pool.make().capacity() == PacketPool::kMaxCapacity);  // room unknown: the largest
  CHECK(pool.make(0, 100000).capacity() == PacketPool::kMaxCapacity);
  CHECK(pool.in_use() == 0);

  // A buffer goes back to its own class and is handed out again: nothing more is carved.
  { Packet a = pool.make(64, 64), b = pool.make(64, 2000); }
  const size_t carved = pool.carved_bytes();
  for (int i = 0; i < 10; ++i) {
    Packet a = pool.make(64, 64), b = pool.make(64, 2000);
    CHECK(a.capacity() == 128);
    CHECK(b.capacity() == 2304);
  }
  CHECK(pool.carved_bytes() == carved);
  CHECK(pool.in_use() == 0);
}

TEST_CASE(
    "a frame that outgrows its buffer moves to a larger one, bytes, headroom, metadata and deferral intact") {
  PacketPool pool;
  const auto src = pattern();
  Packet p = pool.make(32, 16);
  CHECK(p.capacity() == 64);
  std::memset(p.push_back(16).data(), 0x11, 16);
  p.defer(p.push_back(src.size()), src.data());
  p.meta().flow_hash = 77;
  const uint64_t id = p.meta().id;
  std::memset(p.push_back(1000).data(), 0x22, 1000);  // past 64: moves
  CHECK(p.capacity() == 1280);
  CHECK(pool.in_use() == 1);
  CHECK(p.headroom() == 32);
  CHECK(p.size() == 16 + src.size() + 1000);
  CHECK(p.meta().flow_hash == 77);
  CHECK(p.meta().id == id);
  CHECK(p.deferred());
  std::memset(p.push_front(8).data(), 0x33, 8);
  const auto b = p.bytes();
  CHECK(b[0] == std::byte{0x33});
  CHECK(b[8] == std::byte{0x11});
  CHECK(std::memcmp(b.data() + 24, src.data(), src.size()) == 0);
  CHECK(b[24 + src.size()] == std::byte{0x22});
  CHECK(b.back() == std::byte{0x22});
  p = Packet{};
  CHECK(pool.in_use() == 0);
}

#ifdef RDMASIM_POISON_PACKETS
// Sanitizer builds: a released buffer's bytes are poisoned, so a view kept
// past the packet's release is reported instead of reading stale bytes.
TEST_CASE("a released packet's bytes are poisoned until the buffer is handed out again") {
  PacketPool pool;
  Packet p = pool.make();
  std::byte* kept = p.push_back(100).data();
  CHECK(__asan_address_is_poisoned(kept) == 0);
  p = Packet{};
  CHECK(__asan_address_is_poisoned(kept) != 0);
  CHECK(__asan_address_is_poisoned(kept + 99) != 0);
  Packet q = pool.make();  // the free list is LIFO: the same buffer
  CHECK(q.push_back(100).data() == kept);
  CHECK(__asan_address_is_poisoned(kept) == 0);
}
#endif
