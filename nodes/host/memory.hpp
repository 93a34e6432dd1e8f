// A host's memory: buffers at simulated virtual addresses that programs
// allocate, register and fill. The NIC reads and writes them by address, so
// payload bytes really move from one host's memory to another's.
//
// Memory is reserved, not committed: buffers are carved out of large
// anonymous mappings made with MAP_NORESERVE, so a page exists (and costs
// resident memory) only once something writes or reads it, as with a real
// process's heap. A fresh buffer reads as zeros.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

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

  // The bytes at [addr, addr+len) if they lie inside one buffer, else empty.
  std::span<std::byte> view(uint64_t addr, size_t len) {
    auto it = buffers_.upper_bound(addr);
    if (it == buffers_.begin()) return {};
    --it;
    const uint64_t off = addr - it->first;
    if (off > it->second.len || len > it->second.len - off) return {};
    return {it->second.bytes + off, len};
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
    size_t len = 0;
    std::byte* bytes = nullptr;
  };
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
