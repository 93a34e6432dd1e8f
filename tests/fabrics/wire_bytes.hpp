// Byte literals for wire-format tests: hex("45 00 00 3c") and back.
#pragma once

#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rdmasim::test {

// Hex digits, whitespace ignored.
inline std::vector<std::byte> hex(std::string_view s) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::vector<std::byte> out;
  int hi = -1;
  for (char c : s) {
    if (c == ' ' || c == '\n' || c == '\t') continue;
    const int d = digit(c);
    if (d < 0) throw std::invalid_argument("bad hex digit");
    if (hi < 0) {
      hi = d;
    } else {
      out.push_back(std::byte(hi << 4 | d));
      hi = -1;
    }
  }
  if (hi >= 0) throw std::invalid_argument("odd number of hex digits");
  return out;
}

inline std::string to_hex(std::span<const std::byte> b) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < b.size(); ++i) {
    if (i) s += ' ';
    s += kHex[static_cast<unsigned>(b[i]) >> 4];
    s += kHex[static_cast<unsigned>(b[i]) & 0xF];
  }
  return s;
}

}  // namespace rdmasim::test
