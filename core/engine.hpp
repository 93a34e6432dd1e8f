// The discrete-event engine. Events are small move-only closures ordered by
// (time, schedule order): ties run in the order they were scheduled, so the
// same experiment and seed always run the same way. Closures live in a slot
// pool and the queue is a 4-ary heap of 16-byte keys: scheduling and running
// an event allocates nothing once the pool has grown.
#pragma once

#include <cstdint>
#include <vector>

#include "core/inline_function.hpp"
#include "core/units.hpp"

namespace rdmasim {

using EventFn = InlineFunction<48>;

// Names a scheduled event so that it can be cancelled. A stale id (the event
// already ran or was cancelled) is harmless to cancel.
struct EventId {
  uint64_t key = 0;  // sequence << kSlotBits | slot; 0 never names an event
  explicit operator bool() const { return key != 0; }
};

class Simulator {
public:
  Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Time now() const { return now_; }

  EventId at(Time when, EventFn fn);
  EventId after(Time delay, EventFn fn) { return at(now_ + delay, std::move(fn)); }
  void cancel(EventId id);

  // Runs events until none remain, stop() is called, or the next event is
  // later than `until` (then now() becomes `until`).
  void run(Time until = Time::max());
  void stop() { stopped_ = true; }

  uint64_t events_run() const { return events_run_; }
  size_t pending() const { return heap_.size(); }

private:
  static constexpr int kSlotBits = 24;
  static constexpr uint64_t kSlotMask = (uint64_t{1} << kSlotBits) - 1;

  struct Entry {
    int64_t time;
    uint64_t key;
    bool operator<(const Entry& o) const { return time < o.time || (time == o.time && key < o.key); }
  };
  struct Slot {
    EventFn fn;
    uint64_t key = 0;  // key of the live event in this slot, 0 when free or cancelled
  };

  void push(Entry e);
  Entry pop();

  Time now_;
  bool stopped_ = false;
  uint64_t next_seq_ = 1;
  uint64_t events_run_ = 0;
  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
};

}  // namespace rdmasim
