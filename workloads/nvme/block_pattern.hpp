// What a logical block holds: a record naming it and the write that put it
// there, then bytes computed from both. Every block written carries it;
// every block read is checked against it (the `data_verified` of an nvme
// workload). A block never written holds generation 0.
//
//  0  LBA(64)         little-endian
//  8  generation(32)  1 for the LBA's first write, 2 for its second, ...
// 12  NSID(32)
// 16  filler          64-bit words of a stream seeded by (NSID, LBA, generation)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "core/bytes.hpp"

namespace rdmasim::nvme {

struct BlockStamp {
  uint64_t lba = 0;
  uint32_t generation = 0;
  uint32_t nsid = 0;
  bool operator==(const BlockStamp&) const = default;
};

namespace detail {
inline uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
inline uint64_t filler_seed(const BlockStamp& s) {
  return mix(s.lba * 0x9e3779b97f4a7c15ull ^ (uint64_t{s.generation} << 32 | s.nsid));
}
}  // namespace detail

// Writes the block `s` names into `b` (one block: its size is the block size, a multiple of 8, >= 16).
inline void fill_block(std::span<std::byte> b, const BlockStamp& s) {
  store_le64(b.subspan(0, 8), s.lba);
  store_le32(b.subspan(8, 4), s.generation);
  store_le32(b.subspan(12, 4), s.nsid);
  uint64_t x = detail::filler_seed(s);
  for (size_t i = 16; i + 8 <= b.size(); i += 8) {
    x += 0x9e3779b97f4a7c15ull;
    store_le64(b.subspan(i, 8), detail::mix(x));
  }
}

// The stamp `b` carries when every byte is the one it implies; else nullopt.
inline std::optional<BlockStamp> read_block(std::span<const std::byte> b) {
  if (b.size() < 16) return std::nullopt;
  const BlockStamp s{load_le64(b.subspan(0, 8)), load_le32(b.subspan(8, 4)), load_le32(b.subspan(12, 4))};
  uint64_t x = detail::filler_seed(s);
  for (size_t i = 16; i + 8 <= b.size(); i += 8) {
    x += 0x9e3779b97f4a7c15ull;
    if (load_le64(b.subspan(i, 8)) != detail::mix(x)) return std::nullopt;
  }
  return s;
}

}  // namespace rdmasim::nvme
