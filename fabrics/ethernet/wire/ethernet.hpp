// Ethernet II header (IEEE 802.3 clause 3.2), 14 bytes: destination MAC,
// source MAC, EtherType. The FCS is not part of captures (libpcap linktype 1
// frames end before it), so nothing here writes one.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/bytes.hpp"

namespace rdmasim {

struct MacAddress {
  std::array<uint8_t, 6> octets{};

  static constexpr MacAddress broadcast() { return {{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}}; }
  // A locally administered unicast address (IEEE 802 U/L bit set, I/G clear)
  // numbered n: 02:00:nn:nn:nn:nn. Simulated NICs use these.
  static constexpr MacAddress local(uint32_t n) {
    return {{0x02, 0x00, uint8_t(n >> 24), uint8_t(n >> 16), uint8_t(n >> 8), uint8_t(n)}};
  }
  // Port `port` of the switch or router whose ports are numbered from
  // `base` (a multiple of 256, fabrics/ip/l3_network.cpp's plan): local(base +
  // port) for the first 256, 02:00:01:nn:nn:pp. A port above 255 (a star's
  // switch, a wide leaf) would take the next node's addresses that way, so
  // it is 02:8n:nn:nn:pp:pp, which no local(n) is: the U/L bit's address
  // space has room for the node and a 16-bit port side by side.
  static constexpr MacAddress switch_port(uint32_t base, uint16_t port) {
    if (port < 256) return local(base + port);
    const uint64_t n = (static_cast<uint64_t>(base >> 8) << 16) | port;
    return {{0x02, uint8_t(0x80 | ((n >> 32) & 0x7F)), uint8_t(n >> 24), uint8_t(n >> 16), uint8_t(n >> 8),
             uint8_t(n)}};
  }
  constexpr bool is_multicast() const { return octets[0] & 0x01; }  // I/G bit; broadcast too
  constexpr bool is_broadcast() const { return *this == broadcast(); }

  // "02:00:00:00:00:01" (also accepts '-' separators); nullopt otherwise.
  static std::optional<MacAddress> parse(std::string_view text);
  std::string to_string() const;  // lower case, ':' separated, as Wireshark prints

  constexpr auto operator<=>(const MacAddress&) const = default;
};

// A MAC address stored in 6 bytes of a header, in wire order.
inline MacAddress load_mac(std::span<const std::byte> b) {
  MacAddress m;
  for (size_t i = 0; i < 6; ++i) m.octets[i] = u8(b[i]);
  return m;
}
inline void store_mac(std::span<std::byte> b, const MacAddress& m) {
  for (size_t i = 0; i < 6; ++i) b[i] = std::byte{m.octets[i]};
}

namespace ethertype {
inline constexpr uint16_t kIpv4 = 0x0800;
inline constexpr uint16_t kArp = 0x0806;
inline constexpr uint16_t kVlan = 0x8100;  // IEEE 802.1Q C-tag TPID
inline constexpr uint16_t kIpv6 = 0x86DD;
inline constexpr uint16_t kMacControl = 0x8808;  // IEEE 802.3 annex 31B: PAUSE, PFC
inline constexpr uint16_t kRoce = 0x8915;        // RoCE v1 (IBA annex A16)
}  // namespace ethertype

template <class B>
class EthernetViewT {
  template <class>
  friend class EthernetViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit EthernetViewT(std::span<B> b) : b_(b) {}

  MacAddress mac_at(size_t off) const { return load_mac(b_.subspan(off, 6)); }
  void set_mac_at(size_t off, const MacAddress& m) requires kMut { store_mac(b_.subspan(off, 6), m); }

 public:
  static constexpr size_t kLen = 14;
  // IEEE 802.3 4.2.3.3 (minFrameSize, 64 bytes) less the FCS: a MAC pads
  // the data field of a shorter frame (3.2.8) with zeros behind the client's
  // bytes; the ports do (LinkParams::min_frame).
  static constexpr size_t kMinFrameLen = 60;

  static std::optional<EthernetViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return EthernetViewT(b);
  }
  operator EthernetViewT<const std::byte>() const requires kMut { return EthernetViewT<const std::byte>(b_); }

  MacAddress dst() const { return mac_at(0); }
  MacAddress src() const { return mac_at(6); }
  uint16_t ethertype() const { return load_be16(b_.subspan(12, 2)); }
  std::span<B> header() const { return b_.first(kLen); }
  std::span<B> payload() const { return b_.subspan(kLen); }

  void set_dst(const MacAddress& m) requires kMut { set_mac_at(0, m); }
  void set_src(const MacAddress& m) requires kMut { set_mac_at(6, m); }
  void set_ethertype(uint16_t v) requires kMut { store_be16(b_.subspan(12, 2), v); }
};

using EthernetView = EthernetViewT<std::byte>;
using ConstEthernetView = EthernetViewT<const std::byte>;

struct EthernetHeader {
  static constexpr size_t kLen = EthernetView::kLen;

  MacAddress dst, src;
  uint16_t ethertype = 0;

  static EthernetHeader parse(ConstEthernetView v) { return {v.dst(), v.src(), v.ethertype()}; }
  void emit(EthernetView v) const {
    v.set_dst(dst);
    v.set_src(src);
    v.set_ethertype(ethertype);
  }
  bool operator==(const EthernetHeader&) const = default;
};

}  // namespace rdmasim
