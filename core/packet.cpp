#include "core/packet.hpp"

#include <new>
#include <stdexcept>

namespace rdmasim {

namespace {
constexpr size_t kChunkBytes = 256 * 1024;  // a chunk holds many buffers of one class
constexpr std::align_val_t kAlign{alignof(PacketBuffer)};
}  // namespace

PacketPool::~PacketPool() {
  // Hand the memory back to the allocator as it was given (unpoisoned).
  for (size_t cls = 0; cls < kClasses; ++cls)
    for (PacketBuffer* b = free_[cls]; b; b = b->next_free) unpoison(b);
  for (std::byte* c : chunks_) ::operator delete(c, kAlign);
}

PacketBuffer* PacketPool::carve(size_t cls) {
  const size_t stride = sizeof(PacketBuffer) + kClassCapacity[cls];
  if (next_[cls] == end_[cls]) {
    // Raw memory, not value-initialised: pages are touched only as buffers
    // are carved and written.
    const size_t n = std::max<size_t>(4, kChunkBytes / stride);
    auto* chunk = static_cast<std::byte*>(::operator new(n* stride, kAlign));
    chunks_.push_back(chunk);
    next_[cls] = chunk;
    end_[cls] = chunk + n * stride;
  }
  auto* b = ::new (static_cast<void*>(next_[cls])) PacketBuffer{};
  next_[cls] += stride;
  carved_bytes_ += stride;
  b->pool = this;
  b->capacity = kClassCapacity[cls];
  b->size_class = static_cast<uint8_t>(cls);
  return b;
}

namespace {
// What a move between buffers keeps besides the bytes.
void copy_header(PacketBuffer& to, const PacketBuffer& from) {
  to.deferred_src = from.deferred_src;
  to.deferred_offset = from.deferred_offset;
  to.deferred_computed = from.deferred_computed;
  to.deferred_at = from.deferred_at;
  to.deferred_len = from.deferred_len;
  to.meta = from.meta;
}
}  // namespace

void Packet::grow(size_t need) {
  if (need > PacketPool::kMaxCapacity) throw std::length_error("frame larger than the largest packet buffer");
  PacketPool& pool = *buf_->pool;
  PacketBuffer* b = pool.take(PacketPool::class_of(need));
  // Same offsets in the new buffer: the deferred payload's place and the
  // headroom stay where they were.
  std::memcpy(b->data() + head_, buf_->data() + head_, size());
  copy_header(*b, *buf_);
  b->parked = false;
  pool.recycle(buf_);
  buf_ = b;
}

void Packet::park() {
  if (!buf_ || buf_->parked || buf_->deferred_len < kParkedPayloadMin) return;
  const size_t before = buf_->deferred_at - head_, behind = behind_payload();
  const size_t cls = PacketPool::class_of(before + behind);
  if (cls >= buf_->size_class) return;
  PacketPool& pool = *buf_->pool;
  PacketBuffer* b = pool.take(cls);
  // The headers start the buffer (no headroom: nothing is pushed onto a
  // parked frame); the bytes behind the payload follow them. head_, tail_
  // and deferred_at keep the offsets the frame has when unparked.
  std::memcpy(b->data(), buf_->data() + head_, before);
  std::memcpy(b->data() + before, buf_->data() + buf_->deferred_at + buf_->deferred_len, behind);
  copy_header(*b, *buf_);
  b->parked = true;
  pool.recycle(buf_);
  buf_ = b;
}

void Packet::move_out_of_park() const {
  PacketPool& pool = *buf_->pool;
  PacketBuffer* b = pool.take(PacketPool::class_of(tail_));
  const uint32_t at = buf_->deferred_at, before = at - head_;
  std::memcpy(b->data() + head_, buf_->data(), before);
  std::memcpy(b->data() + at + buf_->deferred_len, buf_->data() + before, behind_payload());
  copy_header(*b, *buf_);
  b->parked = false;
  pool.recycle(buf_);
  buf_ = b;
}

Packet Packet::clone() const {
  Packet p = buf_->pool->make(head_, size());
  std::memcpy(p.push_back(size()).data(), bytes().data(), size());
  const uint64_t id = p.meta().id;
  p.meta() = meta();
  p.meta().id = id;
  p.meta().pfc_bytes = 0;  // a copy was not received: nothing holds it
  return p;
}

}  // namespace rdmasim
