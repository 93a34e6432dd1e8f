// The discrete-event engine. Events are small move-only closures ordered by
// (time, schedule order): ties run in the order they were scheduled, so the
// same experiment and seed always run the same way.
//
// How it is fast (figures, and the 4-ary heap it replaced: docs/performance.md):
// - The queue is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990)
//   with 6-bit digits. Simulated time never goes back, so an event's bucket
//   is the highest digit in which its time differs from the last time taken
//   out, and its value there: scheduling is an append, and taking the next
//   event out moves the entries of one small bucket down a level. Accesses
//   are sequential, where a heap of a million events waits on a cache miss
//   per level. Ties need no sort: events of one time always share a bucket,
//   which they enter in schedule order.
// - A queue entry is 16 bytes (time, sequence << 24 | slot). The closure
//   lives in a slot of fixed address (chunks that never move), is built in
//   place when scheduled, runs in place and is destroyed there: no
//   allocation and no move per event once the pool and buckets have grown.
//   With many events pending, closures about to run are prefetched.
// - While few events are pending (a two-host stream keeps about ten), a
//   sorted array is cheaper than moving entries down the radix levels; the queue switches between the two as it grows
//   and shrinks. Both order by (time, schedule order), so which one holds
//   the events never changes what runs when.
// A Simulator is about 24 KiB (the bucket table); allocate it once per run.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/inline_function.hpp"
#include "core/units.hpp"

namespace rdmasim {

// 64 bytes: a `this` pointer and a moved-in Packet handle fit.
using EventFn = InlineFunction<64>;

// Names a scheduled event so that it can be cancelled. A stale id (the event
// already ran or was cancelled) is harmless to cancel.
struct EventId {
  uint64_t key = 0;  // sequence << kSlotBits | slot; 0 never names an event
  explicit operator bool() const { return key != 0; }
};

class Simulator {
public:
  Simulator();
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Time now() const { return now_; }

  // Schedules fn at `when` (not before now()).
  EventId at(Time when, EventFn fn);
  EventId after(Time delay, EventFn fn) { return at(now_ + delay, std::move(fn)); }
  // The same for a closure, built directly in its slot.
  template <typename F>
    requires(!std::is_same_v<std::decay_t<F>, EventFn>)
  EventId at(Time when, F&& fn);
  template <typename F>
    requires(!std::is_same_v<std::decay_t<F>, EventFn>)
  EventId after(Time delay, F&& fn) {
    return at(now_ + delay, std::forward<F>(fn));
  }
  void cancel(EventId id);

  // Runs events until none remain, stop() is called, or the next event is
  // later than `until` (then now() becomes `until`; an `until` before now()
  // runs nothing and leaves now() alone).
  void run(Time until = Time::max());
  void stop() { stopped_ = true; }

  uint64_t events_run() const { return events_run_; }
  // Events scheduled and neither run nor cancelled.
  size_t pending() const { return live_; }

  // Drops every pending event, destroying its closure (and so any coroutine
  // that was waiting on it, see core/task.hpp). now() is unchanged. Call it
  // before destroying what those closures refer to; the destructor calls it
  // too.
  void clear();

private:
  static constexpr int kSlotBits = 24;
  static constexpr uint64_t kSlotMask = (uint64_t{1} << kSlotBits) - 1;
  static constexpr uint32_t kNoSlot = static_cast<uint32_t>(kSlotMask);  // end of the free list
  static constexpr uint64_t kMaxSeq = (uint64_t{1} << (64 - kSlotBits)) - 1;
  static constexpr int kChunkBits = 10;  // 1024 slots (80 KiB) a chunk

  struct Entry {
    uint64_t time;  // picoseconds, never negative
    uint64_t key;
  };
  struct Slot {
    // The live event's key; 0 once cancelled or running; while the slot is
    // free, the next free slot (< 2^24, so never a key: sequences start at 1).
    uint64_t key;
    EventFn fn;
  };
  Slot& slot(uint32_t i) { return chunks_[i >> kChunkBits][i & ((1u << kChunkBits) - 1)]; }
  uint32_t take_slot() {
    if (free_head_ == kNoSlot) grow_slots();
    const uint32_t i = free_head_;
    free_head_ = static_cast<uint32_t>(slot(i).key);
    return i;
  }
  void free_slot(uint32_t i) {
    slot(i).key = free_head_;
    free_head_ = i;
  }
  void grow_slots();
  void prefetch_slot(const Entry& e);
  // Gives slot i, holding its closure, a key and queues it.
  EventId commit(Time when, uint32_t i) {
    if (when < now_) when = now_;
    if (next_seq_ > kMaxSeq) sequence_exhausted(i);
    const uint64_t key = next_seq_++ << kSlotBits | i;
    slot(i).key = key;
    enqueue({static_cast<uint64_t>(when.count()), key});
    ++live_;
    return EventId{key};
  }
  [[noreturn]] void sequence_exhausted(uint32_t i);

