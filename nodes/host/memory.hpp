// A host's memory: buffers at simulated virtual addresses that programs
// allocate, register and fill. The NIC reads and writes them by address, so
// payload bytes really move from one host's memory to another's.
//
// Memory is reserved, not committed: buffers are carved out of large
// anonymous mappings made with MAP_NORESERVE, so a page exists (and costs
// resident memory) only once something writes or reads it, as with a real
// process's heap. A fresh buffer reads as zeros.
//
// A buffer may instead be computed (allocate_computed): backed by a
// PatternSource (core/payload.hpp), it holds no bytes at all. Reading it
// computes the pattern; what is written into it is checked against the
// pattern at its place and counted, not stored. Large experiments send and
// receive such buffers, so their memory does not grow with the bytes in
// flight, while a byte written wrong, or at the wrong offset, still shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/payload.hpp"

namespace rdmasim {

class HostMemory {
 public:
  HostMemory() = default;
  ~HostMemory();
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;

  // A fresh zeroed buffer of `len` bytes; returns its address. Costs no
  // resident memory until its pages are touched.
  uint64_t allocate(size_t len);

  // Bytes someone else owns (a real program's registered pages, shared with
  // it: programs/), at the program's own address `addr`. False when they
  // overlap a buffer already here.
  bool adopt(uint64_t addr, std::byte* bytes, size_t len);

  // A buffer of `len` bytes computed from `source` (which must outlive it);
  // returns its address. It costs no memory however large.
  uint64_t allocate_computed(size_t len, const PatternSource& source);

  // The address the next buffer of `len` bytes would have, taken without
  // making it: in a run split over ranks (docs/parallel.md) another rank
  // holds the buffer, and this one keeps the addresses after it its own.
  uint64_t skip(size_t len) { return next_address(len); }

  // The bytes at [addr, addr+len) if they lie inside one stored buffer, else empty.
  std::span<std::byte> view(uint64_t addr, size_t len) {
    const Buffer* b = find(addr, len);
    if (!b || !b->bytes) return {};
    return {b->bytes + (addr - b->addr), len};
  }

  // Where [addr, addr+len) lies: stored bytes, or a computed buffer and the
  // range's offset in it; nullopt outside every buffer.
  struct Located {
    std::byte* bytes = nullptr;          // stored: the range's bytes
    ComputedBuffer* computed = nullptr;  // computed: its buffer
    uint64_t offset = 0;                 // the range's offset in the buffer
  };
  std::optional<Located> locate(uint64_t addr, size_t len) {
    Buffer* b = find(addr, len);
    if (!b) return std::nullopt;
    const uint64_t off = addr - b->addr;
    if (b->computed) return Located{nullptr, b->computed.get(), off};
    return Located{b->bytes + off, nullptr, off};
  }
  // The computed buffer at `addr` (its start), or null.
  const ComputedBuffer* computed(uint64_t addr) const {
    auto it = buffers_.find(addr);
    return it == buffers_.end() ? nullptr : it->second.computed.get();
  }

  // Gives the pages of the buffer at `addr` back to the system; the buffer
  // stays valid and reads as zeros again (madvise(MADV_DONTNEED)).
  void release(uint64_t addr);

  // Bytes of [addr, addr+len) that are resident (their pages touched), in
  // whole pages; 0 for an address outside every buffer.
  size_t resident_bytes(uint64_t addr, size_t len);

  static constexpr uint64_t kPage = 4096;

 private:
  struct Buffer {
    uint64_t addr = 0;
    size_t len = 0;
    std::byte* bytes = nullptr;                // stored bytes, or null
    std::unique_ptr<ComputedBuffer> computed;  // a computed buffer, or null
  };
  Buffer* find(uint64_t addr, size_t len) {
    auto it = buffers_.upper_bound(addr);
    if (it == buffers_.begin()) return nullptr;
    --it;
    const uint64_t off = addr - it->first;
    if (off > it->second.len || len > it->second.len - off) return nullptr;
    return &it->second;
  }
  uint64_t next_address(size_t len);
  struct Arena {
    std::byte* base = nullptr;
    size_t size = 0;
  };
  std::byte* carve(size_t len);

  uint64_t next_addr_ = 0x7f0000000000;
  std::map<uint64_t, Buffer> buffers_;
  std::vector<Arena> arenas_;  // mappings buffers are carved from; the last one is being filled
  size_t arena_used_ = 0;      // bytes of the last arena handed out
};

}  // namespace rdmasim
