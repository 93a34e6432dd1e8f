// ICMPv6 Neighbor Solicitation and Neighbor Advertisement (RFC 4861 4.3,
// 4.4): how a RoCE v1 host finds the MAC behind a link-local GID. Both
// messages share one layout, the ICMPv6 payload of an IPv6 packet (next
// header 58, hop limit 255):
//
//  0  Type (135 NS, 136 NA) | Code 0 | Checksum (RFC 4443 2.3)
//  4  NA: R(1) S(1) O(1) reserved(29); NS: reserved(32)
//  8  Target Address (16)
// 24  options, 8-byte units: Type | Length (in 8 bytes) | ...; here the
//     source (NS, type 1) or target (NA, type 2) link-layer address option
//     (RFC 4861 4.6.1): Type | 1 | MAC (6)
//
// The checksum covers the IPv6 pseudo-header (RFC 8200 8.1) and the message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"
#include "fabrics/ethernet/wire/ethernet.hpp"
#include "fabrics/ip/wire/address.hpp"
#include "fabrics/ip/wire/checksum.hpp"

namespace rdmasim {

inline constexpr uint8_t kIpProtoIcmpv6 = 58;
inline constexpr uint8_t kNdHopLimit = 255;  // RFC 4861 7.1.1: anything else is discarded

enum class NdType : uint8_t { NeighborSolicitation = 135, NeighborAdvertisement = 136 };
enum class NdOption : uint8_t { SourceLinkLayer = 1, TargetLinkLayer = 2 };

// ff02::1:ffXX:XXXX, the solicited-node multicast address of `a` (RFC 4291 2.7.1).
constexpr Ipv6Address solicited_node(const Ipv6Address& a) {
  Ipv6Address m;
  m.octets[0] = 0xFF;
  m.octets[1] = 0x02;
  m.octets[11] = 0x01;
  m.octets[12] = 0xFF;
  m.octets[13] = a.octets[13];
  m.octets[14] = a.octets[14];
  m.octets[15] = a.octets[15];
  return m;
}
// 33:33 and the low 32 bits of an IPv6 multicast address (RFC 2464 7).
constexpr MacAddress ipv6_multicast_mac(const Ipv6Address& a) {
  return {{0x33, 0x33, a.octets[12], a.octets[13], a.octets[14], a.octets[15]}};
}

template <class B>
class NdViewT {
  template <class>
  friend class NdViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit NdViewT(std::span<B> b) : b_(b) {}

  uint32_t sum_without_checksum(uint32_t s) const {
    s = checksum_add(s, b_.first(2));
    return checksum_add(s, b_.subspan(4));
  }

 public:
  static constexpr size_t kLen = 24;             // without options
  static constexpr size_t kLinkLayerOptLen = 8;  // an Ethernet link-layer address option

  // The message is the whole span: its length is the ICMPv6 length.
  static std::optional<NdViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return NdViewT(b);
  }
  operator NdViewT<const std::byte>() const requires kMut { return NdViewT<const std::byte>(b_); }

  uint8_t type() const { return u8(b_[0]); }
  uint8_t code() const { return u8(b_[1]); }
  uint16_t checksum() const { return load_be16(b_.subspan(2, 2)); }
  bool router() const { return u8(b_[4]) & 0x80; }
  bool solicited() const { return u8(b_[4]) & 0x40; }
  bool override_flag() const { return u8(b_[4]) & 0x20; }
  Ipv6Address target() const {
    Ipv6Address a;
    for (size_t i = 0; i < 16; ++i) a.octets[i] = u8(b_[8 + i]);
    return a;
  }
  // The first link-layer address option of `kind`; nullopt if there is none
  // or the options are malformed (a zero length, RFC 4861 4.6).
  std::optional<MacAddress> link_layer(NdOption kind) const {
    for (size_t off = kLen; off + 2 <= b_.size();) {
      const size_t len = size_t{u8(b_[off + 1])} * 8;
      if (len == 0 || off + len > b_.size()) return std::nullopt;
      if (u8(b_[off]) == static_cast<uint8_t>(kind) && len == kLinkLayerOptLen) {
        MacAddress m;
        for (size_t i = 0; i < 6; ++i) m.octets[i] = u8(b_[off + 2 + i]);
        return m;
      }
      off += len;
    }
    return std::nullopt;
  }

