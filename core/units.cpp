#include "core/units.hpp"

#include <array>
#include <cstdint>

namespace rdmasim {
namespace {

using u128 = unsigned __int128;

struct Unit {
  std::string_view suffix;
  uint64_t scale;
};

// A decimal number as written: mantissa digits times 10^exp10. Parsed
// exactly, so that "1.5us" is 1500000 ps and "1.0000001us" is not a whole
// number of picoseconds (a double would round both to something).
struct Decimal {
  u128 mantissa = 0;
  int exp10 = 0;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads "12", "1.5", "1_000", "2e3", "1.5e-3" from the front of text.
// Rejects signs, empty digit strings and more than 30 significant digits.
bool read_decimal(std::string_view& text, Decimal& d) {
  size_t i = 0;
  int digits = 0;
  bool any = false;
  auto take = [&](char c) {
    if (d.mantissa == 0 && c == '0') return true;  // leading zeros are free
    if (++digits > 30) return false;
    d.mantissa = d.mantissa * 10 + static_cast<unsigned>(c - '0');
    return true;
  };
  for (; i < text.size() && (is_digit(text[i]) || (text[i] == '_' && any)); ++i) {
    if (text[i] == '_') continue;
    any = true;
    if (!take(text[i])) return false;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && is_digit(text[i]); ++i) {
      any = true;
      if (!take(text[i])) return false;
      --d.exp10;
    }
  }
  if (!any) return false;
  // An exponent only when digits follow: "1e" and "1exa" leave the 'e' to the unit.
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t j = i + 1;
    bool neg = false;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) neg = text[j++] == '-';
    if (j < text.size() && is_digit(text[j])) {
      int e = 0;
      for (; j < text.size() && is_digit(text[j]); ++j) {
        e = e * 10 + (text[j] - '0');
        if (e > 60) return false;
      }
      d.exp10 += neg ? -e : e;
      i = j;
    }
  }
  text.remove_prefix(i);
  return true;
}

