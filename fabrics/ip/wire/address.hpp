// IPv4 and IPv6 addresses: plain values in network byte order.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace rdmasim {

struct Ipv4Address {
  std::array<uint8_t, 4> octets{};

  static constexpr Ipv4Address from_u32(uint32_t v) {
    return {{uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)}};
  }
  constexpr uint32_t to_u32() const {
    return uint32_t{octets[0]} << 24 | uint32_t{octets[1]} << 16 | uint32_t{octets[2]} << 8 | octets[3];
  }
  std::span<const std::byte, 4> bytes() const { return std::as_bytes(std::span<const uint8_t, 4>(octets)); }

  // "10.0.0.1"; nullopt unless exactly four decimal octets.
  static std::optional<Ipv4Address> parse(std::string_view text);
  std::string to_string() const;

  constexpr auto operator<=>(const Ipv4Address&) const = default;
};

struct Ipv6Address {
  std::array<uint8_t, 16> octets{};

  // ::ffff:a.b.c.d (RFC 4291 2.5.5.2): how RoCE v2 GIDs carry IPv4 addresses.
  static constexpr Ipv6Address v4_mapped(Ipv4Address a) {
    Ipv6Address r;
    r.octets[10] = r.octets[11] = 0xFF;
    for (int i = 0; i < 4; ++i) r.octets[12 + i] = a.octets[i];
    return r;
  }
  constexpr bool is_v4_mapped() const {
    for (int i = 0; i < 10; ++i)
      if (octets[i] != 0) return false;
    return octets[10] == 0xFF && octets[11] == 0xFF;
  }
  std::span<const std::byte, 16> bytes() const { return std::as_bytes(std::span<const uint8_t, 16>(octets)); }

  // Any RFC 4291 text form, "fe80::1" or "::ffff:10.0.0.1".
  static std::optional<Ipv6Address> parse(std::string_view text);
  // RFC 5952 canonical form (lower case, longest zero run compressed).
  std::string to_string() const;

  constexpr auto operator<=>(const Ipv6Address&) const = default;
};

}  // namespace rdmasim
