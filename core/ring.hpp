// A FIFO queue with random access in one power-of-two array that doubles
// when full: push at the back, take from the front. Unlike std::deque it
// allocates nothing once it has grown to its working size, which matters for
// the queues a frame passes through at every hop (port queues, NIC
// pipelines) and for a TCP connection's steady state.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace rdmasim {

template <typename T>
class Ring {
  static_assert(std::is_nothrow_move_constructible_v<T>);

public:
  Ring() = default;
  explicit Ring(size_t capacity) { reserve(capacity); }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  Ring(Ring&& o) noexcept { swap(o); }
  Ring& operator=(Ring&& o) noexcept {
    Ring gone(std::move(o));
    swap(gone);
    return *this;
  }
  ~Ring() {
    clear();
    ::operator delete(data_, std::align_val_t{alignof(T)});
  }

  bool empty() const { return head_ == tail_; }
  size_t size() const { return tail_ - head_; }

  T& front() { return data_[head_ & mask_]; }
  const T& front() const { return data_[head_ & mask_]; }
  T& back() { return data_[(tail_ - 1) & mask_]; }
  const T& back() const { return data_[(tail_ - 1) & mask_]; }
  T& operator[](size_t i) { return data_[(head_ + i) & mask_]; }
  const T& operator[](size_t i) const { return data_[(head_ + i) & mask_]; }

  void push_back(T v) {
    if (size() == capacity_) reserve(capacity_ == 0 ? 8 : capacity_ * 2);
    ::new (static_cast<void*>(&data_[tail_ & mask_])) T(std::move(v));
    ++tail_;
  }
  // Removes the front element and returns it.
  T take_front() {
    T& f = front();
    T v = std::move(f);
    f.~T();
    ++head_;
    return v;
  }
  void pop_front() {
    front().~T();
    ++head_;
  }
  void clear() {
    while (!empty()) pop_front();
  }
  // Removes every element for which pred is true, keeping the others' order.
  template <typename Pred>
  void remove_if(Pred pred) {
    const size_t n = size();
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
      T& x = (*this)[i];
      if (pred(x)) continue;
      if (kept != i) (*this)[kept] = std::move(x);
      ++kept;
    }
    while (size() > kept) {
      --tail_;
      data_[tail_ & mask_].~T();
    }
  }

  // Makes room for at least n elements (rounded up to a power of two).
  void reserve(size_t want) {
    if (want <= capacity_) return;
    size_t cap = 8;
    while (cap < want) cap *= 2;
    T* fresh = static_cast<T*>(::operator new(cap * sizeof(T), std::align_val_t{alignof(T)}));
    const size_t n = size();
    for (size_t i = 0; i < n; ++i) {
      T& x = (*this)[i];
      ::new (static_cast<void*>(&fresh[i])) T(std::move(x));
      x.~T();
    }
    ::operator delete(data_, std::align_val_t{alignof(T)});
    data_ = fresh;
    capacity_ = cap;
    mask_ = cap - 1;
    head_ = 0;
    tail_ = n;
  }

private:
  void swap(Ring& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(capacity_, o.capacity_);
    std::swap(mask_, o.mask_);
    std::swap(head_, o.head_);
    std::swap(tail_, o.tail_);
  }

  T* data_ = nullptr;
  size_t capacity_ = 0;
  size_t mask_ = 0;
  size_t head_ = 0;  // counts up forever; the index is head_ & mask_
  size_t tail_ = 0;
};

}  // namespace rdmasim
