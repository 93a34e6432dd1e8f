// A growable ring buffer with random access: a FIFO that allocates only when
// it outgrows its capacity, so the steady state of a connection allocates
// nothing. std::deque would allocate a block every few hundred pushes.
#pragma once

#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace rdmasim {

template <class T>
class Ring {
 public:
  explicit Ring(size_t capacity = 16) {
    size_t c = 1;
    while (c < capacity) c <<= 1;
    v_.resize(c);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return v_[(head_ + i) & (v_.size() - 1)]; }
  const T& operator[](size_t i) const { return v_[(head_ + i) & (v_.size() - 1)]; }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(T x) {
    if (size_ == v_.size()) grow();
    (*this)[size_++] = std::move(x);
  }
  void pop_front() {
    assert(size_ > 0);
    front() = T{};
    head_ = (head_ + 1) & (v_.size() - 1);
    --size_;
  }
  void clear() {
    while (!empty()) pop_front();
    head_ = 0;
  }

 private:
  void grow() {
    std::vector<T> n(v_.size() * 2);
    for (size_t i = 0; i < size_; ++i) n[i] = std::move((*this)[i]);
    v_ = std::move(n);
    head_ = 0;
  }

  std::vector<T> v_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace rdmasim
