// The discrete-event engine. Events are small move-only closures ordered by
// (time, order key). The key is not one global schedule counter: it is the
// context that scheduled the event (a node, or 0, the experiment itself)
// and that context's own sequence number. So what runs first at one instant
// depends only on who scheduled what, never on how many events other parts
// of the network scheduled meanwhile, and a network split over several
// engines (parallel/, docs/parallel.md) runs each node's events in the same
// order as one engine does. Each event also names the context it runs in:
// what it schedules is keyed by that context (an arriving frame runs as the
// receiving node, though the sender keyed it).
//
// How it is fast (figures, and the 4-ary heap it replaced: docs/performance.md):
// - The queue is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990)
//   with 6-bit digits. Simulated time never goes back, so an event's bucket
//   is the highest digit in which its time differs from the last time taken
//   out, and its value there: scheduling is an append, and taking the next
//   event out moves the entries of one small bucket down a level. Accesses
//   are sequential, where a heap of a million events waits on a cache miss
//   per level. Events of one time always share a bucket; when it becomes
//   the current one it is put in key order (usually it holds one entry),
//   and an event scheduled for the current instant is inserted in order.
// - A queue entry is 16 bytes (time, slot; the key is in the slot, read on
//   ties only). The closure lives in a slot of fixed address (chunks that never move), is built in place when
//   scheduled, runs in place and is destroyed there: no allocation and no
//   move per event once the pool and buckets have grown. With many events
//   pending, closures about to run are prefetched.
// - While few events are pending (a two-host stream keeps about ten), a
//   sorted array is cheaper than moving entries down the radix levels; the queue switches between the two as
//   it grows and shrinks. Both order by (time, key), so which one holds the events never changes what runs
//   when.
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

// Who an event belongs to: 0 is the experiment itself (the runner, faults,
// workload arrivals), a node is its graph index + 1 (Node::context()).
using Context = uint32_t;

// Names a scheduled event so that it can be cancelled. A stale id (the event
// already ran or was cancelled) is harmless to cancel.
struct EventId {
  uint64_t order = 0;  // the event's key; 0 never names an event
  uint32_t slot = 0;
  explicit operator bool() const { return order != 0; }
};

class Simulator {
 public:
  static constexpr int kSeqBits = 40;  // a context's own sequence; the context above it
  static constexpr uint64_t kMaxSeq = (uint64_t{1} << kSeqBits) - 1;
  static constexpr Context kMaxContext = (Context{1} << (64 - kSeqBits)) - 1;

  Simulator();
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Time now() const { return now_; }

  // The context running now, which keys what is scheduled.
  Context context() const { return ctx_; }
  // Runs code in the name of `c` until it goes out of scope: a program
  // started on a host schedules its events as that host.
  class Scope {
   public:
    Scope(Simulator& sim, Context c) : sim_(sim), prev_(sim.ctx_) { sim.ctx_ = c; }
    ~Scope() { sim_.ctx_ = prev_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Simulator& sim_;
    Context prev_;
  };

  // Schedules fn at `when` (not before now()), to run in the current context.
  EventId at(Time when, EventFn fn) { return place(when, next_order(), ctx_, std::move(fn)); }
  EventId after(Time delay, EventFn fn) { return at(now_ + delay, std::move(fn)); }
  // The same for a closure, built directly in its slot.
  template <typename F>
  requires(!std::is_same_v<std::decay_t<F>, EventFn>) EventId at(Time when, F&& fn) {
    return place(when, next_order(), ctx_, std::forward<F>(fn));
  }
  template <typename F>
  requires(!std::is_same_v<std::decay_t<F>, EventFn>) EventId after(Time delay, F&& fn) {
    return at(now_ + delay, std::forward<F>(fn));
  }
  // Takes the current context's next key: for an event placed later, or by
  // another engine (a frame that crosses to another rank keeps the key its
  // sender gave it).
  uint64_t next_order() {
    if (ctx_ >= seqs_.size()) grow_contexts(ctx_);
    const uint64_t s = ++seqs_[ctx_];
    if (s > kMaxSeq) sequence_exhausted();
    return uint64_t{ctx_} << kSeqBits | s;
  }
  // Schedules fn at `when` with key `order` (from next_order()), to run in
  // context `target`. An event of a context this engine does not run (set_foreign)
  // is not scheduled: another engine runs it.
  template <typename F>
  EventId place(Time when, uint64_t order, Context target, F&& fn);
  void cancel(EventId id);

