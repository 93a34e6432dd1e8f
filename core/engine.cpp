#include "core/engine.hpp"

#include <stdexcept>

namespace rdmasim {

Simulator::Simulator() {
  heap_.reserve(1024);
  slots_.reserve(1024);
}

EventId Simulator::at(Time when, EventFn fn) {
  if (when < now_) when = now_;
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (slots_.size() > kSlotMask) throw std::length_error("too many pending events");
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  const uint64_t key = next_seq_++ << kSlotBits | slot;
  slots_[slot].fn = std::move(fn);
  slots_[slot].key = key;
  push({when.count(), key});
  return EventId{key};
}

void Simulator::cancel(EventId id) {
  if (!id) return;
  Slot& s = slots_[id.key & kSlotMask];
  if (s.key != id.key) return;
  s.key = 0;
  s.fn.reset();  // the heap entry stays; it is skipped and its slot freed when popped
}

void Simulator::run(Time until) {
  stopped_ = false;
  while (!heap_.empty() && !stopped_) {
    if (heap_.front().time > until.count()) {
      now_ = until;
      return;
    }
    const Entry e = pop();
    const uint32_t slot = static_cast<uint32_t>(e.key & kSlotMask);
    Slot& s = slots_[slot];
    if (s.key != e.key) {  // cancelled
      free_slots_.push_back(slot);
      continue;
    }
    now_ = Time::ps(e.time);
    EventFn fn = std::move(s.fn);
    s.key = 0;
    free_slots_.push_back(slot);
    ++events_run_;
    fn();
  }
}

// 4-ary heap: shallower than binary, and a node's children share a cache line.
void Simulator::push(Entry e) {
  size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!(e < heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

Simulator::Entry Simulator::pop() {
  const Entry top = heap_.front();
  const Entry last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return top;
  size_t i = 0;
  for (;;) {
    const size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t end = first + 4 < n ? first + 4 : n;
    for (size_t c = first + 1; c < end; ++c)
      if (heap_[c] < heap_[best]) best = c;
    if (!(heap_[best] < last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  return top;
}

}  // namespace rdmasim
