// A packet is real bytes with headroom, plus a small fixed struct of
// simulation-only metadata that never goes on the wire. Buffers come from a
// pool and go back to it when the Packet handle is destroyed.
//
// A payload may be deferred: the frame holds its place, and the bytes are
// read from the sender's memory, or computed from its pattern
// (core/payload.hpp), the first time anyone needs them (bytes()), or handed
// straight to the receiver (source_of()), which saves a copy of every
// payload byte on the way (and a computed payload is never produced unless
// something looks at it). Only a sender whose memory cannot change
// while the frame is in flight may defer (an RC requester: the buffer is the
// NIC's until the work completes, and that needs the responder's ACK).
// While such a frame waits in a port's queue or on a wire it is parked:
// held in a buffer without room for the payload (park()).
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "core/payload.hpp"
#include "core/units.hpp"

// Under AddressSanitizer a buffer's bytes are poisoned while it sits in the
// free list, so reading a packet after its release (a view kept past the
// handle's end) is reported at once. Without it such a read finds stale
// bytes of an earlier frame, which no other tool sees: the buffer memory
// itself stays allocated.
#if defined(__SANITIZE_ADDRESS__)
#define RDMASIM_POISON_PACKETS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RDMASIM_POISON_PACKETS 1
#endif
#endif
#ifdef RDMASIM_POISON_PACKETS
#include <sanitizer/asan_interface.h>
#endif

namespace rdmasim {

struct PacketMeta {
  uint64_t id = 0;         // unique within a run, for traces
  Time enqueued;           // when it entered the current egress queue
  uint32_t flow_hash = 0;  // ECMP entropy computed by the sender
  uint16_t ingress_port = 0;
  uint8_t priority = 0;      // traffic class: 802.1p PCP on Ethernet, SL on IB
  uint8_t vl = 0;            // IB virtual lane (IB only)
  bool crc_pending = false;  // CRC fields are placeholders, filled when first observed
  // A switch's PFC ingress count (fabrics/ethernet/pfc.hpp, until_departed):
  // the bytes the node holding the frame counted against its ingress port
  // and class until the frame leaves, 0 when none. One frame is in one
  // switch at a time, so the mark rides with it instead of a map by id.
  uint8_t pfc_class = 0;
  uint16_t pfc_port = 0;
  uint32_t pfc_bytes = 0;
};
static_assert(sizeof(PacketMeta) == 32, "the metadata fills the buffer header's second half-line");

class PacketPool;

// A buffer's header; its bytes follow it (data()). Buffers come in size
// classes (PacketPool::kClassCapacity): a frame holds what its size needs,
// not the largest frame's room, so a switch queue of ACKs or 1 KiB-MTU
// frames costs a fraction of what it did when every buffer had room for a
// 9000-byte jumbo frame.
struct alignas(64) PacketBuffer {
  PacketPool* pool;
  union {
    PacketBuffer* next_free;   // while free: the pool's list
    uint64_t deferred_offset;  // in use: a computed deferred payload's offset in its source
  };
  // A deferred payload: deferred_len bytes at data() + deferred_at still to
  // be read from deferred_src (0: none), bytes or (deferred_computed) a
  // PatternSource.
  const void* deferred_src;
  uint16_t deferred_at;
  uint16_t deferred_len;
  uint16_t capacity;   // bytes at data()
  uint8_t size_class;  // its free list in the pool
  bool deferred_computed : 1;
  // Parked (Packet::park): the deferred payload's place is not in the
  // buffer; the bytes behind it follow the bytes before it.
  bool parked : 1;
  // The metadata lives with the bytes, so that a Packet handle is small and
  // cheap to move through queues and events.
  PacketMeta meta;

  std::byte* data() { return reinterpret_cast<std::byte*>(this + 1); }
  const std::byte* data() const { return reinterpret_cast<const std::byte*>(this + 1); }
};
static_assert(sizeof(PacketBuffer) == 64, "the header is one cache line; the bytes start on the next");

class Packet {
 public:
  static constexpr size_t kDefaultHeadroom = 128;