  // RFC 4443 2.3 over the pseudo-header and the whole message.
  uint16_t compute_checksum(const Ipv6Address& src, const Ipv6Address& dst) const {
    const uint32_t length = static_cast<uint32_t>(b_.size());
    return checksum_fold(sum_without_checksum(pseudo_header_sum(src, dst, kIpProtoIcmpv6, length)));
  }
  bool verify_checksum(const Ipv6Address& src, const Ipv6Address& dst) const {
    return checksum() == compute_checksum(src, dst);
  }

  void set_type(uint8_t v) requires kMut { store_u8(b_, v); }
  void set_code(uint8_t v) requires kMut { store_u8(b_.subspan(1), v); }
  void set_checksum(uint16_t v) requires kMut { store_be16(b_.subspan(2, 2), v); }
  void set_flags(bool router, bool solicited, bool override_flag) requires kMut {
    store_be32(b_.subspan(4, 4), (router ? 0x80000000u : 0) | (solicited ? 0x40000000u : 0) |
                                     (override_flag ? 0x20000000u : 0));
  }
  void set_target(const Ipv6Address& a) requires kMut {
    for (size_t i = 0; i < 16; ++i) b_[8 + i] = std::byte{a.octets[i]};
  }
  // The one option, right after the fixed part (the view must hold it).
  void set_link_layer(NdOption kind, const MacAddress& m) requires kMut {
    store_u8(b_.subspan(kLen), static_cast<uint8_t>(kind));
    store_u8(b_.subspan(kLen + 1), 1);  // 8 bytes
    for (size_t i = 0; i < 6; ++i) b_[kLen + 2 + i] = std::byte{m.octets[i]};
  }
  void fill_checksum(const Ipv6Address& src, const Ipv6Address& dst) requires kMut {
    set_checksum(compute_checksum(src, dst));
  }
};

using NdView = NdViewT<std::byte>;
using ConstNdView = NdViewT<const std::byte>;

// An NS or NA with at most one link-layer address option (what hosts send).
struct NdMessage {
  NdType type = NdType::NeighborSolicitation;
  bool router = false, solicited = false, override_flag = false;  // NA flags
  Ipv6Address target;
  std::optional<MacAddress> link_layer;  // source (NS) or target (NA) link-layer address

  size_t length() const { return NdView::kLen + (link_layer ? NdView::kLinkLayerOptLen : 0); }

  // nullopt unless type 135/136 with code 0 (RFC 4861 7.1.1, 7.1.2).
  static std::optional<NdMessage> parse(ConstNdView v) {
    if (v.code() != 0) return std::nullopt;
    NdMessage m;
    if (v.type() == static_cast<uint8_t>(NdType::NeighborSolicitation)) {
      m.type = NdType::NeighborSolicitation;
      m.link_layer = v.link_layer(NdOption::SourceLinkLayer);
    } else if (v.type() == static_cast<uint8_t>(NdType::NeighborAdvertisement)) {
      m.type = NdType::NeighborAdvertisement;
      m.router = v.router();
      m.solicited = v.solicited();
      m.override_flag = v.override_flag();
      m.link_layer = v.link_layer(NdOption::TargetLinkLayer);
    } else {
      return std::nullopt;
    }
    m.target = v.target();
    return m;
  }
  // Writes length() bytes with the checksum for the IPv6 addresses src, dst.
  void emit(NdView v, const Ipv6Address& src, const Ipv6Address& dst) const {
    v.set_type(static_cast<uint8_t>(type));
    v.set_code(0);
    v.set_checksum(0);
    if (type == NdType::NeighborAdvertisement)
      v.set_flags(router, solicited, override_flag);
    else
      v.set_flags(false, false, false);
    v.set_target(target);
    if (link_layer)
      v.set_link_layer(
          type == NdType::NeighborSolicitation ? NdOption::SourceLinkLayer : NdOption::TargetLinkLayer,
          *link_layer);
    v.fill_checksum(src, dst);
  }
  bool operator==(const NdMessage&) const = default;
};

}  // namespace rdmasim
