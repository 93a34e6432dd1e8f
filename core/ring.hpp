// A double-ended queue with random access in one power-of-two array that
// doubles when full. Unlike std::deque it allocates nothing until the first
// push (libstdc++'s deque allocates a 512-byte block and its map as soon as
// it is constructed, so an idle queue pair's five queues held 2.9 KiB) and
// nothing once it has grown to its working size, which matters for the
// queues a frame passes through at every hop (port queues, NIC pipelines),
// for a TCP connection's steady state and for the queues of 10^5 mostly
// idle QPs. The handle is 24 bytes: indices are 32-bit and count up
// forever, wrapping; the slot is the index masked by the capacity.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <new>
#include <type_traits>
#include <utility>

namespace rdmasim {

template <typename T>
class Ring {
  static_assert(std::is_nothrow_move_constructible_v<T>);

 public:
  // The first allocation holds about this many bytes' worth of elements
  // (at least one): a ring of big WQEs starts with one or two, not eight.
  static constexpr size_t kFirstBytes = 256;
  static constexpr size_t kFirstCapacity =
      std::bit_ceil(sizeof(T) >= kFirstBytes ? size_t{1} : kFirstBytes / sizeof(T));

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
  ~Ring() { release(); }

  bool empty() const { return head_ == tail_; }
  size_t size() const { return static_cast<uint32_t>(tail_ - head_); }
  size_t capacity() const { return data_ ? size_t{mask_} + 1 : 0; }

  T& front() { return data_[head_ & mask_]; }
  const T& front() const { return data_[head_ & mask_]; }
  T& back() { return data_[(tail_ - 1) & mask_]; }
  const T& back() const { return data_[(tail_ - 1) & mask_]; }
  T& operator[](size_t i) { return data_[(head_ + static_cast<uint32_t>(i)) & mask_]; }
  const T& operator[](size_t i) const { return data_[(head_ + static_cast<uint32_t>(i)) & mask_]; }

  void push_back(T v) {
    if (size() == capacity()) grow();
    ::new (static_cast<void*>(&data_[tail_ & mask_])) T(std::move(v));
    ++tail_;
  }
  void push_front(T v) {
    if (size() == capacity()) grow();
    ::new (static_cast<void*>(&data_[(head_ - 1) & mask_])) T(std::move(v));
    --head_;
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
  void pop_back() {
    back().~T();
    --tail_;
  }
  void clear() {
    while (!empty()) pop_front();
  }
  // Empties the ring and gives its memory back.
  void release() {
    clear();
    ::operator delete (data_, std::align_val_t{alignof(T)});
    data_ = nullptr;
    mask_ = head_ = tail_ = 0;
  }
  // Gives the memory back when the ring is empty and has room for more than
  // `keep` elements: a queue after a burst need not hold a burst's room
  // while it idles (a switch port that PFC made queue hundreds of frames
  // once; summed over a k = 64 fat tree's ports, a fifth of the peak).
  void shrink_if_empty(size_t keep) {
    if (empty() && capacity() > keep) release();
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
    while (size() > kept) pop_back();
  }

  // Makes room for at least n elements (rounded up to a power of two).
  void reserve(size_t want) {
    if (want <= capacity()) return;
    const size_t cap = std::bit_ceil(std::max(want, kFirstCapacity));
    T* fresh = static_cast<T*>(::operator new (cap * sizeof(T), std::align_val_t{alignof(T)}));
    const size_t n = size();
    for (size_t i = 0; i < n; ++i) {
      T& x = (*this)[i];
      ::new (static_cast<void*>(&fresh[i])) T(std::move(x));
      x.~T();
    }
    ::operator delete (data_, std::align_val_t{alignof(T)});
    data_ = fresh;
    mask_ = static_cast<uint32_t>(cap - 1);
    head_ = 0;
    tail_ = static_cast<uint32_t>(n);
  }

  template <typename R, typename V>
  class Iter {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = V*;
    using reference = V&;
    Iter() = default;
    Iter(R* r, size_t i) : r_(r), i_(i) {}
    V& operator*() const { return (*r_)[i_]; }
    V* operator->() const { return &(*r_)[i_]; }
    Iter& operator++() {
      ++i_;
      return *this;
    }
    Iter operator++(int) {
      Iter old = *this;
      ++i_;
      return old;
    }
    bool operator==(const Iter& o) const { return i_ == o.i_; }

   private:
    R* r_ = nullptr;
    size_t i_ = 0;
  };
  using iterator = Iter<Ring, T>;
  using const_iterator = Iter<const Ring, const T>;
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size()}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

 private:
  void grow() { reserve(capacity() == 0 ? kFirstCapacity : capacity() * 2); }
  void swap(Ring& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(mask_, o.mask_);
    std::swap(head_, o.head_);
    std::swap(tail_, o.tail_);
  }

  T* data_ = nullptr;
  uint32_t mask_ = 0;  // capacity - 1 once allocated
  uint32_t head_ = 0;  // counts up forever; the slot is head_ & mask_
  uint32_t tail_ = 0;
};

// std::erase_if's counterpart, for code written against std::deque.
template <typename T, typename Pred>
size_t erase_if(Ring<T>& r, Pred pred) {
  const size_t before = r.size();
  r.remove_if(pred);
  return before - r.size();
}

}  // namespace rdmasim
