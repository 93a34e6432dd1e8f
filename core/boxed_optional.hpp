// An optional value kept on the heap: a pointer's size while it is empty,
// for state that only some configurations use (HPCC's telemetry echo in
// every RC QP would be 88 bytes of a QP that costs under 1 KiB). The box is
// allocated at the first assignment and kept, so a value that comes and
// goes on the data path allocates once.
#pragma once

#include <memory>
#include <optional>

namespace rdmasim {

template <typename T>
class BoxedOptional {
 public:
  BoxedOptional() = default;

  explicit operator bool() const { return set_; }
  bool has_value() const { return set_; }
  T& operator*() { return *box_; }
  const T& operator*() const { return *box_; }
  T* operator->() { return box_.get(); }
  const T* operator->() const { return box_.get(); }

  BoxedOptional& operator=(const T& v) {
    if (box_)
      *box_ = v;
    else
      box_ = std::make_unique<T>(v);
    set_ = true;
    return *this;
  }
  BoxedOptional& operator=(const std::optional<T>& v) {
    if (v)
      *this = *v;
    else
      reset();
    return *this;
  }
  void reset() { set_ = false; }

 private:
  std::unique_ptr<T> box_;
  bool set_ = false;
};

}  // namespace rdmasim
