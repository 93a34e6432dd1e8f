// Computed buffers (nodes/host/memory.hpp) through the IBA transport: an RC
// WRITE or SEND from a buffer computed from a message's pattern carries the
// pattern's bytes on the wire, and a computed buffer at the receiver checks
// every placement against the pattern at its place: wrong bytes, or the
// right bytes at the wrong offset, are counted.
#include <doctest/doctest.h>

#include <vector>

#include "tests/fabrics/iba/transport/qp_pair.hpp"
#include "workloads/payload_pattern.hpp"

using namespace rdmasim;
using rdmasim::test::Pair;

namespace {

constexpr int kAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

struct Computed {
  uint64_t addr = 0;
  verbs::MemoryRegion* mr = nullptr;
};

Computed computed(Host& h, Pair::Side& s, size_t len, const PatternSource& src) {
  Computed c;
  c.addr = h.memory().allocate_computed(len, src);
  c.mr = h.device().reg_mr(s.pd, c.addr, len, kAccess);
  REQUIRE(c.mr);
  return c;
}

// An RDMA WRITE of `len` bytes from `local` (in the region `lkey` names) on a.
int write(Pair& p, uint64_t local, uint32_t lkey, uint32_t len, uint64_t remote, uint32_t rkey) {
  Pair::Side from = p.sa;
  verbs::MemoryRegion mr = *from.mr;
  mr.lkey = lkey;
  from.mr = &mr;
  from.buf = local;
  return test::post_send(from, IBV_WR_RDMA_WRITE, 0, len, remote, rkey);
}

}  // namespace

TEST_CASE("a computed buffer's bytes are the pattern, every time, and cost no memory") {
  const PayloadPattern pattern("w0");
  const MessagePattern m(pattern, 42);
  HostMemory mem;
  const size_t len = size_t{1} << 30;
  const uint64_t a = mem.allocate_computed(len, m);
  CHECK(mem.view(a, 16).empty());  // nothing stored to view
  CHECK(mem.resident_bytes(a, len) == 0);
  const auto at = mem.locate(a + 4096, 64);
  REQUIRE(at);
  REQUIRE(at->computed);
  CHECK(at->offset == 4096);
  std::vector<std::byte> x(100), y(100), want(100);
  Payload(at->computed->source, 1000, 100).copy_to(x);
  Payload(at->computed->source, 1000, 100).copy_to(y);
  pattern.fill(42, 1000, want);
  CHECK(x == want);
  CHECK(y == want);
}

TEST_CASE("a computed buffer counts a write of wrong bytes or at the wrong offset") {
  const PayloadPattern pattern("w0");
  const MessagePattern m(pattern, 7), other(pattern, 8);
  ComputedBuffer c;
  c.source = &m;
  std::vector<std::byte> right(64);
  pattern.fill(7, 128, right);
  c.write(128, Payload(&m, 128, 64));  // the same source, same place: no byte produced
  c.write(128, Payload(std::span<const std::byte>(right)));
  CHECK(c.wrong_writes == 0);
  CHECK(c.written_bytes == 128);
  c.write(160, Payload(&m, 128, 64));  // right bytes, wrong offset
  CHECK(c.wrong_writes == 1);
  c.write(128, Payload(&other, 128, 64));  // another message's bytes
  CHECK(c.wrong_writes == 2);
  right[5] ^= std::byte{1};  // one flipped bit
  c.write(128, Payload(std::span<const std::byte>(right)));
  CHECK(c.wrong_writes == 3);
}

TEST_CASE("a deferred computed payload reads in as the pattern and hands over its source") {
  PacketPool pool;
  const PayloadPattern pattern("flows");
  const MessagePattern m(pattern, 3);
  Packet p = pool.make(Packet::kDefaultHeadroom, 400);
  std::memset(p.push_back(10).data(), 0xEE, 10);
  auto place = p.push_back(300);
  p.defer(place, Payload(&m, 4096, 300));
  const Payload got = p.source_of(place);
  CHECK(got.computed());
  CHECK(got.source() == &m);
  CHECK(got.offset() == 4096);
  CHECK(p.deferred());
  std::vector<std::byte> want(300);
  pattern.fill(3, 4096, want);
  SUBCASE("read in by bytes()") {
    auto bytes = p.bytes();
    CHECK(std::equal(want.begin(), want.end(), bytes.begin() + 10));
    CHECK(!p.deferred());
  }
  SUBCASE("carried along when the frame moves to a larger buffer") {
    std::memset(p.push_back(2000).data(), 0x22, 2000);
    CHECK(p.capacity() > 2304);
    CHECK(p.deferred());
    auto bytes = p.bytes();
    CHECK(std::equal(want.begin(), want.end(), bytes.begin() + 10));
    CHECK(bytes[310] == std::byte{0x22});
  }
}

