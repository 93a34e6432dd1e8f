// A restartable timer that keeps at most one event in the engine. TCP and
// the IBA requester move their retransmission deadline on almost every ACK
// (RFC 6298 5.3, IBA 9.7.6.1.1); cancelling and rescheduling each time would
// leave a dead entry in the event queue per ACK. Instead the pending event checks, when it fires, whether the
// deadline moved later and, if so, sleeps again until then. Only moving a deadline earlier than the pending
// event costs a cancel.
#pragma once

#include "core/engine.hpp"
#include "core/units.hpp"

namespace rdmasim {

class LazyTimer {
 public:
  using Callback = void (*)(void* ctx);

  LazyTimer(Simulator& sim, void* ctx, Callback fn) : sim_(sim), ctx_(ctx), fn_(fn) {}
  LazyTimer(const LazyTimer&) = delete;
  LazyTimer& operator=(const LazyTimer&) = delete;
  ~LazyTimer() { sim_.cancel(event_); }

  bool armed() const { return deadline_ != Time::max(); }
  Time deadline() const { return deadline_; }

  void arm_at(Time when) {
    deadline_ = when;
    if (scheduled_for_ <= when) return;  // the pending event fires first and re-sleeps
    sim_.cancel(event_);
    schedule(when);
  }
  void arm_after(Time delay) { arm_at(sim_.now() + delay); }
  void disarm() { deadline_ = Time::max(); }  // the pending event, if any, finds nothing to do
  // Disarms and takes the pending event out too, so that an idle owner
  // leaves nothing in the engine (a run ends when no event is left).
  void stop() {
    deadline_ = scheduled_for_ = Time::max();
    sim_.cancel(event_);
    event_ = {};
  }

 private:
  void schedule(Time when) {
    scheduled_for_ = when;
    event_ = sim_.at(when, [this] { fire(); });
  }
  void fire() {
    scheduled_for_ = Time::max();
    event_ = {};
    if (!armed()) return;
    if (deadline_ > sim_.now()) {
      schedule(deadline_);
      return;
    }
    deadline_ = Time::max();
    fn_(ctx_);
  }

  Simulator& sim_;
  void* ctx_;
  Callback fn_;
  Time deadline_ = Time::max();
  Time scheduled_for_ = Time::max();
  EventId event_;
};

}  // namespace rdmasim
