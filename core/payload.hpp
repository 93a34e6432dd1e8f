// Payload bytes that are either stored or computed.
//
// A large experiment need not store what it sends: a buffer may be backed by
// a PatternSource, whose bytes are computed from their offset whenever
// someone needs them (a capture, a program reading the buffer) and checked
// against, instead of stored, when they are written. A Payload is a piece of
// a frame's or a buffer's bytes in either form, so that a sender's computed
// bytes can travel to the receiver as (source, offset) and be checked there
// without ever being produced (docs/performance.md).
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace rdmasim {

// Bytes defined by their offset: [offset, offset + n) can be produced, or
// checked, without storing them.
class PatternSource {
 public:
  virtual ~PatternSource() = default;
  // Bytes [offset, offset + out.size()).
  virtual void fill(uint64_t offset, std::span<std::byte> out) const = 0;
  // Whether `bytes` are exactly bytes [offset, offset + bytes.size()).
  virtual bool matches(uint64_t offset, std::span<const std::byte> bytes) const = 0;
};

// A read-only piece of payload: stored bytes, or bytes [offset, offset +
// size) of a PatternSource.
class Payload {
 public:
  Payload() = default;
  Payload(std::span<const std::byte> b) : data_(b.data()), size_(b.size()) {}  // NOLINT: a span is a payload
  Payload(const PatternSource* src, uint64_t offset, size_t size) : src_(src), offset_(offset), size_(size) {}

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Computed from a source, not stored.
  bool computed() const { return src_ != nullptr; }
  // Stored bytes (empty for a computed payload).
  std::span<const std::byte> stored() const { return computed() ? std::span<const std::byte>{} : span(); }
  const PatternSource* source() const { return src_; }
  uint64_t offset() const { return offset_; }

  Payload subspan(size_t from, size_t n) const {
    assert(from <= size_ && n <= size_ - from);
    return computed() ? Payload(src_, offset_ + from, n) : Payload(span().subspan(from, n));
  }
  // The bytes into `out` (out.size() == size()).
  void copy_to(std::span<std::byte> out) const {
    assert(out.size() == size_);
    if (computed())
      src_->fill(offset_, out);
    else if (size_)
      std::memcpy(out.data(), data_, size_);
  }
  // Whether these are bytes [offset, offset + size()) of `want`: a computed
  // payload of the same source and offset without producing a byte.
  bool matches(const PatternSource& want, uint64_t offset) const {
    if (src_ == &want) return offset_ == offset || size_ == 0;
    if (!computed()) return want.matches(offset, span());
    // Another source: compare what it computes, a record's worth at a time.
    std::byte buf[512];
    for (size_t done = 0; done < size_;) {
      const size_t n = std::min(sizeof buf, size_ - done);
      src_->fill(offset_ + done, {buf, n});
      if (!want.matches(offset + done, {buf, n})) return false;
      done += n;
    }
    return true;
  }

 private:
  std::span<const std::byte> span() const { return {data_, size_}; }

  const std::byte* data_ = nullptr;
  const PatternSource* src_ = nullptr;
  uint64_t offset_ = 0;
  size_t size_ = 0;
};

// A computed buffer's account of what was written into it: its byte i is
// the source's byte i, and a write is checked against it, not stored.
struct ComputedBuffer {
  const PatternSource* source = nullptr;
  uint64_t written_bytes = 0;
  uint64_t wrong_writes = 0;  // writes whose bytes were not the pattern's at their place

  void write(uint64_t offset, const Payload& p) {
    written_bytes += p.size();
    if (!p.matches(*source, offset)) [[unlikely]]
      ++wrong_writes;
  }
};

// A piece of a buffer the NIC reads and writes: stored bytes, or bytes
// [offset, offset + size) of a computed buffer.
class BufferPiece {
 public:
  BufferPiece() = default;
  BufferPiece(std::span<std::byte> b)
      : bytes_(b.data()), size_(b.size()) {}  // NOLINT: stored bytes are a piece
  BufferPiece(ComputedBuffer* c, uint64_t offset, size_t size) : computed_(c), offset_(offset), size_(size) {}
  // Bytes that are only read through the piece (a message being sent):
  // write() must not be called on it.
  static BufferPiece read_only(std::span<const std::byte> b) {
    return std::span<std::byte>(const_cast<std::byte*>(b.data()), b.size());
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Bytes [at, at + n) of the piece.
  Payload read(size_t at, size_t n) const {
    assert(at <= size_ && n <= size_ - at);
    if (computed_) return {computed_->source, offset_ + at, n};
    return std::span<const std::byte>(bytes_ + at, n);
  }
  // `p` written at byte `at` of the piece.
  void write(size_t at, const Payload& p) const {
    assert(at <= size_ && p.size() <= size_ - at);
    if (computed_)
      computed_->write(offset_ + at, p);
    else
      p.copy_to({bytes_ + at, p.size()});
  }

 private:
  std::byte* bytes_ = nullptr;
  ComputedBuffer* computed_ = nullptr;
  uint64_t offset_ = 0;
  size_t size_ = 0;
};

}  // namespace rdmasim
