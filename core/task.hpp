// Coroutines in simulated time, so that a host program reads like a verbs
// program: post a work request, then co_await what completes it.
//
//   Task client(Simulator& sim, Trigger& done) {
//     co_await sleep(sim, Time::us(1));   // resumes 1 us later, through the engine
//     co_await done;                      // resumes when someone calls done.notify()
//   }
//   client(sim, trig);                    // starts at once, runs until its first co_await
//
// Task
//   A coroutine returning void. It starts eagerly, when called. Dropping the
//   returned Task detaches it (fire and forget): its frame frees itself when
//   the body finishes. `co_await child(...)` instead waits for the child to
//   finish and resumes the parent right then (no engine event in between).
//   An exception that escapes a Task body is a bug in the model: it prints
//   the exception and terminates.
//
// sleep(sim, d), sleep_until(sim, t)
//   Suspends and resumes through an engine event after d (at t), so events
//   the same context already scheduled for that instant run first (others
//   run in their key order, core/engine.hpp). sleep(sim, Time()) yields.
//
// Trigger
//   A reusable wake-up: notify() resumes the longest-waiting coroutine,
//   always through an engine event at the current time, never inline, so a
//   component that notifies finishes its own step first. A notify() with no
//   waiter is remembered (once) and the next co_await passes straight on,
//   so a wake-up that comes before the wait is not lost.
//
// Lifetime: a suspended coroutine belongs to what will resume it (a pending
// engine event, a Trigger, or its awaiting parent). If that is dropped (the
// Simulator is destroyed or cleared, the Trigger destroyed) the coroutine
// frame is destroyed with it, and so are the parents awaiting it: nothing
// leaks, but locals of such frames are destroyed then, so they must not
// refer to objects that are already gone (call Simulator::clear() first).
#pragma once

#include <coroutine>
#include <cstdio>
#include <exception>
#include <new>
#include <utility>

#include "core/engine.hpp"
#include "core/units.hpp"

namespace rdmasim {

class Task {
 public:
  struct promise_type {
    Task* owner = nullptr;                 // the Task object, while one holds this frame
    std::coroutine_handle<> continuation;  // the coroutine awaiting us, if any
    bool done = false;

    promise_type() = default;
    promise_type(const promise_type&) = delete;
    promise_type& operator=(const promise_type&) = delete;
    // Runs when the frame is destroyed: at the end of a detached body, by
    // the owning Task after the end, or early when the coroutine is dropped
    // while suspended (then the parent waiting on it is dropped too).
    ~promise_type() {
      if (owner) owner->h_ = nullptr;
      if (!done && continuation) std::exchange(continuation, nullptr).destroy();
    }

    Task get_return_object() { return Task(std::coroutine_handle<promise_type>::from_promise(*this)); }
    std::suspend_never initial_suspend() noexcept { return {}; }
    struct FinalAwaiter {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
        promise_type& p = h.promise();
        p.done = true;
        if (!p.owner) {  // detached: nobody will look at this frame again
          h.destroy();
          return std::noop_coroutine();
        }
        if (p.continuation) return std::exchange(p.continuation, nullptr);
        return std::noop_coroutine();
      }
      void await_resume() noexcept {}
    };
    FinalAwaiter final_suspend() noexcept { return {}; }
    void return_void() {}
    [[noreturn]] void unhandled_exception() noexcept {
      try {
        throw;
      } catch (const std::bad_alloc&) {
        // Out of memory: the terminate handler the program sets says so.
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rdmasim: exception escaped a coroutine: %s\n", e.what());
      } catch (...) {
        std::fprintf(stderr, "rdmasim: unknown exception escaped a coroutine\n");
      }
      std::terminate();
    }
  };

