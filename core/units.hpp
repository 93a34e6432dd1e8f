// Strong integer types for simulated time, sizes and rates, with literals.
// Time is a signed count of picoseconds; no double ever holds a time.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rdmasim {

// An instant or a duration of simulated time, in picoseconds.
class Time {
  int64_t ps_ = 0;

 public:
  constexpr Time() = default;
  static constexpr Time ps(int64_t v) { return Time(v); }
  static constexpr Time ns(int64_t v) { return Time(v * 1'000); }
  static constexpr Time us(int64_t v) { return Time(v * 1'000'000); }
  static constexpr Time ms(int64_t v) { return Time(v * 1'000'000'000); }
  static constexpr Time s(int64_t v) { return Time(v * 1'000'000'000'000); }
  static constexpr Time max() { return Time(INT64_MAX); }

  constexpr int64_t count() const { return ps_; }  // picoseconds
  constexpr double to_ns() const { return static_cast<double>(ps_) / 1e3; }
  constexpr double to_us() const { return static_cast<double>(ps_) / 1e6; }
  constexpr double to_s() const { return static_cast<double>(ps_) / 1e12; }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const { return Time(ps_ + o.ps_); }
  constexpr Time operator-(Time o) const { return Time(ps_ - o.ps_); }
  constexpr Time& operator+=(Time o) {
    ps_ += o.ps_;
    return *this;
  }
  constexpr Time& operator-=(Time o) {
    ps_ -= o.ps_;
    return *this;
  }
  constexpr Time operator*(int64_t k) const { return Time(ps_ * k); }
  constexpr Time operator/(int64_t k) const { return Time(ps_ / k); }
  constexpr int64_t operator/(Time o) const { return ps_ / o.ps_; }

 private:
  constexpr explicit Time(int64_t v) : ps_(v) {}
};

// A size in bytes.
class Bytes {
  uint64_t n_ = 0;

 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(uint64_t n) : n_(n) {}
  constexpr uint64_t count() const { return n_; }
  constexpr auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes o) const { return Bytes(n_ + o.n_); }
  constexpr Bytes operator*(uint64_t k) const { return Bytes(n_ * k); }
};

// A data rate in bits per second.
class DataRate {
  uint64_t bps_ = 0;

 public:
  constexpr DataRate() = default;
  constexpr explicit DataRate(uint64_t bps) : bps_(bps) {}
  constexpr uint64_t bps() const { return bps_; }
  constexpr double gbps() const { return static_cast<double>(bps_) / 1e9; }
  constexpr auto operator<=>(const DataRate&) const = default;

  // Time to serialise n bytes, rounded up to a whole picosecond.
  constexpr Time tx_time(uint64_t n) const {
    if (bps_ == 0) return Time::max();  // a link with no rate never finishes a frame
    // 64-bit arithmetic whenever n * 8e12 fits (any frame); 128-bit beyond.
    if (n < (uint64_t{1} << 20))
      return Time::ps(static_cast<int64_t>((n * 8'000'000'000'000u + bps_ - 1) / bps_));
    const unsigned __int128 bits_ps = static_cast<unsigned __int128>(n) * 8u * 1'000'000'000'000u;
    return Time::ps(static_cast<int64_t>((bits_ps + bps_ - 1) / bps_));
  }
};

namespace literals {
constexpr Time operator""_ps(unsigned long long v) { return Time::ps(static_cast<int64_t>(v)); }
constexpr Time operator""_ns(unsigned long long v) { return Time::ns(static_cast<int64_t>(v)); }
constexpr Time operator""_us(unsigned long long v) { return Time::us(static_cast<int64_t>(v)); }
constexpr Time operator""_ms(unsigned long long v) { return Time::ms(static_cast<int64_t>(v)); }
constexpr Time operator""_s(unsigned long long v) { return Time::s(static_cast<int64_t>(v)); }
constexpr Bytes operator""_B(unsigned long long v) { return Bytes(v); }
constexpr Bytes operator""_KiB(unsigned long long v) { return Bytes(v << 10); }
constexpr Bytes operator""_MiB(unsigned long long v) { return Bytes(v << 20); }
constexpr Bytes operator""_GiB(unsigned long long v) { return Bytes(v << 30); }
constexpr DataRate operator""_bps(unsigned long long v) { return DataRate(v); }
constexpr DataRate operator""_Mbps(unsigned long long v) { return DataRate(v * 1'000'000); }
constexpr DataRate operator""_Gbps(unsigned long long v) { return DataRate(v * 1'000'000'000); }
}  // namespace literals

// Parsers for the human units used in experiment files. A plain number is
// picoseconds, bytes or bits per second. On failure they return nullopt and
// fill `why` with what was expected.
std::optional<Time> parse_time(std::string_view text, std::string* why = nullptr);
std::optional<Bytes> parse_bytes(std::string_view text, std::string* why = nullptr);
std::optional<DataRate> parse_rate(std::string_view text, std::string* why = nullptr);
// For a size written with a power-of-10 unit ("16KB", "16kB", "2MB", "1GB"),
// the same number with the power-of-2 unit ("16KiB"): what a reader used to
// fio's or iperf's K may have meant. Nullopt for any other text.
std::optional<std::string> binary_spelling(std::string_view size);
// Whether a number is written with a unit after it ("500ns", "1 GiB"), not
// bare ("500", "1e3"); false for text that is not a number.
bool written_with_unit(std::string_view number);

// "1.5us", "64KiB", "100Gbps": the shortest exact human form.
std::string to_string(Time t);
std::string to_string(Bytes b);
std::string to_string(DataRate r);

}  // namespace rdmasim
