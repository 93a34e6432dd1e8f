// IPv4 header (RFC 791 section 3.1), 20 bytes without options.
//
//  0  Version(4) IHL(4) | DSCP(6) ECN(2) | Total Length(16)
//  4  Identification(16)                | Flags(3) Fragment Offset(13)
//  8  TTL(8) | Protocol(8)              | Header Checksum(16)
// 12  Source Address
// 16  Destination Address
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
#include "fabrics/ip/wire/ecn.hpp"

namespace rdmasim {

template <class B>
class Ipv4ViewT {
  template <class>
  friend class Ipv4ViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit Ipv4ViewT(std::span<B> b) : b_(b) {}

  // The header bytes the checksum covers, kept inside the buffer even when
  // IHL is bad, so that a broken header gives a wrong sum, not a crash.
  size_t summed_len() const { return std::clamp(header_len(), kLen, b_.size()); }

 public:
  static constexpr size_t kLen = 20;  // without options
  static constexpr uint16_t kFlagDf = 0x4000;
  static constexpr uint16_t kFlagMf = 0x2000;

  // Length only; valid() checks the fields that locate the payload.
  static std::optional<Ipv4ViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return Ipv4ViewT(b);
  }
  operator Ipv4ViewT<const std::byte>() const requires kMut { return Ipv4ViewT<const std::byte>(b_); }

  // Version 4, IHL at least 5, total length covering the header and inside the buffer.
  bool valid() const { return valid_in(b_.size()); }
  // valid() for a datagram of `bytes` of which the view holds the first
  // ones, its headers at least (a switch reads no further).
  bool valid_in(size_t bytes) const {
    return version() == 4 && ihl() >= 5 && header_len() <= b_.size() && total_length() >= header_len() &&
           total_length() <= bytes;
  }

  uint8_t version() const { return u8(b_[0]) >> 4; }
  uint8_t ihl() const { return u8(b_[0]) & 0x0F; }  // in 32-bit words
  size_t header_len() const { return size_t{ihl()} * 4; }
  uint8_t tos() const { return u8(b_[1]); }
  uint8_t dscp() const { return u8(b_[1]) >> 2; }
  Ecn ecn() const { return Ecn(u8(b_[1]) & 0x03); }
  uint16_t total_length() const { return load_be16(b_.subspan(2, 2)); }
  uint16_t identification() const { return load_be16(b_.subspan(4, 2)); }
  bool dont_fragment() const { return load_be16(b_.subspan(6, 2)) & kFlagDf; }
  bool more_fragments() const { return load_be16(b_.subspan(6, 2)) & kFlagMf; }
  uint16_t fragment_offset() const { return load_be16(b_.subspan(6, 2)) & 0x1FFF; }  // 8-byte units
  uint8_t ttl() const { return u8(b_[8]); }
  uint8_t protocol() const { return u8(b_[9]); }
  uint16_t checksum() const { return load_be16(b_.subspan(10, 2)); }
  Ipv4Address src() const { return Ipv4Address::from_u32(load_be32(b_.subspan(12, 4))); }
  Ipv4Address dst() const { return Ipv4Address::from_u32(load_be32(b_.subspan(16, 4))); }

  std::span<B> header() const { return b_.first(header_len()); }
  // From the end of the header to Total Length (requires valid()).
  std::span<B> payload() const { return b_.subspan(header_len(), total_length() - header_len()); }
  // The first bytes of the payload the view holds (requires valid_in()):
  // a transport header's ports, where the payload is not in the view.
  std::span<B> payload_start() const {
    return b_.subspan(header_len(), std::min<size_t>(b_.size(), total_length()) - header_len());
  }

  // RFC 791: the checksum field taken as zero while summing.
  uint16_t compute_checksum() const {
    uint32_t s = checksum_add(0, b_.first(10));
    return checksum_fold(checksum_add(s, b_.subspan(12, summed_len() - 12)));
  }
  // Summing a correct header, checksum included, gives 0xFFFF (RFC 1071).
  bool verify_checksum() const { return checksum_fold(checksum_add(0, b_.first(summed_len()))) == 0; }

