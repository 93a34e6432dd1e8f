// The send buffer of a TCP connection, kept as whole records. The upper layer
// (MPA) hands TCP one FPDU at a time and TCP must never split one across
// segments (RFC 5044, "MPA-aware TCP"), also when it retransmits;
// so the buffer remembers where each record starts.
//
// Bytes live in one contiguous ring where every record is contiguous too (a
// "bip buffer"): a record that does not fit before the end of the ring starts
// again at its beginning, and the tail is left unused until the head passes.
// So reserve() can hand out a plain span that the upper layer writes in place.
//
// The ring costs what it holds: it starts empty and, when a record finds no
// room, doubles (moving the records to its start) up to `limit` bytes, the
// send buffer size. A connection that sends little never pays for the limit,
// and one whose records are all acknowledged gives a large ring's memory
// back, as a kernel frees a socket's acknowledged buffers (a finished
// flow's idle connection held up to a megabyte until the run ended); the
// ring keeps its size, so records are placed exactly as before, and takes
// memory again when the next record comes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

#include "core/ring.hpp"

namespace rdmasim {

class RecordQueue {
 public:
  explicit RecordQueue(size_t limit) : limit_(limit), recs_(64) {}

  size_t limit() const { return limit_; }
  size_t allocated() const { return buf_ ? size_ : 0; }  // bytes of ring held now
  size_t used() const { return used_; }                  // bytes of records held
  uint64_t begin_offset() const { return recs_.empty() ? end_ : recs_.front().off; }
  uint64_t end_offset() const { return end_; }  // stream offset after the last committed record
  bool empty() const { return recs_.empty(); }
  size_t record_count() const { return recs_.size(); }

  // Room for a record of n bytes at the end of the stream, or an empty span.
  // Only one reservation may be open; commit() or a new reserve() ends it.
  std::span<std::byte> reserve(size_t n) {
    reserved_ = 0;
    if (n == 0 || used_ + n > limit_) return {};
    if (!buf_ && size_ > 0) buf_ = std::make_unique_for_overwrite<std::byte[]>(size_);
    size_t pos = place(n);
    if (pos == kNoRoom && size_ < limit_) {
      grow(used_ + n);
      pos = place(n);
    }
    if (pos == kNoRoom) return {};
    reserved_pos_ = pos;
    reserved_ = n;
    return {buf_.get() + pos, n};
  }
  // Appends the reserved record; `solo` asks that no other record share its segment.
  void commit(bool solo) {
    if (reserved_ == 0) return;
    recs_.push_back({end_, static_cast<uint32_t>(reserved_pos_), static_cast<uint32_t>(reserved_), solo});
    end_ += reserved_;
    used_ += reserved_;
    reserved_ = 0;
  }

  // Drops the records that lie wholly before `offset` (they were acknowledged).
  void release_before(uint64_t offset) {
    while (!recs_.empty() && recs_.front().off + recs_.front().len <= offset) {
      used_ -= recs_.front().len;
      recs_.pop_front();
    }
    if (recs_.empty() && reserved_ == 0 && size_ > kKeptBytes) buf_.reset();
  }
  // Gives the ring's memory back (the connection closed: nothing will be resent).
  void release_all() {
    recs_.clear();
    used_ = reserved_ = 0;
    buf_.reset();
    size_ = 0;
  }

  // Bytes of whole records that a segment starting at record boundary `off`
  // may carry within `limit` bytes: at least the first record if it fits,
  // never part of one, and a solo record only alone. Zero when `off` is not
  // a record start or the first record does not fit.
  size_t segment_length(uint64_t off, size_t limit) const {
    size_t i = find(off);
    if (i == recs_.size() || recs_[i].off != off) return 0;
    size_t n = 0;
    for (; i < recs_.size(); ++i) {
      const Rec& r = recs_[i];
      if (n + r.len > limit) break;
      if (r.solo && n > 0) break;
      n += r.len;
      if (r.solo) break;
    }
    return n;
  }
  // Length of the record that starts at `off` (0 if none does).
  size_t record_length_at(uint64_t off) const {
    const size_t i = find(off);
    return i < recs_.size() && recs_[i].off == off ? recs_[i].len : 0;
  }

  // Copies stream bytes [off, off + n) to `out`; they must be buffered.
  void copy_out(uint64_t off, size_t n, std::byte* out) const {
    size_t i = find_containing(off);
    while (n > 0 && i < recs_.size()) {
      const Rec& r = recs_[i];
      const size_t skip = static_cast<size_t>(off - r.off);
      const size_t take = std::min(n, size_t{r.len} - skip);
      std::memcpy(out, buf_.get() + r.pos + skip, take);
      out += take;
      off += take;
      n -= take;
      ++i;
    }
  }

 private:
  struct Rec {
    uint64_t off = 0;  // stream offset of the first byte
    uint32_t pos = 0;  // where it lies in buf_
    uint32_t len = 0;
    bool solo = false;
  };

  static constexpr size_t kNoRoom = SIZE_MAX;
  static constexpr size_t kFirstAllocation = 4096;
  // An emptied ring up to this size keeps its memory: what a connection
  // that keeps sending small records reuses.
  static constexpr size_t kKeptBytes = 64 * 1024;

  // Where a record of n bytes fits in the ring as it is, or kNoRoom.
  size_t place(size_t n) const {
    if (n > size_) return kNoRoom;
    if (recs_.empty()) return 0;
    const Rec& first = recs_.front();
    const Rec& last = recs_.back();
    const size_t tail = last.pos + last.len;
    if (last.pos >= first.pos) {  // used: [first.pos, tail)
      if (size_ - tail >= n) return tail;
      return first.pos >= n ? 0 : kNoRoom;
    }
    return first.pos - tail >= n ? tail : kNoRoom;  // wrapped, used: [first.pos, end) and [0, tail)
  }
  // A ring of at least `need` bytes, doubling up to limit_, with the records
  // moved to its start in order.
  void grow(size_t need) {
    size_t size = std::max(size_, kFirstAllocation);
    while (size < need || size <= size_) size *= 2;
    size = std::min(size, limit_);
    // Not zeroed: only committed records' bytes are ever read.
    auto next = std::make_unique_for_overwrite<std::byte[]>(size);
    size_t at = 0;
    for (size_t i = 0; i < recs_.size(); ++i) {
      Rec& r = recs_[i];
      std::memcpy(next.get() + at, buf_.get() + r.pos, r.len);
      r.pos = static_cast<uint32_t>(at);
      at += r.len;
    }
    buf_ = std::move(next);
    size_ = size;
  }

  // First record whose start is >= off.
  size_t find(uint64_t off) const {
    size_t lo = 0, hi = recs_.size();
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (recs_[mid].off < off) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
  // The record holding byte `off`.
  size_t find_containing(uint64_t off) const {
    const size_t i = find(off);
    if (i < recs_.size() && recs_[i].off == off) return i;
    return i == 0 ? 0 : i - 1;
  }

  size_t limit_;
  std::unique_ptr<std::byte[]> buf_;
  size_t size_ = 0;  // the ring's size (buf_ is null while an emptied ring holds no memory)
  Ring<Rec> recs_;
  size_t used_ = 0;
  uint64_t end_ = 0;
  size_t reserved_pos_ = 0;
  size_t reserved_ = 0;
};

}  // namespace rdmasim
