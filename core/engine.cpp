#include "core/engine.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace rdmasim {
namespace {
constexpr size_t kPrefetch = 8;  // how far ahead in bucket 0 to fetch closures
}
// namespace

void Simulator::Bucket::grow() {
  const size_t n = static_cast<size_t>(end - begin);
  const size_t cap_n = n == 0 ? 16 : 2 * n;
  Entry* fresh = new Entry[cap_n];
  if (n != 0) std::memcpy(static_cast<void*>(fresh), begin, n * sizeof(Entry));
  delete[] begin;
  begin = fresh;
  end = fresh + n;
  cap = fresh + cap_n;
}

Simulator::Simulator() { b0_.grow(); }

Simulator::~Simulator() {
  clear();
  delete[] b0_.begin;
  for (Bucket& b : buckets_) delete[] b.begin;
}

void Simulator::grow_slots() {
  // Grow by a chunk. Slots never move, so a closure may schedule events
  // while it runs in its own slot.
  if (slot_count_ >= kNoSlot - (1u << kChunkBits)) throw std::length_error("too many pending events");
  chunks_.push_back(std::make_unique<Slot[]>(size_t{1} << kChunkBits));
  const uint32_t first = slot_count_;
  slot_count_ += 1u << kChunkBits;
  for (uint32_t i = slot_count_; i-- > first;) free_slot(i);
}

void Simulator::grow_contexts(Context c) {
  if (c > kMaxContext) throw std::length_error("too many event contexts");
  seqs_.resize(static_cast<size_t>(c) + 1, 0);
}

void Simulator::sequence_exhausted() { throw std::length_error("event sequence numbers exhausted"); }

void Simulator::prefetch_slot(const Entry& e) {
  const Slot& s = slot(index_of(e));
  __builtin_prefetch(&s);
  __builtin_prefetch(reinterpret_cast<const char*>(&s) + 64);
}

void Simulator::cancel(EventId id) {
  if (id.order == 0 || id.slot >= slot_count_) return;
  Slot& s = slot(id.slot);
  if (s.order != id.order) return;
  // The queue entry stays, and is skipped when taken out: the slot's
  // generation no longer matches it.
  --live_;
  ++dead_;
  s.fn.reset();
  free_slot(id.slot);
}

Time Simulator::next_time_bound() const {
  if (live_ == 0) return Time::max();
  uint64_t t = UINT64_MAX;
  if (small_mode_) {
    if (small_n_ > 0) t = small_next().time;
  } else if (b0_.begin + b0_next_ != b0_.end) {
    t = b0_.begin[b0_next_].time;
  } else {
    for (size_t w = 0; w < occupied_.size(); ++w)
      if (occupied_[w]) {
        t = buckets_[w * 64 + static_cast<size_t>(__builtin_ctzll(occupied_[w]))].min;
        break;
      }
  }
  return t == UINT64_MAX ? Time::max() : Time::ps(static_cast<int64_t>(t));
}

void Simulator::to_radix() {
  // Every queued entry is at or after now(): now() is a valid last time.
  // Entries of now() go into bucket 0 in key order: they leave the small
  // queue in that order.
  last_ = static_cast<uint64_t>(now_.count());
  b0_.reset();
  b0_next_ = 0;
  while (small_n_ > 0) push(small_pop());
  small_head_ = 0;
  small_mode_ = false;
}

void Simulator::compact_small() {
  std::copy(small_.begin() + static_cast<ptrdiff_t>(small_head_),
            small_.begin() + static_cast<ptrdiff_t>(small_head_ + small_n_), small_.begin());
  small_head_ = 0;
}

void Simulator::to_small() {
  // Called with bucket 0 used up: every entry is in the other buckets.
  for (size_t w = 0; w < occupied_.size(); ++w) {
    for (uint64_t bits = occupied_[w]; bits; bits &= bits - 1) {
      Bucket& b = buckets_[w * 64 + static_cast<size_t>(__builtin_ctzll(bits))];
      for (const Entry* p = b.begin; p != b.end; ++p)
        if (live(*p))
          small_push(*p);
        else
          --dead_;  // cancelled: its slot is free already
      b.reset();
    }
    occupied_[w] = 0;
  }
  b0_.reset();
  b0_next_ = 0;
  small_mode_ = true;
}

bool Simulator::take(uint64_t until, Entry& e) {
  if (!small_mode_) {
    if (b0_.begin + b0_next_ == b0_.end) {
      if (live_ <= kSmallBack) {
        to_small();
        return take(until, e);
      }
      if (!refill(until)) return false;
    } else if (b0_.begin[b0_next_].time > until) {
      return false;
    }
    e = b0_.begin[b0_next_++];
    // With many pending events the closures are cold: fetch the one
    // kPrefetch events ahead while this one runs (refill fetched the first
    // few but the very first, needed at once).
    if (b0_next_ + kPrefetch - 1 < static_cast<size_t>(b0_.end - b0_.begin))
      prefetch_slot(b0_.begin[b0_next_ + kPrefetch - 1]);
    else if (b0_.begin + b0_next_ == b0_.end)
      // Bucket 0 is used up: the next event is most likely the earliest of
      // the lowest bucket (unless this one schedules an earlier one). Where
      // events rarely share an instant, each refill would otherwise start
      // with a closure that has left the cache; fetching it while this
      // event runs hides that. Only a hint: nothing moves until refill().
      for (size_t w = 0; w < occupied_.size(); ++w)
        if (occupied_[w]) {
          const Bucket& b = buckets_[w * 64 + static_cast<size_t>(__builtin_ctzll(occupied_[w]))];
          const Entry* first = b.begin;  // a level-0 bucket: one instant, first scheduled first
          if (b.end - b.begin <= 8)      // a small higher one: its earliest entry
            for (const Entry* p = b.begin; p != b.end; ++p)
              if (p->time == b.min) {
                first = p;
                break;
              }
          prefetch_slot(*first);
          break;
        }
    return true;
  }
  if (small_n_ == 0 || small_next().time > until) return false;
  e = small_pop();
  return true;
}