  void set_version_ihl(uint8_t version, uint8_t ihl) requires kMut {
    store_u8(b_, static_cast<uint8_t>(version << 4 | (ihl & 0x0F)));
  }
  void set_tos(uint8_t v) requires kMut { store_u8(b_.subspan(1), v); }
  void set_dscp_ecn(uint8_t dscp, Ecn e) requires kMut {
    set_tos(static_cast<uint8_t>(dscp << 2 | static_cast<uint8_t>(e)));
  }
  void set_total_length(uint16_t v) requires kMut { store_be16(b_.subspan(2, 2), v); }
  void set_identification(uint16_t v) requires kMut { store_be16(b_.subspan(4, 2), v); }
  void set_flags_fragment(bool df, bool mf, uint16_t offset) requires kMut {
    store_be16(b_.subspan(6, 2),
               static_cast<uint16_t>((df ? kFlagDf : 0) | (mf ? kFlagMf : 0) | (offset & 0x1FFF)));
  }
  void set_ttl(uint8_t v) requires kMut { store_u8(b_.subspan(8), v); }
  void set_protocol(uint8_t v) requires kMut { store_u8(b_.subspan(9), v); }
  void set_checksum(uint16_t v) requires kMut { store_be16(b_.subspan(10, 2), v); }
  void set_src(const Ipv4Address& a) requires kMut { store_be32(b_.subspan(12, 4), a.to_u32()); }
  void set_dst(const Ipv4Address& a) requires kMut { store_be32(b_.subspan(16, 4), a.to_u32()); }
  void fill_checksum() requires kMut { set_checksum(compute_checksum()); }

  // A router's TTL decrement with the checksum patched incrementally. The
  // router drops a packet whose TTL would reach zero (RFC 1812 5.3.1) first.
  // (RFC 1624 eqn. 3 on the TTL/Protocol word, as RFC 1812 5.3.1 suggests).
  void decrement_ttl() requires kMut {
    const uint16_t old_word = load_be16(b_.subspan(8, 2));
    set_ttl(static_cast<uint8_t>(ttl() - 1));
    set_checksum(checksum_update(checksum(), old_word, load_be16(b_.subspan(8, 2))));
  }
  // Rewrites the ECN field (a switch marking CE, RFC 3168 5) and patches the
  // checksum incrementally over the Version/IHL/TOS word.
  void update_ecn(Ecn e) requires kMut {
    const uint16_t old_word = load_be16(b_.first(2));
    set_tos(static_cast<uint8_t>((tos() & 0xFC) | static_cast<uint8_t>(e)));
    set_checksum(checksum_update(checksum(), old_word, load_be16(b_.first(2))));
  }
};

using Ipv4View = Ipv4ViewT<std::byte>;
using ConstIpv4View = Ipv4ViewT<const std::byte>;

// The fields of an option-less IPv4 header. emit() writes IHL 5 and a
// correct checksum.
struct Ipv4Header {
  static constexpr size_t kLen = Ipv4View::kLen;

  uint8_t dscp = 0;
  Ecn ecn = Ecn::NotEct;
  uint16_t total_length = kLen;  // header and payload
  uint16_t identification = 0;
  bool dont_fragment = true;  // RoCE v2 and TCP set DF: no fragmentation on the path
  uint8_t ttl = 64;
  uint8_t protocol = 0;
  Ipv4Address src, dst;

  static Ipv4Header parse(ConstIpv4View v) {
    return {v.dscp(),     v.ecn(), v.total_length(), v.identification(), v.dont_fragment(), v.ttl(),
            v.protocol(), v.src(), v.dst()};
  }
  void emit(Ipv4View v) const {
    v.set_version_ihl(4, 5);
    v.set_dscp_ecn(dscp, ecn);
    v.set_total_length(total_length);
    v.set_identification(identification);
    v.set_flags_fragment(dont_fragment, false, 0);
    v.set_ttl(ttl);
    v.set_protocol(protocol);
    v.set_src(src);
    v.set_dst(dst);
    v.fill_checksum();
  }
  bool operator==(const Ipv4Header&) const = default;
};

}  // namespace rdmasim
