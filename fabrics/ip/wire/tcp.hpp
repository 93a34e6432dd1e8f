// TCP header (RFC 9293 section 3.1), 20 bytes plus up to 40 bytes of options.
//
//  0  Source Port(16)                 | Destination Port(16)
//  4  Sequence Number(32)
//  8  Acknowledgment Number(32)
// 12  DOff(4) Rsrvd(3) AE(1) | CWR ECE URG ACK PSH RST SYN FIN | Window(16)
// 16  Checksum(16)                    | Urgent Pointer(16)
// 20  Options (DOff * 4 - 20 bytes)
//
// Options understood (kind, length): EOL 0, NOP 1, MSS 2/4 (RFC 9293 3.2),
// Window Scale 3/3 (RFC 7323 2), SACK-Permitted 4/2 and SACK 5/2+8n
// (RFC 2018), Timestamps 8/10 (RFC 7323 3). Unknown options are skipped by
// their length.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"
#include "fabrics/ip/wire/address.hpp"
#include "fabrics/ip/wire/checksum.hpp"
#include "fabrics/ip/wire/ipv4.hpp"
#include "fabrics/ip/wire/ipv6.hpp"

namespace rdmasim {

// The control bits of byte 13 (RFC 9293 3.1; CWR and ECE from RFC 3168 6.1).
namespace tcp_flag {
inline constexpr uint8_t kFin = 0x01;
inline constexpr uint8_t kSyn = 0x02;
inline constexpr uint8_t kRst = 0x04;
inline constexpr uint8_t kPsh = 0x08;
inline constexpr uint8_t kAck = 0x10;
inline constexpr uint8_t kUrg = 0x20;
inline constexpr uint8_t kEce = 0x40;
inline constexpr uint8_t kCwr = 0x80;
}  // namespace tcp_flag

namespace tcp_option {
inline constexpr uint8_t kEol = 0;
inline constexpr uint8_t kNop = 1;
inline constexpr uint8_t kMss = 2;
inline constexpr uint8_t kWindowScale = 3;
inline constexpr uint8_t kSackPermitted = 4;
inline constexpr uint8_t kSack = 5;
inline constexpr uint8_t kTimestamps = 8;
}  // namespace tcp_option

template <class B>
class TcpViewT {
  template <class>
  friend class TcpViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit TcpViewT(std::span<B> b) : b_(b) {}

 public:
  static constexpr size_t kLen = 20;  // without options
  static constexpr size_t kMaxLen = 60;

  // Length only; valid() checks that the data offset fits the buffer.
  static std::optional<TcpViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return TcpViewT(b);
  }
  operator TcpViewT<const std::byte>() const requires kMut { return TcpViewT<const std::byte>(b_); }

  bool valid() const { return data_offset() >= 5 && header_len() <= b_.size(); }

  uint16_t src_port() const { return load_be16(b_.subspan(0, 2)); }
  uint16_t dst_port() const { return load_be16(b_.subspan(2, 2)); }
  uint32_t seq() const { return load_be32(b_.subspan(4, 4)); }
  uint32_t ack() const { return load_be32(b_.subspan(8, 4)); }
  uint8_t data_offset() const { return u8(b_[12]) >> 4; }  // in 32-bit words
  size_t header_len() const { return size_t{data_offset()} * 4; }
  uint8_t flags() const { return u8(b_[13]); }
  bool has(uint8_t flag) const { return (flags() & flag) != 0; }
  uint16_t window() const { return load_be16(b_.subspan(14, 2)); }
  uint16_t checksum() const { return load_be16(b_.subspan(16, 2)); }
  uint16_t urgent() const { return load_be16(b_.subspan(18, 2)); }

  std::span<B> bytes() const { return b_; }
  std::span<B> options() const { return b_.subspan(kLen, header_len() - kLen); }
  std::span<B> payload() const { return b_.subspan(header_len()); }

  void set_src_port(uint16_t v) requires kMut { store_be16(b_.subspan(0, 2), v); }
  void set_dst_port(uint16_t v) requires kMut { store_be16(b_.subspan(2, 2), v); }
  void set_seq(uint32_t v) requires kMut { store_be32(b_.subspan(4, 4), v); }
  void set_ack(uint32_t v) requires kMut { store_be32(b_.subspan(8, 4), v); }
  // The reserved bits and AE are written as zero.
  void set_data_offset(uint8_t words) requires kMut {
    store_u8(b_.subspan(12), static_cast<uint8_t>(words << 4));
  }
  void set_flags(uint8_t v) requires kMut { store_u8(b_.subspan(13), v); }
  void set_window(uint16_t v) requires kMut { store_be16(b_.subspan(14, 2), v); }
  void set_checksum(uint16_t v) requires kMut { store_be16(b_.subspan(16, 2), v); }
  void set_urgent(uint16_t v) requires kMut { store_be16(b_.subspan(18, 2), v); }
};

