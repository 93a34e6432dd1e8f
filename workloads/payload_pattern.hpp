// The bytes a workload sends: a deterministic pattern computed from
// (workload, message, offset), so that any piece of any message can be
// produced, or checked, without storing the message.
//
// The pattern is readable ASCII in 32-byte records, one per 32 bytes of the
// message, each naming itself:
//
//   "w0       m00000042 @0000000a0\n"   workload w0, message 42, offset 0xa0
//
// (workload name padded or cut to 8 characters, message number modulo 10^8,
// offset in hex). People reading a capture's hex pane see which message a
// frame carries and where in it; Wireshark's heuristic dissectors, which
// look for binary headers (RPC-over-RDMA's version word, SMB Direct's
// negotiate fields), do not claim it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/payload.hpp"

namespace rdmasim {

class PayloadPattern {
 public:
  static constexpr size_t kRecord = 32;

  explicit PayloadPattern(std::string_view workload) {
    std::fill(std::begin(name_), std::end(name_), ' ');
    std::copy_n(workload.begin(), std::min(workload.size(), sizeof name_), name_);
  }

  // Bytes [offset, offset + out.size()) of message `message`.
  void fill(uint64_t message, uint64_t offset, std::span<std::byte> out) const {
    pieces(message, offset, out.size(), [&](std::span<const std::byte> want, size_t done) {
      std::copy(want.begin(), want.end(), out.data() + done);
      return true;
    });
  }

  // Whether `bytes` are exactly bytes [offset, offset + bytes.size()) of `message`.
  bool matches(uint64_t message, uint64_t offset, std::span<const std::byte> bytes) const {
    return pieces(message, offset, bytes.size(), [&](std::span<const std::byte> want, size_t done) {
      return std::equal(want.begin(), want.end(), bytes.data() + done);
    });
  }

 private:
  // Calls f(expected bytes, position in the range) record by record over
  // [offset, offset + len) of `message`; stops when f returns false.
  template <class F>
  bool pieces(uint64_t message, uint64_t offset, size_t len, F&& f) const {
    char rec[kRecord];
    for (size_t done = 0; done < len;) {
      const uint64_t at = offset + done;
      record(message, at / kRecord * kRecord, rec);
      const size_t from = at % kRecord;
      const size_t n = std::min(kRecord - from, len - done);
      if (!f(std::span<const std::byte>(reinterpret_cast<const std::byte*>(rec) + from, n), done))
        return false;
      done += n;
    }
    return true;
  }

  // "<name:8> m<message:8 decimal> @<offset:11 hex>\n"
  void record(uint64_t message, uint64_t offset, char* r) const {
    std::copy_n(name_, 8, r);
    r[8] = ' ';
    r[9] = 'm';
    uint64_t m = message % 100'000'000;
    for (int i = 17; i >= 10; --i, m /= 10) r[i] = static_cast<char>('0' + m % 10);
    r[18] = ' ';
    r[19] = '@';
    uint64_t o = offset;
    for (int i = 30; i >= 20; --i, o >>= 4) r[i] = "0123456789abcdef"[o & 15];
    r[31] = '\n';
  }

  char name_[8];
};

// One message of a pattern as a PatternSource: what a computed buffer
// (nodes/host/memory.hpp) holds, byte i being the message's byte i.
class MessagePattern final : public PatternSource {
 public:
  MessagePattern(const PayloadPattern& p, uint64_t message) : pattern_(p), message_(message) {}
  void fill(uint64_t offset, std::span<std::byte> out) const override {
    pattern_.fill(message_, offset, out);
  }
  bool matches(uint64_t offset, std::span<const std::byte> bytes) const override {
    return pattern_.matches(message_, offset, bytes);
  }

 private:
  PayloadPattern pattern_;
  uint64_t message_;
};

// The buffer of a flow that sends its messages through `slots` slots of
// `size` bytes, as a PatternSource: byte i is what a stored buffer holds
// there (workloads/workload.cpp, fill_message). Slot s's first message is
// message s, the pattern of `first + s` whole; a later message k through
// it rewrites only the record at the start of every `stamp` bytes, with
// the pattern of `first + k`. So the slot's bytes follow from the message
// it holds now (put()), and a computed buffer gives the same frames,
// byte for byte, as a stored one.
class SlotPattern final : public PatternSource {
 public:
  SlotPattern(const PayloadPattern& p, uint64_t first, uint64_t slots, uint64_t size, uint64_t stamp)
      : pattern_(p), first_(first), size_(size), stamp_(stamp), holds_(slots) {
    for (uint64_t s = 0; s < slots; ++s) holds_[s] = s;
  }
  // Message k is now in slot k % slots.
  void put(uint64_t k) { holds_[k % holds_.size()] = k; }
  // Bytes the buffer spans.
  uint64_t size() const { return size_ * holds_.size(); }

  void fill(uint64_t offset, std::span<std::byte> out) const override {
    pieces(offset, out.size(), [&](uint64_t message, uint64_t off, size_t done, size_t n) {
      pattern_.fill(message, off, out.subspan(done, n));
      return true;
    });
  }
  bool matches(uint64_t offset, std::span<const std::byte> bytes) const override {
    return pieces(offset, bytes.size(), [&](uint64_t message, uint64_t off, size_t done, size_t n) {
      return pattern_.matches(message, off, bytes.subspan(done, n));
    });
  }

 private:
  // Calls f(pattern message, offset in the message, position in the range,
  // length) over [offset, offset + len), one run of one message at a time;
  // stops when f returns false.
  template <class F>
  bool pieces(uint64_t offset, size_t len, F&& f) const {
    for (size_t done = 0; done < len;) {
      const uint64_t at = offset + done;
      const uint64_t slot = at / size_, off = at % size_, in = off % stamp_;
      const bool stamp = in < PayloadPattern::kRecord;
      const uint64_t message = first_ + (stamp ? holds_[slot] : slot);
      const size_t n =
          std::min<uint64_t>({(stamp ? PayloadPattern::kRecord : stamp_) - in, size_ - off, len - done});
      if (!f(message, off, done, n)) return false;
      done += n;
    }
    return true;
  }

  PayloadPattern pattern_;
  uint64_t first_, size_, stamp_;
  std::vector<uint64_t> holds_;  // the message each slot holds
};

}  // namespace rdmasim