  // A growable array of entries that also knows its smallest time, so that
  // taking a bucket apart needs no pass to find it.
  struct Bucket {
    Entry* begin = nullptr;
    Entry* end = nullptr;
    Entry* cap = nullptr;
    uint64_t min = UINT64_MAX;
    void add(Entry e) {
      if (end == cap) grow();
      *end++ = e;
      min = e.time < min ? e.time : min;
    }
    void grow();
    void reset() {
      end = begin;
      min = UINT64_MAX;
    }
  };

  // The bucket of an entry at time t != last: level l is the highest
  // base-2^kRadixBits digit in which t and last differ, d is t's digit
  // there; buckets are numbered l * kRadix + d, which sorts them.
  static size_t bucket_of(uint64_t t, uint64_t last) {
    const unsigned high = 63u ^ static_cast<unsigned>(__builtin_clzll(t ^ last));  // highest differing bit
    const unsigned level = high / kRadixBits;
    const unsigned shift = level * kRadixBits;
    return static_cast<size_t>(level) * kRadix + ((t >> shift) & (kRadix - 1));
  }
  void mark(size_t b) { occupied_[b >> 6] |= uint64_t{1} << (b & 63); }

  // Entry order: time, then schedule order (the sequence in the key's high bits).
  static bool later(const Entry& a, const Entry& b) { return a.time > b.time || (a.time == b.time && a.key > b.key); }
  void enqueue(Entry e) {
    if (small_mode_) {
      if (small_n_ < kSmallMax) {
        small_push(e);
        return;
      }
      to_radix();
    }
    push(e);
  }
  // Inserts e into small_[small_head_, +small_n_), sorted next first. It
  // is searched for from the back: a new event is usually among the latest
  // (and, the last scheduled, goes after any of equal time).
  void small_push(Entry e) {
    if (small_head_ + small_n_ == small_.size()) compact_small();
    size_t i = small_head_ + small_n_++;
    for (; i > small_head_ && later(small_[i - 1], e); --i) small_[i] = small_[i - 1];
    small_[i] = e;
  }
  const Entry& small_next() const { return small_[small_head_]; }
  Entry small_pop() {
    --small_n_;
    return small_[small_head_++];
  }
  void compact_small();
  // Takes the next entry out if its time is at most `until`.
  [[gnu::always_inline]] inline bool take(uint64_t until, Entry& e);
  void to_radix();
  void to_small();

  void push(Entry e) {
    if (e.time == last_) {
      b0_.add(e);
      return;
    }
    const size_t b = bucket_of(e.time, last_);
    buckets_[b].add(e);
    mark(b);
  }
  // Refills the used-up bucket 0 from the lowest non-empty bucket if the
  // next time is at most `until`; false if there is no event to take.
  [[gnu::always_inline]] inline bool refill(uint64_t until);

  Time now_;
  bool stopped_ = false;
  uint64_t next_seq_ = 1;
  uint64_t events_run_ = 0;
  size_t live_ = 0;

  // The radix heap. An entry whose time t differs from last_ lives in bucket
  // (level, digit): level is the highest base-2^kRadixBits digit in which t
  // and last_ differ, digit is t's value there (always above last_'s).
  // Buckets sort by (level, digit). Entries at last_ itself are bucket 0, a
  // FIFO in schedule order read from b0_next_.
  static constexpr unsigned kRadixBits = 6;  // of 3 .. 8 measured, 6 is fastest (docs/performance.md)
  static constexpr uint64_t kRadix = uint64_t{1} << kRadixBits;
  static constexpr size_t kLevels = (64 + kRadixBits - 1) / kRadixBits;
  static constexpr size_t kBuckets = kLevels * kRadix;
  uint64_t last_ = 0;  // time of the last entry taken out
  Bucket b0_;
  size_t b0_next_ = 0;  // index, not pointer: b0_ may grow while it is read
  std::array<Bucket, kBuckets> buckets_;
  std::array<uint64_t, (kBuckets + 63) / 64> occupied_{};  // bit b: buckets_[b] is not empty

  // The small queue: a sorted array (the next entry first) used instead of
  // the radix heap while at most kSmallMax entries are queued. It hands over
  // to the radix heap when full and takes back, leaving cancelled entries
  // behind, when kSmallBack or fewer live events remain.
  static constexpr size_t kSmallMax = 32;
  static constexpr size_t kSmallBack = 12;
  bool small_mode_ = true;
  size_t small_head_ = 0;  // entries are taken from the front: it moves up
  size_t small_n_ = 0;
  std::array<Entry, 4 * kSmallMax> small_;  // room to move up before compacting

  std::vector<std::unique_ptr<Slot[]>> chunks_;
  uint32_t slot_count_ = 0;
  uint32_t free_head_ = kNoSlot;
};

template <typename F>
  requires(!std::is_same_v<std::decay_t<F>, EventFn>)
EventId Simulator::at(Time when, F&& fn) {
  const uint32_t i = take_slot();
  try {
    slot(i).fn.emplace(std::forward<F>(fn));
  } catch (...) {
    free_slot(i);
    throw;
  }
  return commit(when, i);
}

}  // namespace rdmasim
