#include "core/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace rdmasim {
namespace {

struct Unit {
  std::string_view suffix;
  long double scale;
};

// Splits "1.5us" into 1.5 and "us"; the number must be finite and >= 0.
bool split(std::string_view text, long double& value, std::string_view& suffix) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' ||
                             text[i] == 'e' || text[i] == 'E' || text[i] == '_'))
    ++i;
  // 'e' may begin a unit ("1e" is not a number): back off to the last digit or dot.
  while (i > 0 && (text[i - 1] == 'e' || text[i - 1] == 'E')) --i;
  std::string digits;
  for (char c : text.substr(0, i))
    if (c != '_') digits += c;
  if (digits.empty()) return false;
  char* end = nullptr;
  value = std::strtold(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !std::isfinite(value) || value < 0) return false;
  suffix = text.substr(i);
  while (!suffix.empty() && suffix.front() == ' ') suffix.remove_prefix(1);
  return true;
}

template <size_t N>
std::optional<long double> parse_with(std::string_view text, const std::array<Unit, N>& units,
                                      long double max, const char* expected, std::string* why) {
  long double v;
  std::string_view suffix;
  if (split(text, v, suffix)) {
    for (const Unit& u : units) {
      if (u.suffix == suffix) {
        const long double scaled = std::round(v * u.scale);
        if (scaled > max) break;
        if (std::fabs(v * u.scale - scaled) > 1e-6L * std::max<long double>(1, scaled)) break;
        return scaled;
      }
    }
  }
  if (why) *why = std::string("expected ") + expected + ", got '" + std::string(text) + "'";
  return std::nullopt;
}

constexpr std::array<Unit, 6> kTimeUnits{{{"", 1}, {"ps", 1}, {"ns", 1e3}, {"us", 1e6}, {"ms", 1e9}, {"s", 1e12}}};
constexpr std::array<Unit, 9> kByteUnits{{{"", 1},
                                          {"B", 1},
                                          {"KiB", 1024.0L},
                                          {"MiB", 1024.0L * 1024},
                                          {"GiB", 1024.0L * 1024 * 1024},
                                          {"KB", 1e3},
                                          {"MB", 1e6},
                                          {"GB", 1e9},
                                          {"kB", 1e3}}};
constexpr std::array<Unit, 6> kRateUnits{
    {{"", 1}, {"bps", 1}, {"Kbps", 1e3}, {"Mbps", 1e6}, {"Gbps", 1e9}, {"Tbps", 1e12}}};

}  // namespace

std::optional<Time> parse_time(std::string_view text, std::string* why) {
  auto v = parse_with(text, kTimeUnits, 9.2e18L, "a time such as 500ns, 1.5us, 10ms or 1s (whole picoseconds)", why);
  if (!v) return std::nullopt;
  return Time::ps(static_cast<int64_t>(*v));
}

std::optional<Bytes> parse_bytes(std::string_view text, std::string* why) {
  auto v = parse_with(text, kByteUnits, 1.8e19L, "a size such as 4096, 64KiB or 1MiB (whole bytes)", why);
  if (!v) return std::nullopt;
  return Bytes(static_cast<uint64_t>(*v));
}

std::optional<DataRate> parse_rate(std::string_view text, std::string* why) {
  auto v = parse_with(text, kRateUnits, 1.8e19L, "a rate such as 25Gbps or 100Mbps (above 0)", why);
  if (!v || *v == 0) {
    if (why && v) *why = "expected a rate above 0, got '" + std::string(text) + "'";
    return std::nullopt;
  }
  return DataRate(static_cast<uint64_t>(*v));
}

namespace {
template <size_t N>
std::string format_exact(uint64_t v, const std::array<std::pair<uint64_t, const char*>, N>& units) {
  for (const auto& [scale, name] : units) {
    if (v != 0 && v % scale == 0) return std::to_string(v / scale) + name;
  }
  char buf[64];
  // Not a whole number of any unit: fall back to the largest unit that is <= v, with decimals.
  for (const auto& [scale, name] : units) {
    if (v >= scale) {
      std::snprintf(buf, sizeof buf, "%.6g%s", static_cast<double>(v) / static_cast<double>(scale), name);
      return buf;
    }
  }
  return std::to_string(v) + units.back().second;
}
}  // namespace

std::string to_string(Time t) {
  static constexpr std::array<std::pair<uint64_t, const char*>, 5> u{
      {{1'000'000'000'000, "s"}, {1'000'000'000, "ms"}, {1'000'000, "us"}, {1'000, "ns"}, {1, "ps"}}};
  if (t.count() < 0) return "-" + to_string(Time::ps(-t.count()));
  return format_exact(static_cast<uint64_t>(t.count()), u);
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
