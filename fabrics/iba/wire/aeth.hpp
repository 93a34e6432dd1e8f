// ACK Extended Transport Header (IBA 9.3.5), 4 bytes: Syndrome(8) MSN(24).
// In Acknowledge, Atomic Acknowledge and the first, last and only RDMA READ
// response packets.
//
// Syndrome (IBA 9.7.5.2.1, Table 43):
//   bit 7     reserved, 0
//   bits 6-5  00 ACK, 01 RNR NAK, 10 reserved, 11 NAK
//   bits 4-0  ACK: credit count code (Table 44; 31 = invalid, no end-to-end
//             flow control); RNR NAK: RNR timer code (Table 45); NAK: NAK code.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"
#include "core/units.hpp"

namespace rdmasim {

enum class AethType : uint8_t { Ack = 0, RnrNak = 1, Reserved = 2, Nak = 3 };

// NAK codes (IBA 9.7.5.2.1 Table 43, syndrome 011xxxxx).
enum class NakCode : uint8_t {
  PsnSequenceError = 0,
  InvalidRequest = 1,
  RemoteAccessError = 2,
  RemoteOperationalError = 3,
  InvalidRdRequest = 4,
};

inline constexpr uint8_t kAethCreditInvalid = 31;

constexpr uint8_t aeth_ack_syndrome(uint8_t credit_code) { return credit_code & 0x1F; }
constexpr uint8_t aeth_rnr_nak_syndrome(uint8_t timer_code) { return 0x20 | (timer_code & 0x1F); }
constexpr uint8_t aeth_nak_syndrome(NakCode c) { return 0x60 | static_cast<uint8_t>(c); }
constexpr AethType aeth_type(uint8_t syndrome) { return AethType((syndrome >> 5) & 0x3); }
// The low five bits: credit code, RNR timer code or NAK code by type.
constexpr uint8_t aeth_value(uint8_t syndrome) { return syndrome & 0x1F; }

// Both tables grow as 1, 1.5, 2, 3, 4, 6, 8, 12, ...
namespace detail {
constexpr uint32_t iba_log_code(uint8_t code) {  // 0 1 2 3 4 6 8 12 16 24 ...
  if (code < 2) return code;
  const uint32_t base = 1u << (code / 2);
  return code % 2 ? base + base / 2 : base;
}
}  // namespace detail

// End-to-end credits granted by an ACK's credit code (Table 44): 0, 1, 2, 3,
// 4, 6, 8, ... 32768 for codes 0..30. Code 31 (invalid) returns nullopt.
constexpr std::optional<uint32_t> aeth_credits(uint8_t code) {
  if (code >= kAethCreditInvalid) return std::nullopt;
  return detail::iba_log_code(code);
}
// The largest code whose credit count does not exceed `credits`.
constexpr uint8_t aeth_credit_code(uint32_t credits) {
  uint8_t c = 0;
  while (c + 1 < kAethCreditInvalid && detail::iba_log_code(static_cast<uint8_t>(c + 1)) <= credits) ++c;
  return c;
}

// RNR NAK timer (Table 45): code 0 is 655.36 ms, codes 1..31 are 0.01 ms,
// 0.02, 0.03, 0.04, 0.06, 0.08, 0.12 ... 491.52 ms. The same encoding as
// the verbs min_rnr_timer attribute.
constexpr Time rnr_timer_duration(uint8_t code) {
  code &= 0x1F;
  const uint32_t tens_of_us = code == 0 ? 65536 : detail::iba_log_code(code);
  return Time::us(10) * tens_of_us;
}

template <class B>
class AethViewT {
  template <class>
  friend class AethViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit AethViewT(std::span<B> b) : b_(b) {}

 public:
  static constexpr size_t kLen = 4;

  static std::optional<AethViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return AethViewT(b);
  }
  operator AethViewT<const std::byte>() const requires kMut { return AethViewT<const std::byte>(b_); }

  uint8_t syndrome() const { return u8(b_[0]); }
  uint32_t msn() const { return load_be24(b_.subspan(1, 3)); }
  std::span<B> header() const { return b_.first(kLen); }
  std::span<B> payload() const { return b_.subspan(kLen); }

  void set_syndrome(uint8_t v) requires kMut { store_u8(b_, v); }
  void set_msn(uint32_t v) requires kMut { store_be24(b_.subspan(1, 3), v); }
};

using AethView = AethViewT<std::byte>;
using ConstAethView = AethViewT<const std::byte>;

struct Aeth {
  static constexpr size_t kLen = AethView::kLen;

  uint8_t syndrome = aeth_ack_syndrome(kAethCreditInvalid);
  uint32_t msn = 0;  // 24 bits

  static Aeth ack(uint32_t msn, uint8_t credit_code = kAethCreditInvalid) {
    return {aeth_ack_syndrome(credit_code), msn};
  }
  static Aeth rnr_nak(uint32_t msn, uint8_t timer_code) { return {aeth_rnr_nak_syndrome(timer_code), msn}; }
  static Aeth nak(uint32_t msn, NakCode c) { return {aeth_nak_syndrome(c), msn}; }

  AethType type() const { return aeth_type(syndrome); }
  uint8_t value() const { return aeth_value(syndrome); }
  NakCode nak_code() const { return NakCode(value()); }  // meaningful when type() == Nak

  static Aeth parse(ConstAethView v) { return {v.syndrome(), v.msn()}; }
  void emit(AethView v) const {
    v.set_syndrome(syndrome);
    v.set_msn(msn);
  }
  bool operator==(const Aeth&) const = default;
};

static_assert(aeth_credits(30) == 32768u && aeth_credits(5) == 6u && !aeth_credits(31));
static_assert(rnr_timer_duration(1) == Time::us(10) && rnr_timer_duration(5) == Time::us(60));
static_assert(rnr_timer_duration(31) == Time::us(491520) && rnr_timer_duration(0) == Time::us(655360));

}  // namespace rdmasim