  Packet() = default;
  Packet(Packet&& o) noexcept : buf_(o.buf_), head_(o.head_), tail_(o.tail_) { o.buf_ = nullptr; }
  Packet& operator=(Packet&& o) noexcept;
  Packet(const Packet&) = delete;
  Packet& operator=(const Packet&) = delete;
  ~Packet() { release(); }

  explicit operator bool() const { return buf_ != nullptr; }
  size_t size() const { return tail_ - head_; }
  size_t headroom() const { return head_; }
  // The frame's bytes, a deferred payload read in first.
  std::span<std::byte> bytes() {
    fill();
    return raw_bytes();
  }
  std::span<const std::byte> bytes() const {
    fill();
    return raw_bytes();
  }
  // The frame's bytes as they stand: a deferred payload's place holds
  // nothing yet. For code that reads or writes headers only.
  std::span<std::byte> raw_bytes() {
    unpark();
    return {buf_->data() + head_, size()};
  }
  std::span<const std::byte> raw_bytes() const {
    unpark();
    return {buf_->data() + head_, size()};
  }
  // The bytes in front of a deferred payload's place (every byte when
  // nothing is deferred) where they stand, parked or not: for code that
  // reads or rewrites headers only (a switch routing, marking, pausing),
  // which then need not move a parked frame back into a buffer of its size.
  std::span<std::byte> header_bytes() {
    if (!deferred()) return raw_bytes();
    return {header_start(), buf_->deferred_at - head_};
  }
  std::span<const std::byte> header_bytes() const {
    if (!deferred()) return raw_bytes();
    return {header_start(), buf_->deferred_at - head_};
  }

  // A frame that waits (in a port's queue, on a wire) with a deferred
  // payload need not hold room for it: park() moves the bytes before and
  // behind the payload's place, without the headroom, into a buffer of the
  // smallest class that holds them (a 1 KiB-MTU RoCE v2 data frame: 128
  // bytes, 192 with a RETH, instead of 1,344), and the frame moves back
  // into one of its size, at its offsets, when anything looks at its
  // bytes (unpark(), which every accessor of the bytes calls;
  // header_bytes() reads them where they are). Only worth it for a payload
  // of a few hundred bytes and more; a no-op otherwise.
  void park();
  static constexpr size_t kParkedPayloadMin = 256;
  void unpark() const {
    if (buf_ && buf_->parked) [[unlikely]]
      move_out_of_park();
  }
  bool parked() const { return buf_ && buf_->parked; }
  // Asks for the buffer's header (metadata) and the frame's first bytes
  // ahead of use, parked or not, from the handle alone: where the headers
  // start depends on the buffer's parked flag, and reading that flag to
  // aim the prefetch would wait for the very miss the prefetch should hide.
  void prefetch() const {
    const char* b = reinterpret_cast<const char*>(buf_);
    __builtin_prefetch(b);
    __builtin_prefetch(b + sizeof(PacketBuffer));          // a parked frame's headers
    __builtin_prefetch(b + sizeof(PacketBuffer) + head_);  // an unparked frame's
  }
  // Bytes the buffer can hold: headroom, frame and room behind it.
  size_t capacity() const {
    unpark();
    return buf_->capacity;
  }

  // `place` (bytes of this frame) is a payload to read from `src` later.
  void defer(std::span<std::byte> place, const std::byte* src) { defer(place, Payload({src, place.size()})); }
  // `place` is `src` (of its size), stored or computed, to read in later.
  void defer(std::span<std::byte> place, const Payload& src) {
    unpark();
    assert(place.data() >= buf_->data() && place.data() + place.size() <= buf_->data() + buf_->capacity);
    assert(src.size() == place.size());
    fill();
    buf_->deferred_computed = src.computed();
    if (src.computed()) {
      buf_->deferred_src = src.source();
      buf_->deferred_offset = src.offset();
    } else {
      buf_->deferred_src = src.stored().data();
    }
    buf_->deferred_at = static_cast<uint16_t>(place.data() - buf_->data());
    buf_->deferred_len = static_cast<uint16_t>(place.size());
  }
  bool deferred() const { return buf_ && buf_->deferred_len != 0; }
  // The bytes of `part`, a piece of raw_bytes(): when part is exactly the
  // deferred payload, the sender's bytes themselves (or their source),
  // without a copy.
  Payload source_of(std::span<const std::byte> part) const {
    assert(!parked());  // part was taken from raw_bytes(), which unparks
    if (deferred() && part.data() == buf_->data() + buf_->deferred_at && part.size() == buf_->deferred_len)
      return deferred_payload();
    fill();
    return part;
  }

