// A move-only callable with fixed inline storage: no heap allocation, ever.
// Captures larger than the storage are a compile error, which keeps event
// closures small (a pointer, a Packet handle, a few integers).
//
// Storage is 8-byte aligned, not 16: the engine keeps one closure and its
// 8-byte event key in 80 bytes instead of 96. A capture that needs more
// alignment (long double, __int128) is a compile error; wrap it.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace rdmasim {

template <size_t Capacity>
class InlineFunction {
  struct Ops {
    void (*invoke)(void*);
    void (*invoke_destroy)(void*);       // invoke, then destroy (even if it throws)
    void (*move)(void* dst, void* src);  // move-construct dst from src, destroy src
    void (*destroy)(void*);
  };
  template <typename F>
  struct DestroyGuard {
    F* f;
    ~DestroyGuard() { f->~F(); }
  };
  template <typename F>
  static constexpr Ops kOpsFor = {
      [](void* p) { (*static_cast<F*>(p))(); },
      [](void* p) {
        DestroyGuard<F> g{static_cast<F*>(p)};
        (*g.f)();
      },
      [](void* dst, void* src) {
        ::new (dst) F(std::move(*static_cast<F*>(src)));
        static_cast<F*>(src)->~F();
      },
      [](void* p) { static_cast<F*>(p)->~F(); },
  };

  const Ops* ops_ = nullptr;
  alignas(8) std::byte storage_[Capacity];

 public:
  static constexpr size_t kCapacity = Capacity;

  InlineFunction() = default;
  template <typename F, typename D = std::decay_t<F>,
            typename = std::enable_if_t<!std::is_same_v<D, InlineFunction>>>
  InlineFunction(F&& f) {  // NOLINT(google-explicit-constructor): closures convert implicitly
    construct(std::forward<F>(f));
  }
  // Replaces the closure by f, built in place (no intermediate move).
  template <typename F, typename D = std::decay_t<F>,
            typename = std::enable_if_t<!std::is_same_v<D, InlineFunction>>>
  void emplace(F&& f) {
    reset();
    construct(std::forward<F>(f));
  }
  InlineFunction(InlineFunction&& o) noexcept : ops_(o.ops_) {
    if (ops_) ops_->move(storage_, o.storage_);
    o.ops_ = nullptr;
  }
  InlineFunction& operator=(InlineFunction&& o) noexcept {
    if (this != &o) {
      reset();
      ops_ = o.ops_;
      if (ops_) ops_->move(storage_, o.storage_);
      o.ops_ = nullptr;
    }
    return *this;
  }
  InlineFunction(const InlineFunction&) = delete;
  InlineFunction& operator=(const InlineFunction&) = delete;
  ~InlineFunction() { reset(); }

  void reset() {
    if (ops_) std::exchange(ops_, nullptr)->destroy(storage_);
  }
  explicit operator bool() const { return ops_ != nullptr; }
  void operator()() { ops_->invoke(storage_); }

  // Calls the closure in place and destroys it, leaving this empty: one
  // indirect call and no move, for callers that run a closure exactly once.
  // The closure is already marked empty while it runs.
  void invoke_once() { std::exchange(ops_, nullptr)->invoke_destroy(storage_); }

 private:
  template <typename F, typename D = std::decay_t<F>>
  void construct(F&& f) {
    static_assert(sizeof(D) <= Capacity, "event closure too large: capture less");
    static_assert(alignof(D) <= 8, "event closure over-aligned: capture a pointer to it instead");
    ::new (storage_) D(std::forward<F>(f));
    ops_ = &kOpsFor<D>;
  }
};

}  // namespace rdmasim
