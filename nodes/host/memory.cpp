#include "nodes/host/memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <new>

namespace rdmasim {

namespace {
// A host's first mapping; each further one is twice as large (up to 4 GiB),
// so a host that allocates much makes few mappings. Only touched pages cost
// memory, but every mapping counts against ulimit -v: a first one of 64 MiB
// made a 64-host all-to-all of SENDs (40 MiB) need 4 GiB of address space.
constexpr size_t kFirstArena = size_t{1} << 20;
constexpr size_t kLargestArena = size_t{4} << 30;
constexpr size_t kAlign = 64;  // buffers smaller than a page share pages, cache-line aligned

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }
}  // namespace

HostMemory::~HostMemory() {
  for (const Arena& a : arenas_) munmap(a.base, a.size);
}

std::byte* HostMemory::carve(size_t len) {
  const size_t align = len >= kPage ? kPage : kAlign;
  size_t at = arenas_.empty() ? 0 : round_up(arena_used_, align);
  if (arenas_.empty() || at + len > arenas_.back().size) {
    const size_t grown = arenas_.empty() ? kFirstArena : std::min(arenas_.back().size * 2, kLargestArena);
    const size_t size = std::max(grown, round_up(len, kPage));
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    arenas_.push_back({static_cast<std::byte*>(p), size});
    at = 0;
  }
  arena_used_ = at + len;
  return arenas_.back().base + at;
}

uint64_t HostMemory::next_address(size_t len) {
  const uint64_t addr = next_addr_;
  next_addr_ += round_up(len, kPage) + kPage;  // a guard page between buffers
  return addr;
}

uint64_t HostMemory::allocate(size_t len) {
  const uint64_t addr = next_address(len);
  buffers_[addr] = Buffer{addr, len, carve(len ? len : 1), nullptr};
  return addr;
}

bool HostMemory::adopt(uint64_t addr, std::byte* bytes, size_t len) {
  auto it = buffers_.lower_bound(addr);
  if (it != buffers_.end() && it->first < addr + len) return false;
  if (it != buffers_.begin() && std::prev(it)->first + std::prev(it)->second.len > addr) return false;
  buffers_[addr] = Buffer{addr, len, bytes, nullptr};
  return true;
}

uint64_t HostMemory::allocate_computed(size_t len, const PatternSource& source) {
  const uint64_t addr = next_address(len);
  auto c = std::make_unique<ComputedBuffer>();
  c->source = &source;
  buffers_[addr] = Buffer{addr, len, nullptr, std::move(c)};
  return addr;
}

void HostMemory::release(uint64_t addr) {
  auto it = buffers_.find(addr);
  if (it == buffers_.end() || !it->second.bytes) return;
  // Only the whole pages inside the buffer: small buffers share pages.
  const auto from = round_up(reinterpret_cast<uintptr_t>(it->second.bytes), kPage);
  const auto to = (reinterpret_cast<uintptr_t>(it->second.bytes) + it->second.len) / kPage * kPage;
  if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

size_t HostMemory::resident_bytes(uint64_t addr, size_t len) {
  const auto bytes = view(addr, len);
  if (bytes.empty()) return 0;
  const auto first = reinterpret_cast<uintptr_t>(bytes.data()) / kPage * kPage;
  const auto end = round_up(reinterpret_cast<uintptr_t>(bytes.data()) + bytes.size(), kPage);
  std::vector<unsigned char> in((end - first) / kPage);
  if (mincore(reinterpret_cast<void*>(first), end - first, in.data()) != 0) return 0;
  return static_cast<size_t>(std::count_if(in.begin(), in.end(), [](unsigned char c) { return c & 1; })) *
         kPage;
}

}  // namespace rdmasim