using TcpView = TcpViewT<std::byte>;
using ConstTcpView = TcpViewT<const std::byte>;

// RFC 2018 3: a SACK block names received bytes [left, right).
struct SackBlock {
  uint32_t left = 0, right = 0;
  bool operator==(const SackBlock&) const = default;
};

struct TcpTimestamps {
  uint32_t value = 0, echo = 0;  // TSval, TSecr
  bool operator==(const TcpTimestamps&) const = default;
};

// The options of one segment, parsed or to be emitted.
struct TcpOptions {
  static constexpr size_t kMaxSackBlocks = 4;  // 2 + 4 * 8 = 34 bytes, the most that fits

  std::optional<uint16_t> mss;
  std::optional<uint8_t> window_scale;
  bool sack_permitted = false;
  std::optional<TcpTimestamps> timestamps;
  std::array<SackBlock, kMaxSackBlocks> sack{};
  uint8_t sack_count = 0;

  std::span<const SackBlock> sack_blocks() const { return {sack.data(), sack_count}; }
  void add_sack(SackBlock b) {
    if (sack_count < kMaxSackBlocks) sack[sack_count++] = b;
  }

  // Bytes emit() writes: a multiple of 4, at most 40. SACK blocks beyond what
  // fits beside the other options are left out (RFC 2018 3: at most 3 with
  // timestamps).
  size_t emitted_len() const {
    size_t n = 0;
    if (mss) n += 4;
    if (sack_permitted || timestamps) n += timestamps ? 12 : 4;  // [NOP NOP] SACKOK | [SACKOK|NOP NOP] TS
    if (window_scale) n += 4;                                    // NOP WS
    const size_t room = (40 - n - 4) / 8;                        // NOP NOP SACK(2 + 8k)
    if (sack_count > 0) n += 4 + 8 * std::min<size_t>(sack_count, room);
    return n;
  }

  // Writes the options in the order Linux uses, padded with NOPs to a 4-byte
  // boundary; `out` must hold emitted_len() bytes.
  void emit(std::span<std::byte> out) const {
    size_t i = 0;
    auto put = [&](uint8_t v) { out[i++] = std::byte{v}; };
    if (mss) {
      put(tcp_option::kMss), put(4);
      store_be16(out.subspan(i, 2), *mss);
      i += 2;
    }
    if (timestamps) {
      if (sack_permitted) {
        put(tcp_option::kSackPermitted), put(2);
      } else {
        put(tcp_option::kNop), put(tcp_option::kNop);
      }
      put(tcp_option::kTimestamps), put(10);
      store_be32(out.subspan(i, 4), timestamps->value);
      store_be32(out.subspan(i + 4, 4), timestamps->echo);
      i += 8;
    } else if (sack_permitted) {
      put(tcp_option::kNop), put(tcp_option::kNop), put(tcp_option::kSackPermitted), put(2);
    }
    if (window_scale) put(tcp_option::kNop), put(tcp_option::kWindowScale), put(3), put(*window_scale);
    if (sack_count > 0) {
      const size_t k = std::min<size_t>(sack_count, (40 - i - 4) / 8);
      put(tcp_option::kNop), put(tcp_option::kNop), put(tcp_option::kSack),
          put(static_cast<uint8_t>(2 + 8 * k));
      for (size_t j = 0; j < k; ++j) {
        store_be32(out.subspan(i, 4), sack[j].left);
        store_be32(out.subspan(i + 4, 4), sack[j].right);
        i += 8;
      }
    }
  }

  // Reads the options area. Returns nullopt when an option runs past the end
  // or has a length its kind does not allow.
  static std::optional<TcpOptions> parse(std::span<const std::byte> in) {
    TcpOptions o;
    size_t i = 0;
    while (i < in.size()) {
      const uint8_t kind = u8(in[i]);
      if (kind == tcp_option::kEol) break;
      if (kind == tcp_option::kNop) {
        ++i;
        continue;
      }
      if (i + 2 > in.size()) return std::nullopt;
      const uint8_t len = u8(in[i + 1]);
      if (len < 2 || i + len > in.size()) return std::nullopt;
      auto body = in.subspan(i + 2, len - 2u);
      switch (kind) {
        case tcp_option::kMss:
          if (len != 4) return std::nullopt;
          o.mss = load_be16(body);
          break;
        case tcp_option::kWindowScale:
          if (len != 3) return std::nullopt;
          o.window_scale = u8(body[0]);
          break;
        case tcp_option::kSackPermitted:
          if (len != 2) return std::nullopt;
          o.sack_permitted = true;
          break;
        case tcp_option::kSack:
          if ((len - 2) % 8 != 0) return std::nullopt;
          for (size_t j = 0; j + 8 <= body.size(); j += 8)
            o.add_sack({load_be32(body.subspan(j, 4)), load_be32(body.subspan(j + 4, 4))});
          break;
        case tcp_option::kTimestamps:
          if (len != 10) return std::nullopt;
          o.timestamps = TcpTimestamps{load_be32(body.subspan(0, 4)), load_be32(body.subspan(4, 4))};
          break;
        default:
          break;  // RFC 9293 3.2: ignore an option of unknown kind
      }
      i += len;
    }
    return o;
  }