// mantissa * 10^exp10 * scale as a whole number no larger than max, or false.
bool scale_exact(Decimal d, uint64_t scale, uint64_t max, uint64_t& out) {
  while (d.exp10 < 0 && d.mantissa % 10 == 0 && d.mantissa != 0) {  // "1.500us" is "1.5us"
    d.mantissa /= 10;
    ++d.exp10;
  }
  u128 v = d.mantissa;
  if (v == 0) {
    out = 0;
    return true;
  }
  const u128 limit = max;
  // Multiply first (exactly, while it fits), then divide out negative powers.
  if (v > limit * 10'000'000'000'000'000'000ull / scale) return false;  // keeps v * scale in range
  v *= scale;
  for (; d.exp10 > 0; --d.exp10) {
    if (v > limit) return false;
    v *= 10;
  }
  for (; d.exp10 < 0; ++d.exp10) {
    if (v % 10 != 0) return false;  // not whole
    v /= 10;
  }
  if (v > limit) return false;
  out = static_cast<uint64_t>(v);
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

template <size_t N>
std::optional<uint64_t> parse_with(std::string_view text, const std::array<Unit, N>& units, uint64_t max,
                                   const char* expected, std::string* why) {
  std::string_view rest = trim(text);
  Decimal d;
  if (read_decimal(rest, d)) {
    rest = trim(rest);
    for (const Unit& u : units) {
      uint64_t v;
      if (u.suffix == rest && scale_exact(d, u.scale, max, v)) return v;
    }
  }
  if (why) *why = std::string("expected ") + expected + ", got '" + std::string(text) + "'";
  return std::nullopt;
}

constexpr std::array<Unit, 6> kTimeUnits{
    {{"", 1}, {"ps", 1}, {"ns", 1'000}, {"us", 1'000'000}, {"ms", 1'000'000'000}, {"s", 1'000'000'000'000}}};
constexpr std::array<Unit, 9> kByteUnits{{{"", 1},
                                          {"B", 1},
                                          {"KiB", 1ull << 10},
                                          {"MiB", 1ull << 20},
                                          {"GiB", 1ull << 30},
                                          {"KB", 1'000},
                                          {"kB", 1'000},
                                          {"MB", 1'000'000},
                                          {"GB", 1'000'000'000}}};
constexpr std::array<Unit, 6> kRateUnits{{{"", 1},
                                          {"bps", 1},
                                          {"Kbps", 1'000},
                                          {"Mbps", 1'000'000},
                                          {"Gbps", 1'000'000'000},
                                          {"Tbps", 1'000'000'000'000}}};

}  // namespace

std::optional<Time> parse_time(std::string_view text, std::string* why) {
  auto v = parse_with(text, kTimeUnits, INT64_MAX,
                      "a time such as 500ns, 1.5us, 10ms or 1s (whole picoseconds)", why);
  if (!v) return std::nullopt;
  return Time::ps(static_cast<int64_t>(*v));
}

std::optional<Bytes> parse_bytes(std::string_view text, std::string* why) {
  auto v = parse_with(text, kByteUnits, UINT64_MAX, "a size such as 4096, 64KiB or 1MiB (whole bytes)", why);
  if (!v) return std::nullopt;
  return Bytes(*v);
}

std::optional<std::string> binary_spelling(std::string_view size) {
  std::string_view rest = trim(size);
  const std::string_view text = rest;
  Decimal d;
  if (!read_decimal(rest, d)) return std::nullopt;
  const std::string_view number = text.substr(0, text.size() - rest.size());
  rest = trim(rest);
  for (auto [decimal, binary] : {std::pair{"KB", "KiB"}, {"kB", "KiB"}, {"MB", "MiB"}, {"GB", "GiB"}})
    if (rest == decimal) return std::string(trim(number)) + binary;
  return std::nullopt;
}

bool written_with_unit(std::string_view number) {
  std::string_view rest = trim(number);
  Decimal d;
  return read_decimal(rest, d) && !trim(rest).empty();
}

std::optional<DataRate> parse_rate(std::string_view text, std::string* why) {
  auto v = parse_with(text, kRateUnits, UINT64_MAX,
                      "a rate such as 25Gbps or 100Mbps (whole bits per second)", why);
  if (v && *v == 0) {
    if (why) *why = "expected a rate above 0, got '" + std::string(text) + "'";
    return std::nullopt;
  }
  if (!v) return std::nullopt;
  return DataRate(*v);
}

namespace {

// The largest unit in which v is written with at most three decimals, the
// decimals exact (every scale here divides a power of ten or is one, so
// the fraction always ends); failing that, the smallest unit.
template <size_t N>
std::string format_exact(uint64_t v, const std::array<std::pair<uint64_t, const char*>, N>& units) {
  for (const auto& [scale, name] : units) {
    if (v < scale) continue;
    const uint64_t whole = v / scale;
    uint64_t rem = v % scale;
    std::string s = std::to_string(whole);
    if (rem == 0) return s + name;
    // Expand rem / scale as decimals; give up on this unit past three.
    std::string frac;
    for (int i = 0; i < 3 && rem != 0; ++i) {
      const u128 r10 = static_cast<u128>(rem) * 10;
      frac += static_cast<char>('0' + static_cast<int>(r10 / scale));
      rem = static_cast<uint64_t>(r10 % scale);
    }
    if (rem == 0) return s + "." + frac + name;
  }
  return std::to_string(v) + units.back().second;
}

}  // namespace

std::string to_string(Time t) {
  static constexpr std::array<std::pair<uint64_t, const char*>, 5> u{
      {{1'000'000'000'000, "s"}, {1'000'000'000, "ms"}, {1'000'000, "us"}, {1'000, "ns"}, {1, "ps"}}};
  const int64_t c = t.count();
  // The magnitude as unsigned: -INT64_MIN does not fit an int64_t.
  const uint64_t mag = c < 0 ? 0 - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
  return (c < 0 ? "-" : "") + format_exact(mag, u);
}

std::string to_string(Bytes b) {
  static constexpr std::array<std::pair<uint64_t, const char*>, 4> u{
      {{1ull << 30, "GiB"}, {1ull << 20, "MiB"}, {1ull << 10, "KiB"}, {1, "B"}}};
  return format_exact(b.count(), u);
}

std::string to_string(DataRate r) {
  static constexpr std::array<std::pair<uint64_t, const char*>, 4> u{
      {{1'000'000'000'000, "Tbps"}, {1'000'000'000, "Gbps"}, {1'000'000, "Mbps"}, {1, "bps"}}};
  return format_exact(r.bps(), u);
}

}  // namespace rdmasim
