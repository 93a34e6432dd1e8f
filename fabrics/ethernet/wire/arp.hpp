// ARP for IPv4 over Ethernet (RFC 826), 28 bytes.
//
//  0  HTYPE 1 (Ethernet) | PTYPE 0x0800 (IPv4)
//  4  HLEN 6 | PLEN 4    | OPER (1 request, 2 reply)
//  8  SHA (6) SPA (4) THA (6) TPA (4)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"
#include "fabrics/ethernet/wire/ethernet.hpp"
#include "fabrics/ip/wire/address.hpp"

namespace rdmasim {

enum class ArpOperation : uint16_t { Request = 1, Reply = 2 };

template <class B>
class ArpViewT {
  template <class>
  friend class ArpViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit ArpViewT(std::span<B> b) : b_(b) {}

  MacAddress mac_at(size_t off) const { return load_mac(b_.subspan(off, 6)); }
  void set_mac_at(size_t off, const MacAddress& m) requires kMut { store_mac(b_.subspan(off, 6), m); }

 public:
  static constexpr size_t kLen = 28;
  static constexpr uint16_t kHtypeEthernet = 1;

  static std::optional<ArpViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return ArpViewT(b);
  }
  operator ArpViewT<const std::byte>() const requires kMut { return ArpViewT<const std::byte>(b_); }

  // The only ARP this view reads: Ethernet hardware, IPv4 protocol addresses.
  bool valid() const {
    return htype() == kHtypeEthernet && ptype() == ethertype::kIpv4 && hlen() == 6 && plen() == 4;
  }

  uint16_t htype() const { return load_be16(b_.first(2)); }
  uint16_t ptype() const { return load_be16(b_.subspan(2, 2)); }
  uint8_t hlen() const { return u8(b_[4]); }
  uint8_t plen() const { return u8(b_[5]); }
  ArpOperation operation() const { return ArpOperation(load_be16(b_.subspan(6, 2))); }
  MacAddress sender_mac() const { return mac_at(8); }
  Ipv4Address sender_ip() const { return Ipv4Address::from_u32(load_be32(b_.subspan(14, 4))); }
  MacAddress target_mac() const { return mac_at(18); }
  Ipv4Address target_ip() const { return Ipv4Address::from_u32(load_be32(b_.subspan(24, 4))); }

  void set_ethernet_ipv4() requires kMut {
    store_be16(b_.first(2), kHtypeEthernet);
    store_be16(b_.subspan(2, 2), ethertype::kIpv4);
    store_u8(b_.subspan(4), 6);
    store_u8(b_.subspan(5), 4);
  }
  void set_operation(ArpOperation op) requires kMut {
    store_be16(b_.subspan(6, 2), static_cast<uint16_t>(op));
  }
  void set_sender_mac(const MacAddress& m) requires kMut { set_mac_at(8, m); }
  void set_sender_ip(const Ipv4Address& a) requires kMut { store_be32(b_.subspan(14, 4), a.to_u32()); }
  void set_target_mac(const MacAddress& m) requires kMut { set_mac_at(18, m); }
  void set_target_ip(const Ipv4Address& a) requires kMut { store_be32(b_.subspan(24, 4), a.to_u32()); }
};

using ArpView = ArpViewT<std::byte>;
using ConstArpView = ArpViewT<const std::byte>;

struct ArpPacket {
  static constexpr size_t kLen = ArpView::kLen;

  ArpOperation operation = ArpOperation::Request;
  MacAddress sender_mac;
  Ipv4Address sender_ip;
  MacAddress target_mac;  // zero in a request (RFC 826 leaves it unspecified)
  Ipv4Address target_ip;

  static ArpPacket parse(ConstArpView v) {
    return {v.operation(), v.sender_mac(), v.sender_ip(), v.target_mac(), v.target_ip()};
  }
  void emit(ArpView v) const {
    v.set_ethernet_ipv4();
    v.set_operation(operation);
    v.set_sender_mac(sender_mac);
    v.set_sender_ip(sender_ip);
    v.set_target_mac(target_mac);
    v.set_target_ip(target_ip);
  }
  bool operator==(const ArpPacket&) const = default;
};

}  // namespace rdmasim
