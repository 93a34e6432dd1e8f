#include "fabrics/ethernet/wire/ethernet.hpp"

namespace rdmasim {

namespace {
int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<MacAddress> MacAddress::parse(std::string_view text) {
  if (text.size() != 17) return std::nullopt;
  MacAddress m;
  for (size_t i = 0; i < 6; ++i) {
    const int hi = hex_digit(text[3 * i]), lo = hex_digit(text[3 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    if (i < 5 && text[3 * i + 2] != ':' && text[3 * i + 2] != '-') return std::nullopt;
    m.octets[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return m;
}

std::string MacAddress::to_string() const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(17, ':');
  for (size_t i = 0; i < 6; ++i) {
    s[3 * i] = kHex[octets[i] >> 4];
    s[3 * i + 1] = kHex[octets[i] & 0x0F];
  }
  return s;
}

}  // namespace rdmasim
