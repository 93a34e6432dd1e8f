#include "nodes/host/memory.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>

using namespace rdmasim;

TEST_CASE("HostMemory: a large buffer costs nothing until its pages are touched") {
  HostMemory m;
  const size_t len = size_t{1} << 30;  // 1 GiB reserved
  const uint64_t a = m.allocate(len);
  CHECK(m.view(a, len).size() == len);
  CHECK(m.resident_bytes(a, len) == 0);
  // Writing three bytes far apart brings in exactly their three pages.
  auto v = m.view(a, len);
  v[0] = std::byte{1};
  v[len / 2] = std::byte{2};
  v[len - 1] = std::byte{3};
  CHECK(m.resident_bytes(a, len) == 3 * HostMemory::kPage);
  CHECK(m.view(a + len / 2, 1)[0] == std::byte{2});
}

TEST_CASE("HostMemory: fresh buffers read as zeros, and buffers do not overlap") {
  HostMemory m;
  std::vector<uint64_t> addrs;
  for (size_t len : {1, 100, 4096, 5000, 64, 1 << 20}) {
    const uint64_t a = m.allocate(len);
    auto v = m.view(a, len);
    REQUIRE(v.size() == len);
    CHECK(std::all_of(v.begin(), v.end(), [](std::byte b) { return b == std::byte{0}; }));
    std::memset(v.data(), 0xAB, len);
    addrs.push_back(a);
  }
  // Each buffer still holds only its own fill, and a guard page separates
  // neighbours in simulated addresses: a view cannot run from one into the next.
  for (size_t i = 0; i + 1 < addrs.size(); ++i) CHECK(addrs[i + 1] - addrs[i] >= HostMemory::kPage * 2);
  CHECK(m.view(addrs[0], 2).empty());
  CHECK(m.view(addrs[0] - 1, 1).empty());
}

TEST_CASE("HostMemory: a released buffer gives its pages back and reads as zeros") {
  HostMemory m;
  const size_t len = 64 * HostMemory::kPage;
  const uint64_t a = m.allocate(len);
  auto v = m.view(a, len);
  std::memset(v.data(), 0x5A, len);
  CHECK(m.resident_bytes(a, len) == len);
  m.release(a);
  CHECK(m.resident_bytes(a, len) == 0);
  CHECK(m.view(a, len)[100] == std::byte{0});
}