  // The contexts this engine does not run (another one does): foreign[c].
  void set_foreign(std::vector<bool> foreign) { foreign_ = std::move(foreign); }
  bool runs(Context c) const { return c >= foreign_.size() || !foreign_[c]; }
  // Whether another engine runs some contexts (the network is split).
  bool split() const { return !foreign_.empty(); }

  // Runs events until none remain, stop() is called, or the next event is
  // later than `until` (then now() becomes `until`; an `until` before now()
  // runs nothing and leaves now() alone).
  void run(Time until = Time::max());
  void stop() { stopped_ = true; }
  // Moves now() forward to t, with no event pending before it: a split
  // network's engines agree on the time the run has reached (parallel/).
  void advance(Time t) {
    if (t > now_) now_ = t;
  }

  uint64_t events_run() const { return events_run_; }
  // Of those, the events of context 0 (which every engine of a split network runs).
  uint64_t experiment_events_run() const { return experiment_events_run_; }
  // The key of the event running now (or that ran last): with now(), where
  // it stands in the one order of events, whichever engine ran it (a split
  // run merges what its ranks recorded in that order, parallel/).
  uint64_t running_order() const { return running_order_; }
  // When the last event ran (now() may have moved on to a run's `until`).
  Time last_event_time() const { return last_event_; }
  // Events scheduled and neither run nor cancelled.
  size_t pending() const { return live_; }
  // Slots made for closures so far (in chunks of 1,024; never given back):
  // the most events pending at once, cancelled ones not among them.
  size_t slots() const { return slot_count_; }
  // No live event is earlier than this (a cancelled one may be at it);
  // Time::max() when none is pending.
  Time next_time_bound() const;

  // Drops every pending event, destroying its closure (and so any coroutine
  // that was waiting on it, see core/task.hpp). now() is unchanged. Call it
  // before destroying what those closures refer to; the destructor calls it
  // too.
  void clear();

 private:
  static constexpr uint32_t kNoSlot = UINT32_MAX;  // end of the free list
  static constexpr int kChunkBits = 10;            // 1024 slots a chunk

  // The key stays in the slot: only ties need it, so the entry is 16
  // bytes, as it was with one global counter. A cancelled event's slot is
  // freed at once (PFC's pause timers and DCQCN's, rearmed by every PAUSE
  // frame and CNP, left most slots of a k = 32 run held by entries still
  // waiting for their time): the entry names its slot's generation too,
  // and an entry whose slot has been freed since is skipped.
  struct Entry {
    uint64_t time;  // picoseconds, never negative
    uint64_t slot;  // generation << 32 | slot index
  };
  struct Slot {
    // The live event's key (context << kSeqBits | its sequence); 0 once
    // cancelled or running, and while free.
    uint64_t order;
    // The context it runs in; while the slot is free, the next free slot.
    Context ctx;
    uint32_t gen;  // one more each time the slot is freed
    EventFn fn;
  };
  static uint32_t index_of(const Entry& e) { return static_cast<uint32_t>(e.slot); }
  static uint32_t gen_of(const Entry& e) { return static_cast<uint32_t>(e.slot >> 32); }
  Slot& slot(uint32_t i) { return chunks_[i >> kChunkBits][i & ((1u << kChunkBits) - 1)]; }
  uint32_t take_slot() {
    if (free_head_ == kNoSlot) grow_slots();
    const uint32_t i = free_head_;
    free_head_ = slot(i).ctx;
    return i;
  }
  void free_slot(uint32_t i) {
    Slot& s = slot(i);
    s.order = 0;
    ++s.gen;
    s.ctx = free_head_;
    free_head_ = i;
  }
  void grow_slots();
  void grow_contexts(Context c);
  void prefetch_slot(const Entry& e);
  // Gives slot i, holding its closure, its key and queues it.
  EventId commit(Time when, uint64_t order, Context target, uint32_t i) {
    if (when < now_) when = now_;
    Slot& s = slot(i);
    s.order = order;
    s.ctx = target;
    enqueue({static_cast<uint64_t>(when.count()), uint64_t{s.gen} << 32 | i});
    ++live_;
    return EventId{order, i};
  }
  [[noreturn]] void sequence_exhausted();

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
    // Emptied after a burst: a large array goes back to the allocator, so
    // that the buckets' arrays are not each as large as the most that
    // bucket ever held at once (at k = 32 they summed to 110 MiB).
    void release_if_large() {
      reset();
      if (cap - begin > kKeptEntries) {
        delete[] begin;
        begin = end = cap = nullptr;
      }
    }
    static constexpr ptrdiff_t kKeptEntries = 4096;
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

