// A move-only callable with fixed inline storage: no heap allocation, ever.
// Captures larger than the storage are a compile error, which keeps event
// closures small (a pointer, a Packet handle, a few integers).
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
    void (*move)(void* dst, void* src);  // move-construct dst from src, destroy src
    void (*destroy)(void*);
  };
  template <typename F>
  static constexpr Ops kOpsFor = {
      [](void* p) { (*static_cast<F*>(p))(); },
      [](void* dst, void* src) {
        ::new (dst) F(std::move(*static_cast<F*>(src)));
        static_cast<F*>(src)->~F();
      },
      [](void* p) { static_cast<F*>(p)->~F(); },
  };

  alignas(std::max_align_t) std::byte storage_[Capacity];
  const Ops* ops_ = nullptr;

public:
  InlineFunction() = default;
  template <typename F, typename D = std::decay_t<F>,
            typename = std::enable_if_t<!std::is_same_v<D, InlineFunction>>>
  InlineFunction(F&& f) {  // NOLINT(google-explicit-constructor): closures convert implicitly
    static_assert(sizeof(D) <= Capacity, "event closure too large: capture less");
    static_assert(alignof(D) <= alignof(std::max_align_t));
    ::new (storage_) D(std::forward<F>(f));
    ops_ = &kOpsFor<D>;
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
    if (ops_) ops_->destroy(storage_);
    ops_ = nullptr;
  }
  explicit operator bool() const { return ops_ != nullptr; }
  void operator()() { ops_->invoke(storage_); }
};

}  // namespace rdmasim
