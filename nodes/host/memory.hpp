// A host's memory: buffers at simulated virtual addresses that programs
// allocate, register and fill. The NIC reads and writes them by address, so
// payload bytes really move from one host's memory to another's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>

namespace rdmasim {

class HostMemory {
public:
  // A fresh zeroed buffer of `len` bytes; returns its address.
  uint64_t allocate(size_t len) {
    const uint64_t addr = next_addr_;
    next_addr_ += (len + kPage - 1) / kPage * kPage + kPage;  // a guard page between buffers
    auto& b = buffers_[addr];
    b.len = len;
    b.bytes = std::make_unique<std::byte[]>(len ? len : 1);
    return addr;
  }

  // The bytes at [addr, addr+len) if they lie inside one buffer, else empty.
  std::span<std::byte> view(uint64_t addr, size_t len) {
    auto it = buffers_.upper_bound(addr);
    if (it == buffers_.begin()) return {};
    --it;
    const uint64_t off = addr - it->first;
    if (off > it->second.len || len > it->second.len - off) return {};
    return {it->second.bytes.get() + off, len};
  }

private:
  static constexpr uint64_t kPage = 4096;
  struct Buffer {
    size_t len = 0;
    std::unique_ptr<std::byte[]> bytes;
  };
  uint64_t next_addr_ = 0x7f0000000000;
  std::map<uint64_t, Buffer> buffers_;
};

}  // namespace rdmasim