  // Entry order: time, then key.
  // An entry whose slot was freed since (its event cancelled) is not
  // live, and sorts first: it is skipped wherever it is.
  uint64_t order_of(const Entry& e) {
    const Slot& s = slot(index_of(e));
    return s.gen == gen_of(e) ? s.order : 0;
  }
  bool live(const Entry& e) { return slot(index_of(e)).gen == gen_of(e); }
  bool later(const Entry& a, const Entry& b) {
    return a.time > b.time || (a.time == b.time && order_of(a) > order_of(b));
  }
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
  // is searched for from the back: a new event is usually among the latest.
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
  // clear()'s step: frees the slots of [first, last), destroying the closures
  // still pending there; returns how many entries that was.
  size_t drop_entries(const Entry* first, const Entry* last);
  // Takes the next entry out if its time is at most `until`.
  [[gnu::always_inline]] inline bool take(uint64_t until, Entry& e);
  void to_radix();
  void to_small();

  void push(Entry e) {
    if (e.time == last_) {
      // The current instant: in key order among the entries not yet taken.
      b0_.add(e);
      Entry* p = b0_.end - 1;
      const uint64_t o = order_of(e);
      for (Entry* first = b0_.begin + b0_next_; p > first && order_of(p[-1]) > o; --p) *p = p[-1];
      *p = e;
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
  Time last_event_;
  uint64_t running_order_ = 0;
  bool stopped_ = false;
  Context ctx_ = 0;
  std::vector<uint64_t> seqs_;  // by context: the last sequence number it gave
  std::vector<bool> foreign_;
  uint64_t events_run_ = 0;
  uint64_t experiment_events_run_ = 0;
  size_t live_ = 0;
  // Entries still queued whose event was cancelled (their slots are free).
  // While there are none, moving entries down the radix levels reads no
  // slot: at a million pending that read was a cache miss a move. Only a
  // shortcut: a cancelled entry carried down is still skipped where it runs.
  size_t dead_ = 0;

  // The radix heap. An entry whose time t differs from last_ lives in bucket
  // (level, digit): level is the highest base-2^kRadixBits digit in which t
  // and last_ differ, digit is t's value there (always above last_'s).
  // Buckets sort by (level, digit). Entries at last_ itself are bucket 0,
  // in key order, read from b0_next_.
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
EventId Simulator::place(Time when, uint64_t order, Context target, F&& fn) {
  if (!foreign_.empty() && !runs(target)) return {};
  const uint32_t i = take_slot();
  try {
    if constexpr (std::is_same_v<std::decay_t<F>, EventFn>)
      slot(i).fn = std::forward<F>(fn);
    else
      slot(i).fn.emplace(std::forward<F>(fn));
  } catch (...) {
    free_slot(i);
    throw;
  }
  return commit(when, order, target, i);
}

}  // namespace rdmasim