bool Simulator::refill(uint64_t until) {
  size_t w = 0;
  while (occupied_[w] == 0)
    if (++w == occupied_.size()) return false;
  const size_t b = w * 64 + static_cast<size_t>(__builtin_ctzll(occupied_[w]));
  Bucket& src = buckets_[b];
  const uint64_t m = src.min;
  if (m > until) return false;
  last_ = m;
  occupied_[w] &= occupied_[w] - 1;
  b0_.reset();
  if (b < kRadix) {
    // Level 0: all of one time. The bucket becomes bucket 0 as it is.
    std::swap(b0_, src);
  } else {
    // Every entry of this bucket agrees with m from the bucket's digit up,
    // so relative to the new last_ each lands in a lower bucket (or bucket
    // 0), and the entries of other buckets stay where they are.
    // A cancelled entry is left out here instead of being carried down
    // level by level until its time (PFC's pause timers, rearmed by every
    // PAUSE frame, are most of them).
    // Where none is cancelled (dead_ == 0), no entry's slot is read here.
    if (dead_ == 0) {
      for (const Entry* p = src.begin; p != src.end; ++p) push(*p);
    } else {
      for (const Entry* p = src.begin; p != src.end; ++p) {
        if (live(*p))
          push(*p);
        else
          --dead_;
      }
    }
    src.release_if_large();
  }
  b0_next_ = 0;
  if (b0_.begin == b0_.end) return refill(until);  // every entry of time m was cancelled
  // An entry's bucket is a function of its time and last_ alone, so entries
  // of one time always share a bucket: bucket 0 now holds every entry of
  // time m, in the order they were scheduled. Put them in key order.
  if (b0_.end - b0_.begin > 1) {
    auto by_order = [this](const Entry& a, const Entry& b) { return order_of(a) < order_of(b); };
    if (!std::is_sorted(b0_.begin, b0_.end, by_order)) std::sort(b0_.begin, b0_.end, by_order);
  }
  const size_t n = std::min(static_cast<size_t>(b0_.end - b0_.begin), kPrefetch);
  for (size_t k = 1; k < n; ++k) prefetch_slot(b0_.begin[k]);
  return true;
}

void Simulator::run(Time until) {
  stopped_ = false;
  if (until < now_) return;
  // Code outside events (the runner) acts for the experiment, context 0.
  struct Reset {
    Context& ctx;
    ~Reset() { ctx = 0; }
  } reset{ctx_};
  const uint64_t limit = static_cast<uint64_t>(until.count());
  while (!stopped_) {
    Entry e;
    if (!take(limit, e)) {
      // Live events remain past `until`: time has reached it. Only cancelled
      // ones left (or none): the run is over and now() stays at the last event.
      if (live_ > 0) now_ = until;
      return;
    }
    const uint32_t i = index_of(e);
    Slot& s = slot(i);
    if (s.gen != gen_of(e)) {  // cancelled: its slot was freed then
      --dead_;
      continue;
    }
    now_ = last_event_ = Time::ps(static_cast<int64_t>(e.time));
    running_order_ = s.order;
    s.order = 0;  // running: cancelling its own id is now a no-op
    ctx_ = s.ctx;
    experiment_events_run_ += ctx_ == 0;
    --live_;
    ++events_run_;
    // A throwing closure leaves its slot taken; the exception ends the run.
    s.fn.invoke_once();
    free_slot(i);
  }
}

void Simulator::clear() {
  // Destroying a closure may run arbitrary code (a coroutine frame's
  // locals) that schedules or cancels events: take each closure out of its
  // slot before destroying it, and repeat until nothing is left. Each
  // bucket's array is taken whole and freed once drained: a copy of every
  // entry at once was 42 MiB at the end of a k = 32 run.
  for (;;) {
    size_t taken = 0;
    Bucket first = std::exchange(b0_, Bucket{});
    const size_t first_next = std::exchange(b0_next_, 0);
    taken += drop_entries(first.begin + first_next, first.end);
    delete[] first.begin;
    const std::vector<Entry> small(small_.begin() + static_cast<ptrdiff_t>(small_head_),
                                   small_.begin() + static_cast<ptrdiff_t>(small_head_ + small_n_));
    small_head_ = small_n_ = 0;
    taken += drop_entries(small.data(), small.data() + small.size());
    for (Bucket& b : buckets_) {
      Bucket mine = std::exchange(b, Bucket{});
      taken += drop_entries(mine.begin, mine.end);
      delete[] mine.begin;
    }
    occupied_.fill(0);
    if (taken == 0) return;
  }
}

size_t Simulator::drop_entries(const Entry* first, const Entry* last) {
  for (const Entry* e = first; e != last; ++e) {
    if (!live(*e)) {  // cancelled: its slot is free already
      --dead_;
      continue;
    }
    const uint32_t i = index_of(*e);
    Slot& s = slot(i);
    s.order = 0;
    --live_;
    EventFn fn = std::move(s.fn);
    free_slot(i);
    fn.reset();
  }
  return static_cast<size_t>(last - first);
}

}  // namespace rdmasim
