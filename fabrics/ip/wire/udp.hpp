// UDP header (RFC 768), 8 bytes: Source Port, Destination Port, Length
// (header and data), Checksum over a pseudo-header, the header and the data.
//
// A computed checksum of zero is sent as 0xFFFF (RFC 768); zero on the wire
// means "no checksum", allowed over IPv4 only (RFC 8200 8.1: over IPv6 it is
// an error, and tshark says so).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"
#include "fabrics/ip/wire/address.hpp"
#include "fabrics/ip/wire/checksum.hpp"

namespace rdmasim {

inline constexpr uint16_t kUdpPortRoceV2 = 4791;  // IANA, RoCE v2 (IBA annex A17)

template <class B>
class UdpViewT {
  template <class>
  friend class UdpViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit UdpViewT(std::span<B> b) : b_(b) {}

  // Sum of the datagram (Length bytes, kept inside the buffer) with the
  // checksum field left out.
  uint32_t datagram_sum(uint32_t s) const {
    s = checksum_add(s, b_.first(6));
    const size_t len = std::clamp<size_t>(length(), kLen, b_.size());
    return checksum_add(s, b_.subspan(8, len - 8));
  }

 public:
  static constexpr size_t kLen = 8;

  static std::optional<UdpViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return UdpViewT(b);
  }
  operator UdpViewT<const std::byte>() const requires kMut { return UdpViewT<const std::byte>(b_); }

  bool valid() const { return length() >= kLen && length() <= b_.size(); }

  uint16_t src_port() const { return load_be16(b_.first(2)); }
  uint16_t dst_port() const { return load_be16(b_.subspan(2, 2)); }
  uint16_t length() const { return load_be16(b_.subspan(4, 2)); }
  uint16_t checksum() const { return load_be16(b_.subspan(6, 2)); }

  std::span<B> header() const { return b_.first(kLen); }
  std::span<B> payload() const { return b_.subspan(kLen, length() - kLen); }  // requires valid()

  // Checksums to put in the header (never 0); require valid().
  uint16_t compute_checksum(const Ipv4Address& src, const Ipv4Address& dst) const {
    return nonzero(checksum_fold(datagram_sum(pseudo_header_sum(src, dst, kIpProtoUdp, length()))));
  }
  uint16_t compute_checksum(const Ipv6Address& src, const Ipv6Address& dst) const {
    return nonzero(checksum_fold(datagram_sum(pseudo_header_sum(src, dst, kIpProtoUdp, length()))));
  }
  bool verify_checksum(const Ipv4Address& src, const Ipv4Address& dst) const {
    return checksum() == 0 || checksum() == compute_checksum(src, dst);
  }
  bool verify_checksum(const Ipv6Address& src, const Ipv6Address& dst) const {
    return checksum() == compute_checksum(src, dst);
  }

  void set_src_port(uint16_t v) requires kMut { store_be16(b_.first(2), v); }
  void set_dst_port(uint16_t v) requires kMut { store_be16(b_.subspan(2, 2), v); }
  void set_length(uint16_t v) requires kMut { store_be16(b_.subspan(4, 2), v); }
  void set_checksum(uint16_t v) requires kMut { store_be16(b_.subspan(6, 2), v); }
  template <class Addr>
  void fill_checksum(const Addr& src, const Addr& dst) requires kMut {
    set_checksum(compute_checksum(src, dst));
  }

 private:
  static uint16_t nonzero(uint16_t c) { return c == 0 ? 0xFFFF : c; }
};

using UdpView = UdpViewT<std::byte>;
using ConstUdpView = UdpViewT<const std::byte>;

struct UdpHeader {
  static constexpr size_t kLen = UdpView::kLen;

  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint16_t length = kLen;  // header and data
  uint16_t checksum = 0;   // emitted as is; fill it afterwards with UdpView::fill_checksum

  static UdpHeader parse(ConstUdpView v) { return {v.src_port(), v.dst_port(), v.length(), v.checksum()}; }
  void emit(UdpView v) const {
    v.set_src_port(src_port);
    v.set_dst_port(dst_port);
    v.set_length(length);
    v.set_checksum(checksum);
  }
  bool operator==(const UdpHeader&) const = default;
};

}  // namespace rdmasim
