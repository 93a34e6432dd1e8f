#include "core/packet.hpp"

namespace rdmasim {

void PacketPool::grow() {
  auto chunk = std::make_unique<PacketBuffer[]>(kChunk);
  for (size_t i = 0; i < kChunk; ++i) {
    chunk[i].pool = this;
    chunk[i].next_free = free_;
    free_ = &chunk[i];
    poison(&chunk[i]);
  }
  chunks_.push_back(std::move(chunk));
}

PacketPool::~PacketPool() {
  // Hand the memory back to the allocator as it was given.
  for (auto& chunk : chunks_)
    for (size_t i = 0; i < kChunk; ++i) unpoison(&chunk[i]);
}

Packet Packet::clone() const {
  Packet p = buf_->pool->make(head_);
  std::memcpy(p.push_back(size()).data(), bytes().data(), size());
  const uint64_t id = p.meta().id;
  p.meta() = meta();
  p.meta().id = id;
  return p;
}

}  // namespace rdmasim
