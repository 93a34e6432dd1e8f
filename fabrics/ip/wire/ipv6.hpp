// IPv6 fixed header (RFC 8200 section 3), 40 bytes.
//
//  0  Version(4) Traffic Class(8) Flow Label(20)
//  4  Payload Length(16) | Next Header(8) | Hop Limit(8)
//  8  Source Address (16)
// 24  Destination Address (16)
//
// The Traffic Class holds DSCP (6 bits) and ECN (2 bits) (RFC 2474, RFC 3168).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"
#include "fabrics/ip/wire/address.hpp"
#include "fabrics/ip/wire/ecn.hpp"

namespace rdmasim {

template <class B>
class Ipv6ViewT {
  template <class>
  friend class Ipv6ViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit Ipv6ViewT(std::span<B> b) : b_(b) {}

  uint32_t word0() const { return load_be32(b_.first(4)); }
  void set_word0(uint32_t v) requires kMut { store_be32(b_.first(4), v); }

 public:
  static constexpr size_t kLen = 40;

  static std::optional<Ipv6ViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return Ipv6ViewT(b);
  }
  operator Ipv6ViewT<const std::byte>() const requires kMut { return Ipv6ViewT<const std::byte>(b_); }

  // Version 6 and the payload inside the buffer.
  bool valid() const { return valid_in(b_.size()); }
  // valid() for a datagram of `bytes` of which the view holds the first
  // ones, its header at least (a switch reads no further).
  bool valid_in(size_t bytes) const { return version() == 6 && kLen + payload_length() <= bytes; }

  uint8_t version() const { return static_cast<uint8_t>(word0() >> 28); }
  uint8_t traffic_class() const { return static_cast<uint8_t>(word0() >> 20); }
  uint8_t dscp() const { return traffic_class() >> 2; }
  Ecn ecn() const { return Ecn(traffic_class() & 0x03); }
  uint32_t flow_label() const { return word0() & 0xFFFFF; }
  uint16_t payload_length() const { return load_be16(b_.subspan(4, 2)); }
  uint8_t next_header() const { return u8(b_[6]); }
  uint8_t hop_limit() const { return u8(b_[7]); }
  Ipv6Address src() const { return address_at(8); }
  Ipv6Address dst() const { return address_at(24); }

  std::span<B> header() const { return b_.first(kLen); }
  std::span<B> payload() const { return b_.subspan(kLen, payload_length()); }  // requires valid()
  // The first bytes of the payload the view holds (requires valid_in()).
  std::span<B> payload_start() const {
    return b_.subspan(kLen, std::min<size_t>(b_.size(), kLen + payload_length()) - kLen);
  }

  void set_version_tc_flow(uint8_t traffic_class, uint32_t flow_label) requires kMut {
    set_word0(uint32_t{6} << 28 | uint32_t{traffic_class} << 20 | (flow_label & 0xFFFFF));
  }
  void set_traffic_class(uint8_t tc) requires kMut { set_word0((word0() & 0xF00FFFFF) | uint32_t{tc} << 20); }
  // No checksum in IPv6: a switch marking CE just rewrites the two bits.
  void set_ecn(Ecn e) requires kMut {
    set_traffic_class(static_cast<uint8_t>((traffic_class() & 0xFC) | static_cast<uint8_t>(e)));
  }
  void set_flow_label(uint32_t v) requires kMut { set_word0((word0() & 0xFFF00000) | (v & 0xFFFFF)); }
  void set_payload_length(uint16_t v) requires kMut { store_be16(b_.subspan(4, 2), v); }
  void set_next_header(uint8_t v) requires kMut { store_u8(b_.subspan(6), v); }
  void set_hop_limit(uint8_t v) requires kMut { store_u8(b_.subspan(7), v); }
  void set_src(const Ipv6Address& a) requires kMut { set_address_at(8, a); }
  void set_dst(const Ipv6Address& a) requires kMut { set_address_at(24, a); }

 private:
  Ipv6Address address_at(size_t off) const {
    Ipv6Address a;
    for (size_t i = 0; i < 16; ++i) a.octets[i] = u8(b_[off + i]);
    return a;
  }
  void set_address_at(size_t off, const Ipv6Address& a) requires kMut {
    for (size_t i = 0; i < 16; ++i) b_[off + i] = std::byte{a.octets[i]};
  }
};

using Ipv6View = Ipv6ViewT<std::byte>;
using ConstIpv6View = Ipv6ViewT<const std::byte>;

struct Ipv6Header {
  static constexpr size_t kLen = Ipv6View::kLen;

  uint8_t dscp = 0;
  Ecn ecn = Ecn::NotEct;
  uint32_t flow_label = 0;
  uint16_t payload_length = 0;  // bytes after this header
  uint8_t next_header = 0;
  uint8_t hop_limit = 64;
  Ipv6Address src, dst;

  static Ipv6Header parse(ConstIpv6View v) {
    return {v.dscp(),        v.ecn(),       v.flow_label(), v.payload_length(),
            v.next_header(), v.hop_limit(), v.src(),        v.dst()};
  }
  void emit(Ipv6View v) const {
    v.set_version_tc_flow(static_cast<uint8_t>(dscp << 2 | static_cast<uint8_t>(ecn)), flow_label);
    v.set_payload_length(payload_length);
    v.set_next_header(next_header);
    v.set_hop_limit(hop_limit);
    v.set_src(src);
    v.set_dst(dst);
  }
  bool operator==(const Ipv6Header&) const = default;
};

}  // namespace rdmasim