  Task(Task&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {
    if (h_) h_.promise().owner = this;
  }
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      release();
      h_ = std::exchange(o.h_, nullptr);
      if (h_) h_.promise().owner = this;
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { release(); }

  // True once the body has finished (or the coroutine was dropped).
  bool done() const { return !h_ || h_.promise().done; }

  struct Awaiter {
    std::coroutine_handle<promise_type> h;
    bool await_ready() const noexcept { return !h || h.promise().done; }
    void await_suspend(std::coroutine_handle<> parent) noexcept { h.promise().continuation = parent; }
    void await_resume() const noexcept {}
  };
  Awaiter operator co_await() const& noexcept { return {h_}; }
  Awaiter operator co_await() const&& noexcept { return {h_}; }

 private:
  explicit Task(std::coroutine_handle<promise_type> h) : h_(h) { h_.promise().owner = this; }
  void release() {
    if (!h_) return;
    promise_type& p = h_.promise();
    if (p.done) {
      h_.destroy();
    } else {
      p.owner = nullptr;  // detach: the frame frees itself when the body ends
    }
    h_ = nullptr;
  }

  std::coroutine_handle<promise_type> h_;
};

namespace detail {
// An engine event that resumes a coroutine. If the event is dropped without
// running (simulator cleared or destroyed), it destroys the coroutine instead.
class ResumeEvent {
  std::coroutine_handle<> h_;

 public:
  explicit ResumeEvent(std::coroutine_handle<> h) : h_(h) {}
  ResumeEvent(ResumeEvent&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  ResumeEvent& operator=(ResumeEvent&&) = delete;
  ~ResumeEvent() {
    if (h_) h_.destroy();
  }
  void operator()() { std::exchange(h_, nullptr).resume(); }
};

struct SleepAwaiter {
  Simulator& sim;
  Time when;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) { sim.at(when, ResumeEvent(h)); }
  void await_resume() const noexcept {}
};
}  // namespace detail

// Resumes the awaiting coroutine `delay` from now (at `when`), through the engine.
inline detail::SleepAwaiter sleep(Simulator& sim, Time delay) { return {sim, sim.now() + delay}; }
inline detail::SleepAwaiter sleep_until(Simulator& sim, Time when) { return {sim, when}; }

class Trigger {
  // One suspended waiter; lives in the waiting coroutine's frame.
  struct Node {
    Trigger* trigger = nullptr;  // non-null while queued
    Node* prev = nullptr;
    Node* next = nullptr;
    std::coroutine_handle<> h;
  };

 public:
  explicit Trigger(Simulator& sim) : sim_(sim) {}
  Trigger(const Trigger&) = delete;
  Trigger& operator=(const Trigger&) = delete;
  ~Trigger() {
    // Waiters that can never be resumed are dropped (see Lifetime above).
    while (head_) {
      Node* n = head_;
      unlink(n);
      n->h.destroy();
    }
  }

  // Resumes the longest-waiting coroutine through an engine event at now();
  // with nobody waiting, lets the next co_await pass.
  void notify() {
    if (!head_) {
      latched_ = true;
      return;
    }
    Node* n = head_;
    unlink(n);
    sim_.at(sim_.now(), detail::ResumeEvent(n->h));
  }

  bool has_waiter() const { return head_ != nullptr; }

  class Awaiter {
    Trigger& t_;
    Node node_;

   public:
    explicit Awaiter(Trigger& t) : t_(t) {}
    Awaiter(const Awaiter&) = delete;
    Awaiter& operator=(const Awaiter&) = delete;
    ~Awaiter() {
      if (node_.trigger) t_.unlink(&node_);  // the waiter was destroyed while queued
    }
    bool await_ready() noexcept { return std::exchange(t_.latched_, false); }
    void await_suspend(std::coroutine_handle<> h) noexcept {
      node_.h = h;
      t_.push(&node_);
    }
    void await_resume() const noexcept {}
  };
  Awaiter operator co_await() noexcept { return Awaiter(*this); }

 private:
  void push(Node* n) {
    n->trigger = this;
    n->prev = tail_;
    n->next = nullptr;
    (tail_ ? tail_->next : head_) = n;
    tail_ = n;
  }
  void unlink(Node* n) {
    (n->prev ? n->prev->next : head_) = n->next;
    (n->next ? n->next->prev : tail_) = n->prev;
    n->trigger = nullptr;
    n->prev = n->next = nullptr;
  }

  Simulator& sim_;
  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  bool latched_ = false;
};

}  // namespace rdmasim
