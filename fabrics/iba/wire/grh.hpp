// Global Route Header (IBA 8.3), 40 bytes, laid out as an IPv6 header. In
// native IB packets between subnets (LRH LNH = 3) and in every RoCE v1 frame.
//
//  0  IPVer(4)=6 | TClass(8) | FlowLabel(20)
//  4  PayLen(16) | NxtHdr(8) | HopLmt(8)
//  8  SGID(128)
// 24  DGID(128)
//
// PayLen counts the bytes after the GRH up to and including the ICRC
// (IBA 8.3.1); NxtHdr is 0x1B when an IBA transport header follows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"
#include "fabrics/ip/wire/address.hpp"

namespace rdmasim {

// A GID is 128 bits written like an IPv6 address (IBA 4.1.1): Wireshark
// shows infiniband.grh.sgid/dgid as IPv6 addresses, and RoCE v2 GIDs are the
// interface's IPv6 or IPv4-mapped (::ffff:a.b.c.d) addresses.
using Gid = Ipv6Address;

// Subnet prefix (default fe80::/64, IBA 4.1.1) and port GUID.
constexpr Gid make_gid(uint64_t subnet_prefix, uint64_t guid) {
  Gid g;
  for (int i = 0; i < 8; ++i) {
    g.octets[i] = static_cast<uint8_t>(subnet_prefix >> (56 - 8 * i));
    g.octets[8 + i] = static_cast<uint8_t>(guid >> (56 - 8 * i));
  }
  return g;
}
inline constexpr uint64_t kDefaultGidPrefix = 0xFE80000000000000;

inline constexpr uint8_t kGrhNextHeaderIba = 0x1B;

template <class B>
class GrhViewT {
  template <class>
  friend class GrhViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit GrhViewT(std::span<B> b) : b_(b) {}

  uint32_t word0() const { return load_be32(b_.first(4)); }
  Gid gid_at(size_t off) const {
    Gid g;
    for (size_t i = 0; i < 16; ++i) g.octets[i] = u8(b_[off + i]);
    return g;
  }
  void set_gid_at(size_t off, const Gid& g) requires kMut {
    for (size_t i = 0; i < 16; ++i) b_[off + i] = std::byte{g.octets[i]};
  }

 public:
  static constexpr size_t kLen = 40;

  static std::optional<GrhViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return GrhViewT(b);
  }
  operator GrhViewT<const std::byte>() const requires kMut { return GrhViewT<const std::byte>(b_); }

  uint8_t ip_ver() const { return static_cast<uint8_t>(word0() >> 28); }
  uint8_t tclass() const { return static_cast<uint8_t>(word0() >> 20); }
  uint32_t flow_label() const { return word0() & 0xFFFFF; }
  uint16_t pay_len() const { return load_be16(b_.subspan(4, 2)); }
  uint8_t next_header() const { return u8(b_[6]); }
  uint8_t hop_limit() const { return u8(b_[7]); }
  Gid sgid() const { return gid_at(8); }
  Gid dgid() const { return gid_at(24); }
  std::span<B> header() const { return b_.first(kLen); }
  std::span<B> payload() const { return b_.subspan(kLen); }

  void set_ver_tclass_flow(uint8_t ip_ver, uint8_t tclass, uint32_t flow_label) requires kMut {
    store_be32(b_.first(4), uint32_t{ip_ver} << 28 | uint32_t{tclass} << 20 | (flow_label & 0xFFFFF));
  }
  void set_pay_len(uint16_t v) requires kMut { store_be16(b_.subspan(4, 2), v); }
  void set_next_header(uint8_t v) requires kMut { store_u8(b_.subspan(6), v); }
  void set_hop_limit(uint8_t v) requires kMut { store_u8(b_.subspan(7), v); }
  void set_sgid(const Gid& g) requires kMut { set_gid_at(8, g); }
  void set_dgid(const Gid& g) requires kMut { set_gid_at(24, g); }
};

using GrhView = GrhViewT<std::byte>;
using ConstGrhView = GrhViewT<const std::byte>;

struct Grh {
  static constexpr size_t kLen = GrhView::kLen;

  uint8_t ip_ver = 6;
  uint8_t tclass = 0;
  uint32_t flow_label = 0;
  uint16_t pay_len = 0;  // BTH through ICRC
  uint8_t next_header = kGrhNextHeaderIba;
  uint8_t hop_limit = 64;  // 1 would keep it in the subnet; RoCE v1 NICs send 64
  Gid sgid, dgid;

  static Grh parse(ConstGrhView v) {
    return {v.ip_ver(),      v.tclass(),    v.flow_label(), v.pay_len(),
            v.next_header(), v.hop_limit(), v.sgid(),       v.dgid()};
  }
  void emit(GrhView v) const {
    v.set_ver_tclass_flow(ip_ver, tclass, flow_label);
    v.set_pay_len(pay_len);
    v.set_next_header(next_header);
    v.set_hop_limit(hop_limit);
    v.set_sgid(sgid);
    v.set_dgid(dgid);
  }
  bool operator==(const Grh&) const = default;
};

}  // namespace rdmasim