  bool operator==(const TcpOptions& o) const {
    if (mss != o.mss || window_scale != o.window_scale || sack_permitted != o.sack_permitted ||
        timestamps != o.timestamps || sack_count != o.sack_count)
      return false;
    for (size_t i = 0; i < sack_count; ++i)
      if (!(sack[i] == o.sack[i])) return false;
    return true;
  }
};

// The fields of a TCP header. emit() writes the data offset that the options
// need and leaves the checksum as set (zero unless filled later).
struct TcpHeader {
  uint16_t src_port = 0, dst_port = 0;
  uint32_t seq = 0, ack = 0;
  uint8_t flags = 0;
  uint16_t window = 0;
  uint16_t checksum = 0;
  uint16_t urgent = 0;
  TcpOptions options;

  size_t header_len() const { return TcpView::kLen + options.emitted_len(); }

  // nullopt when the data offset or the options are malformed.
  static std::optional<TcpHeader> parse(ConstTcpView v) {
    if (!v.valid()) return std::nullopt;
    auto opts = TcpOptions::parse(v.options());
    if (!opts) return std::nullopt;
    return TcpHeader{v.src_port(), v.dst_port(), v.seq(),    v.ack(), v.flags(),
                     v.window(),   v.checksum(), v.urgent(), *opts};
  }
  // `v` must span at least header_len() bytes.
  void emit(TcpView v) const {
    const size_t len = header_len();
    v.set_src_port(src_port);
    v.set_dst_port(dst_port);
    v.set_seq(seq);
    v.set_ack(ack);
    v.set_data_offset(static_cast<uint8_t>(len / 4));
    v.set_flags(flags);
    v.set_window(window);
    v.set_checksum(checksum);
    v.set_urgent(urgent);
    options.emit(v.bytes().subspan(TcpView::kLen, len - TcpView::kLen));
  }
  bool operator==(const TcpHeader&) const = default;
};

// The IP addresses of one direction of a connection: what the TCP checksum's
// pseudo-header covers besides the protocol and length (RFC 9293 3.1 for
// IPv4, RFC 8200 8.1 for IPv6).
struct TcpPseudoHeader {
  bool ipv6 = false;
  Ipv4Address src4, dst4;
  Ipv6Address src6, dst6;

  static TcpPseudoHeader v4(Ipv4Address src, Ipv4Address dst) { return {false, src, dst, {}, {}}; }
  static TcpPseudoHeader v6(const Ipv6Address& src, const Ipv6Address& dst) {
    return {true, {}, {}, src, dst};
  }
  static TcpPseudoHeader of(ConstIpv4View ip) { return v4(ip.src(), ip.dst()); }
  static TcpPseudoHeader of(ConstIpv6View ip) { return v6(ip.src(), ip.dst()); }

  TcpPseudoHeader reversed() const { return {ipv6, dst4, src4, dst6, src6}; }
  uint32_t sum(uint32_t tcp_length) const {
    return ipv6 ? pseudo_header_sum(src6, dst6, kIpProtoTcp, tcp_length)
                : pseudo_header_sum(src4, dst4, kIpProtoTcp, static_cast<uint16_t>(tcp_length));
  }
  bool operator==(const TcpPseudoHeader&) const = default;
};

// The checksum of a whole segment (header and payload), its checksum field
// taken as zero.
inline uint16_t tcp_checksum(std::span<const std::byte> segment, const TcpPseudoHeader& ph) {
  uint32_t s = ph.sum(static_cast<uint32_t>(segment.size()));
  s = checksum_add(s, segment.first(16));
  s = checksum_add(s, segment.subspan(18));
  return checksum_fold(s);
}
inline void tcp_fill_checksum(std::span<std::byte> segment, const TcpPseudoHeader& ph) {
  store_be16(segment.subspan(16, 2), tcp_checksum(segment, ph));
}
// A correct segment sums to 0xFFFF with its checksum included (RFC 1071).
inline bool tcp_verify_checksum(std::span<const std::byte> segment, const TcpPseudoHeader& ph) {
  return checksum_fold(checksum_add(ph.sum(static_cast<uint32_t>(segment.size())), segment)) == 0;
}

// Sequence-number arithmetic modulo 2^32 (RFC 9293 3.4).
constexpr bool seq_lt(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) < 0; }
constexpr bool seq_le(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) <= 0; }

}  // namespace rdmasim