  // Prepend n bytes (a header) into the headroom; returns them.
  std::span<std::byte> push_front(size_t n) {
    unpark();
    assert(n <= head_);
    head_ -= static_cast<uint32_t>(n);
    return {buf_->data() + head_, n};
  }
  // Append n bytes at the tail; returns them. A frame that outgrows its
  // buffer moves to a larger one (spans taken before then are stale).
  std::span<std::byte> push_back(size_t n) {
    unpark();
    if (tail_ + n > buf_->capacity) [[unlikely]]
      grow(tail_ + n);
    std::span<std::byte> s{buf_->data() + tail_, n};
    tail_ += static_cast<uint32_t>(n);
    return s;
  }
  void pull_front(size_t n) {
    unpark();
    assert(n <= size());
    head_ += static_cast<uint32_t>(n);
  }
  void pull_back(size_t n) {
    unpark();
    assert(n <= size());
    tail_ -= static_cast<uint32_t>(n);
  }
  // Appends zero bytes until the frame is `n` bytes long; a frame that
  // long already stays as it is (and parked, if it is): a link's minimum
  // frame (Ethernet's pad, IEEE 802.3 4.2.3.3).
  void pad_to(size_t n) {
    if (size() >= n) return;
    std::span<std::byte> pad = push_back(n - size());
    std::memset(pad.data(), 0, pad.size());
  }

  Packet clone() const;  // a copy in a fresh buffer from the same pool (flooding)

  // Room for `n` more bytes at the tail without moving (spans stay valid).
  void reserve_back(size_t n) {
    unpark();
    if (tail_ + n > buf_->capacity) grow(tail_ + n);
  }

  PacketMeta& meta() { return buf_->meta; }
  const PacketMeta& meta() const { return buf_->meta; }

 private:
  friend class PacketPool;
  void release();
  void grow(size_t need);  // moves the frame into a buffer of at least `need` bytes
  void move_out_of_park() const;
  // The bytes behind a deferred payload's place (trailers: an ICRC).
  size_t behind_payload() const { return tail_ - buf_->deferred_at - buf_->deferred_len; }
  // The frame's first byte: a parked frame's headers start its buffer.
  std::byte* header_start() const { return buf_->data() + (buf_->parked ? 0 : head_); }
  // Reads a deferred payload in (logically const: the frame's bytes do not change).
  void fill() const {
    if (!deferred()) return;
    unpark();
    deferred_payload().copy_to({buf_->data() + buf_->deferred_at, buf_->deferred_len});
    buf_->deferred_len = 0;
  }
  Payload deferred_payload() const {
    if (buf_->deferred_computed)
      return {static_cast<const PatternSource*>(buf_->deferred_src), buf_->deferred_offset,
              buf_->deferred_len};
    return std::span<const std::byte>(static_cast<const std::byte*>(buf_->deferred_src), buf_->deferred_len);
  }

