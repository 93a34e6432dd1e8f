// The send buffer of a TCP connection, kept as whole records. The upper layer
// (MPA) hands TCP one FPDU at a time and TCP must never split one across
// segments (RFC 5044, "MPA-aware TCP"), also when it retransmits;
// so the buffer remembers where each record starts.
//
// Bytes live in one contiguous ring where every record is contiguous too (a
// "bip buffer"): a record that does not fit before the end of the ring starts
// again at its beginning, and the tail is left unused until the head passes.
// So reserve() can hand out a plain span that the upper layer writes in place.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "core/ring.hpp"

namespace rdmasim {

class RecordQueue {
 public:
  explicit RecordQueue(size_t capacity) : buf_(capacity), recs_(64) {}

  size_t capacity() const { return buf_.size(); }
  uint64_t begin_offset() const { return recs_.empty() ? end_ : recs_.front().off; }
  uint64_t end_offset() const { return end_; }  // stream offset after the last committed record
  bool empty() const { return recs_.empty(); }
  size_t record_count() const { return recs_.size(); }

  // Room for a record of n bytes at the end of the stream, or an empty span.
  // Only one reservation may be open; commit() or a new reserve() ends it.
  std::span<std::byte> reserve(size_t n) {
    reserved_ = 0;
    if (n == 0 || n > buf_.size()) return {};
    size_t pos;
    if (recs_.empty()) {
      pos = 0;
    } else {
      const Rec& first = recs_.front();
      const Rec& last = recs_.back();
      const size_t tail = last.pos + last.len;
      if (last.pos >= first.pos) {  // used: [first.pos, tail)
        if (buf_.size() - tail >= n) {
          pos = tail;
        } else if (first.pos >= n) {
          pos = 0;
        } else {
          return {};
        }
      } else {  // wrapped, used: [first.pos, end) and [0, tail)
        if (first.pos - tail >= n) {
          pos = tail;
        } else {
          return {};
        }
      }
    }
    reserved_pos_ = pos;
    reserved_ = n;
    return {buf_.data() + pos, n};
  }
  // Appends the reserved record; `solo` asks that no other record share its segment.
  void commit(bool solo) {
    if (reserved_ == 0) return;
    recs_.push_back({end_, static_cast<uint32_t>(reserved_pos_), static_cast<uint32_t>(reserved_), solo});
    end_ += reserved_;
    reserved_ = 0;
  }

  // Drops the records that lie wholly before `offset` (they were acknowledged).
  void release_before(uint64_t offset) {
    while (!recs_.empty() && recs_.front().off + recs_.front().len <= offset) recs_.pop_front();
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
      std::memcpy(out, buf_.data() + r.pos + skip, take);
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

  std::vector<std::byte> buf_;
  Ring<Rec> recs_;
  uint64_t end_ = 0;
  size_t reserved_pos_ = 0;
  size_t reserved_ = 0;
};

}  // namespace rdmasim