TEST_CASE("RC WRITE from a computed buffer to a computed buffer: the pattern's bytes on the wire, checked") {
  Pair p;
  p.connect_both();
  const PayloadPattern pattern("w0");
  const MessagePattern m(pattern, 5);
  const size_t len = 5000;  // five 1 KiB-MTU packets
  Computed src = computed(p.a, p.sa, len, m);

  SUBCASE("at its place: every write matches, all of it written") {
    Computed dst = computed(p.b, p.sb, len, m);
    REQUIRE(write(p, src.addr, src.mr->lkey, len, dst.addr, dst.mr->rkey) == 0);
    CHECK(p.one_completion(p.sa).status == IBV_WC_SUCCESS);
    const ComputedBuffer* c = p.b.memory().computed(dst.addr);
    REQUIRE(c);
    CHECK(c->wrong_writes == 0);
    CHECK(c->written_bytes == len);
  }
  SUBCASE("at the wrong offset: the placement is counted wrong") {
    Computed dst = computed(p.b, p.sb, len + 64, m);
    REQUIRE(write(p, src.addr, src.mr->lkey, len, dst.addr + 32, dst.mr->rkey) == 0);
    p.sim.run();
    REQUIRE(p.drain(p.sa).size() == 1);
    CHECK(p.b.memory().computed(dst.addr)->wrong_writes == 5);
  }
  SUBCASE("wrong bytes (stored, one of them flipped): the placement is counted wrong") {
    std::vector<std::byte> bytes(len);
    pattern.fill(5, 0, bytes);
    bytes[3000] ^= std::byte{0x20};
    std::memcpy(p.a.memory().view(p.sa.buf, len).data(), bytes.data(), len);
    Computed dst = computed(p.b, p.sb, len, m);
    REQUIRE(write(p, p.sa.buf, p.sa.mr->lkey, len, dst.addr, dst.mr->rkey) == 0);
    p.sim.run();
    REQUIRE(p.drain(p.sa).size() == 1);
    CHECK(p.b.memory().computed(dst.addr)->wrong_writes == 1);  // the third packet's
  }
}

TEST_CASE("the same message sent from stored and from computed memory: the same frames") {
  const PayloadPattern pattern("w0");
  const MessagePattern m(pattern, 9);
  const size_t len = 3000;
  auto run = [&](bool from_computed) {
    Pair p;
    p.connect_both();
    std::vector<std::vector<std::byte>> sent;
    p.a.port(0).on_tx([&](Time, Packet& f) {
      auto b = f.bytes();  // as a capture reads it
      sent.emplace_back(b.begin(), b.end());
    });
    uint64_t local = p.sa.buf;
    uint32_t lkey = p.sa.mr->lkey;
    if (from_computed) {
      Computed src = computed(p.a, p.sa, len, m);
      local = src.addr;
      lkey = src.mr->lkey;
    } else {
      pattern.fill(9, 0, p.a.memory().view(p.sa.buf, len));
    }
    REQUIRE(write(p, local, lkey, static_cast<uint32_t>(len), p.sb.buf, p.sb.mr->rkey) == 0);
    p.sim.run();
    REQUIRE(p.drain(p.sa).size() == 1);
    std::vector<std::byte> got(len), want(len);
    std::memcpy(got.data(), p.b.memory().view(p.sb.buf, len).data(), len);
    pattern.fill(9, 0, want);
    CHECK(got == want);
    return sent;
  };
  const auto stored = run(false), computed_frames = run(true);
  REQUIRE(stored.size() == 3);
  CHECK(stored == computed_frames);
  // The first packet's payload starts with record 0 of message 9.
  std::vector<std::byte> rec(PayloadPattern::kRecord);
  pattern.fill(9, 0, rec);
  CHECK(std::search(stored[0].begin(), stored[0].end(), rec.begin(), rec.end()) != stored[0].end());
}