  // Mutable: a parked frame moves back into a buffer of its size when
  // read, which changes no byte of it.
  mutable PacketBuffer* buf_ = nullptr;
  uint32_t head_ = 0;
  uint32_t tail_ = 0;
};

// Hands out buffers of a few size classes, each from its own free list;
// grows by carving chunks as buffers are first needed, never shrinks.
class PacketPool {
 public:
  // Bytes a buffer of each class holds (headroom and frame): a parked
  // data frame without a RETH (a RoCE v2 middle or last packet's 58 bytes
  // of headers and ICRC: 128 bytes with the buffer's header, where the
  // next class made them 192; most of what a loaded fabric queues);
  // control frames, ACKs and parked first packets; a 1 KiB, 2 KiB and
  // 4 KiB IBA MTU frame (or a 1500-byte IP MTU frame) with its headers and
  // headroom; a 9000-byte IP MTU frame.
  static constexpr std::array<uint16_t, 7> kClassCapacity = {64, 128, 256, 1280, 2304, 4352, 10240};
  static constexpr size_t kMaxCapacity = kClassCapacity.back();
  static constexpr size_t kClasses = kClassCapacity.size();

  PacketPool() = default;
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;
  ~PacketPool();

  // An empty packet with `headroom` bytes free in front and at least
  // `room` behind (by default, room for the largest frame).
  Packet make(size_t headroom = Packet::kDefaultHeadroom, size_t room = kMaxCapacity) {
    const size_t need = std::min(headroom + room, kMaxCapacity);
    assert(headroom <= need);
    PacketBuffer* b = take(class_of(need));
    b->deferred_len = 0;
    b->parked = false;
    b->meta = PacketMeta{};
    b->meta.id = ++next_id_;
    Packet p;
    p.buf_ = b;
    p.head_ = p.tail_ = static_cast<uint32_t>(headroom);
    ++in_use_;
    return p;
  }
  // A packet holding a copy of `wire` (frames read back, tests).
  Packet make_copy(std::span<const std::byte> wire, size_t headroom = Packet::kDefaultHeadroom) {
    Packet p = make(headroom, wire.size());
    std::memcpy(p.push_back(wire.size()).data(), wire.data(), wire.size());
    return p;
  }
  size_t in_use() const { return in_use_; }
  // Bytes of buffers carved so far, headers included (what the pool holds).
  size_t carved_bytes() const { return carved_bytes_; }

  // The smallest class holding `need` bytes.
  static size_t class_of(size_t need) {
    size_t c = 0;
    while (c + 1 < kClasses && kClassCapacity[c] < need) ++c;
    return c;
  }

 private:
  friend class Packet;
  PacketBuffer* take(size_t cls) {
    PacketBuffer* b = free_[cls];
    if (!b) [[unlikely]]
      return carve(cls);
    free_[cls] = b->next_free;
    unpoison(b);
    return b;
  }
  void recycle(PacketBuffer* b) {
    poison(b);
    b->next_free = free_[b->size_class];
    free_[b->size_class] = b;
  }
  void give_back(PacketBuffer* b) {
    recycle(b);
    --in_use_;
  }
  PacketBuffer* carve(size_t cls);
  // Sanitizer builds: a free buffer's bytes are poisoned, so a view kept
  // past its packet's release is reported instead of reading stale bytes.
  static void poison([[maybe_unused]] PacketBuffer* b) {
#ifdef RDMASIM_POISON_PACKETS
    ASAN_POISON_MEMORY_REGION(b->data(), b->capacity);
#endif
  }
  static void unpoison([[maybe_unused]] PacketBuffer* b) {
#ifdef RDMASIM_POISON_PACKETS
    ASAN_UNPOISON_MEMORY_REGION(b->data(), b->capacity);
#endif
  }

  std::array<PacketBuffer*, kClasses> free_{};
  // Per class, the part of its newest chunk not yet carved into buffers:
  // buffers are carved only when first needed, so a chunk's untouched
  // pages are never made resident.
  std::array<std::byte*, kClasses> next_{}, end_{};
  std::vector<std::byte*> chunks_;
  uint64_t next_id_ = 0;
  size_t in_use_ = 0;
  size_t carved_bytes_ = 0;
};

inline void Packet::release() {
  if (buf_) buf_->pool->give_back(buf_);
  buf_ = nullptr;
}

inline Packet& Packet::operator=(Packet&& o) noexcept {
  if (this != &o) {
    release();
    buf_ = o.buf_;
    head_ = o.head_;
    tail_ = o.tail_;
    o.buf_ = nullptr;
  }
  return *this;
}

}  // namespace rdmasim
