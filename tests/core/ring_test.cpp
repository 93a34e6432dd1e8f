// core/ring.hpp: the double-ended queue of the ports, NICs and queue pairs.
#include "core/ring.hpp"

#include <doctest/doctest.h>

#include <array>
#include <deque>
#include <vector>

#include "core/random.hpp"

using namespace rdmasim;

namespace {
template <typename T>
std::vector<T> contents(const Ring<T>& r) {
  return {r.begin(), r.end()};
}
}  // namespace

TEST_CASE("an empty ring holds no memory, and its first block is sized by its element") {
  Ring<uint32_t> small;
  CHECK(small.capacity() == 0);
  CHECK(sizeof(small) == 24);
  small.push_back(1);
  CHECK(small.capacity() == Ring<uint32_t>::kFirstBytes / sizeof(uint32_t));

  struct Big {
    std::array<std::byte, 200> b{};
  };
  Ring<Big> big;  // a WQE-sized element: one, then doubling
  big.push_back({});
  CHECK(big.capacity() == 1);
  big.push_back({});
  CHECK(big.capacity() == 2);
  big.push_back({});
  CHECK(big.capacity() == 4);

  big.release();
  CHECK(big.empty());
  CHECK(big.capacity() == 0);
  big.push_front({});
  CHECK(big.size() == 1);
}

TEST_CASE("a ring that empties gives back room beyond what it keeps, and only when empty") {
  Ring<uint64_t> q;
  for (uint64_t i = 0; i < 300; ++i) q.push_back(i);  // a burst
  CHECK(q.capacity() == 512);
  q.shrink_if_empty(64);  // not empty: nothing happens
  CHECK(q.capacity() == 512);
  while (q.size() > 1) q.pop_front();
  q.shrink_if_empty(64);
  CHECK(q.capacity() == 512);
  CHECK(q.front() == 299);
  q.pop_front();
  q.shrink_if_empty(512);  // within what it keeps
  CHECK(q.capacity() == 512);
  q.shrink_if_empty(64);
  CHECK(q.capacity() == 0);
  q.push_back(7);  // and grows again from its first block
  CHECK(q.front() == 7);
  CHECK(q.capacity() == Ring<uint64_t>::kFirstCapacity);
}

TEST_CASE("a ring behaves as a deque at both ends across growth and wrap-around") {
  Ring<uint64_t> r;
  std::deque<uint64_t> ref;
  Rng rng(7);
  uint64_t next = 0;
  for (int step = 0; step < 20000; ++step) {
    const uint64_t op = rng.next() % 10;
    if (op < 4) {
      r.push_back(next);
      ref.push_back(next++);
    } else if (op < 6) {
      r.push_front(next);
      ref.push_front(next++);
    } else if (!ref.empty() && op < 8) {
      CHECK(r.front() == ref.front());
      r.pop_front();
      ref.pop_front();
    } else if (!ref.empty()) {
      CHECK(r.back() == ref.back());
      r.pop_back();
      ref.pop_back();
    }
    REQUIRE(r.size() == ref.size());
    if (step % 97 == 0) CHECK(contents(r) == std::vector<uint64_t>(ref.begin(), ref.end()));
  }
  for (size_t i = 0; i < ref.size(); ++i) CHECK(r[i] == ref[i]);
  const size_t removed = erase_if(r, [](uint64_t v) { return v % 3 == 0; });
  const size_t ref_removed = std::erase_if(ref, [](uint64_t v) { return v % 3 == 0; });
  CHECK(removed == ref_removed);
  CHECK(contents(r) == std::vector<uint64_t>(ref.begin(), ref.end()));
}

TEST_CASE("a ring moved from is empty and the moved-to one keeps the elements") {
  Ring<int> a;
  for (int i = 0; i < 5; ++i) a.push_front(i);
  Ring<int> b(std::move(a));
  CHECK(a.empty());  // NOLINT(bugprone-use-after-move): a moved-from ring is empty
  CHECK(a.capacity() == 0);
  CHECK(contents(b) == std::vector<int>{4, 3, 2, 1, 0});
}
