// MPA request and reply frames (RFC 5044, connection setup): the first bytes each
// side sends after the TCP handshake, before any FPDU.
//
//  0  Key (16 bytes): "MPA ID Req Frame" or "MPA ID Rep Frame"
// 16  M(1) C(1) R(1) Res(5) | Rev(8) | PD_Length(16)
// 20  Private Data (PD_Length bytes, at most 512)
//
// M: the sender wants markers in the FPDUs sent *to* it. C: the sender
// wants CRCs; CRCs are used in both directions when either side asks.
// R (reply only): the responder rejects the connection. Rev is 1 (RFC 5044)
// or 2 (RFC 6581). With Rev 2 the first Res bit, E (enhanced RDMA connection
// establishment), says the private data begins with IRD and ORD:
//
//  0  P(1) Z(1) IRD(14) | W(1) R(1) ORD(14)
//
// IRD: Read Requests the sender serves at once; ORD: Read Requests it has
// outstanding. P: peer-to-peer mode, which asks for a "ready to receive"
// message, a zero-length Send (Z), Write (W) or Read (R). The model never
// asks for peer-to-peer mode (siw's default) and answers a request for it
// without P: no RTR message is sent or awaited.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

#include "core/bytes.hpp"

namespace rdmasim {

namespace mpa {
inline constexpr size_t kFrameHeaderLen = 20;
inline constexpr size_t kMaxPrivateData = 512;
inline constexpr uint8_t kRevision1 = 1;  // RFC 5044
inline constexpr uint8_t kRevision2 = 2;  // RFC 6581
inline constexpr uint8_t kFlagEnhanced = 0x10;
inline constexpr uint8_t kFlagMarkers = 0x80;
inline constexpr uint8_t kFlagCrc = 0x40;
inline constexpr uint8_t kFlagReject = 0x20;
inline constexpr std::string_view kRequestKey = "MPA ID Req Frame";
inline constexpr std::string_view kReplyKey = "MPA ID Rep Frame";
static_assert(kRequestKey.size() == 16 && kReplyKey.size() == 16);

inline bool key_is(std::span<const std::byte> b, std::string_view key) {
  if (b.size() < key.size()) return false;
  for (size_t i = 0; i < key.size(); ++i)
    if (u8(b[i]) != static_cast<uint8_t>(key[i])) return false;
  return true;
}
// Bytes that begin with either key: a request or a reply frame.
inline bool is_frame(std::span<const std::byte> b) { return key_is(b, kRequestKey) || key_is(b, kReplyKey); }
}  // namespace mpa

template <class B>
class MpaFrameViewT {
  template <class>
  friend class MpaFrameViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit MpaFrameViewT(std::span<B> b) : b_(b) {}

 public:
  // The 20-byte header must be present; complete() says whether the private data is too.
  static std::optional<MpaFrameViewT> check(std::span<B> b) {
    if (b.size() < mpa::kFrameHeaderLen) return std::nullopt;
    return MpaFrameViewT(b);
  }
  operator MpaFrameViewT<const std::byte>() const requires kMut { return MpaFrameViewT<const std::byte>(b_); }

  bool is_request() const { return mpa::key_is(b_, mpa::kRequestKey); }
  bool is_reply() const { return mpa::key_is(b_, mpa::kReplyKey); }
  uint8_t flags() const { return u8(b_[16]); }
  bool markers() const { return flags() & mpa::kFlagMarkers; }
  bool crc() const { return flags() & mpa::kFlagCrc; }
  bool reject() const { return flags() & mpa::kFlagReject; }
  bool enhanced() const { return flags() & mpa::kFlagEnhanced; }
  uint8_t reserved() const { return flags() & 0x0F; }
  uint8_t revision() const { return u8(b_[17]); }
  uint16_t pd_length() const { return load_be16(b_.subspan(18, 2)); }
  size_t frame_len() const { return mpa::kFrameHeaderLen + pd_length(); }
  bool complete() const { return b_.size() >= frame_len(); }
  std::span<B> private_data() const { return b_.subspan(mpa::kFrameHeaderLen, pd_length()); }

  void set_key(std::string_view key) requires kMut {
    for (size_t i = 0; i < 16; ++i) b_[i] = std::byte{static_cast<uint8_t>(key[i])};
  }
  void set_flags(uint8_t v) requires kMut { store_u8(b_.subspan(16), v); }
  void set_revision(uint8_t v) requires kMut { store_u8(b_.subspan(17), v); }
  void set_pd_length(uint16_t v) requires kMut { store_be16(b_.subspan(18, 2), v); }
};

using MpaFrameView = MpaFrameViewT<std::byte>;
using ConstMpaFrameView = MpaFrameViewT<const std::byte>;

// The header fields of a request or reply (the private data is carried apart).
struct MpaFrameHeader {
  bool request = true;
  bool markers = false;
  bool crc = true;
  bool reject = false;
  uint8_t revision = mpa::kRevision1;
  uint16_t pd_length = 0;
  bool enhanced = false;  // Rev 2: the private data starts with MpaIrdOrd

  // nullopt unless the key is one of the two.
  static std::optional<MpaFrameHeader> parse(ConstMpaFrameView v) {
    if (!v.is_request() && !v.is_reply()) return std::nullopt;
    return MpaFrameHeader{v.is_request(), v.markers(),   v.crc(),     v.reject(),
                          v.revision(),   v.pd_length(), v.enhanced()};
  }
  void emit(MpaFrameView v) const {
    v.set_key(request ? mpa::kRequestKey : mpa::kReplyKey);
    v.set_flags(static_cast<uint8_t>((markers ? mpa::kFlagMarkers : 0) | (crc ? mpa::kFlagCrc : 0) |
                                     (reject ? mpa::kFlagReject : 0) | (enhanced ? mpa::kFlagEnhanced : 0)));
    v.set_revision(revision);
    v.set_pd_length(pd_length);
  }
  bool operator==(const MpaFrameHeader&) const = default;
};

// RFC 6581 enhanced connection establishment data: the first 4 bytes of the
// private data of a Rev 2 request or reply with E set.
struct MpaIrdOrd {
  static constexpr size_t kLen = 4;
  static constexpr uint16_t kMask = 0x3FFF;
  uint16_t ird = 0, ord = 0;  // 14 bits each
  bool peer_to_peer = false;
  bool zero_length_send_rtr = false, write_rtr = false, read_rtr = false;

  static std::optional<MpaIrdOrd> parse(std::span<const std::byte> b) {
    if (b.size() < kLen) return std::nullopt;
    const uint16_t i = load_be16(b.first(2)), o = load_be16(b.subspan(2, 2));
    return MpaIrdOrd{static_cast<uint16_t>(i & kMask),
                     static_cast<uint16_t>(o & kMask),
                     (i & 0x8000) != 0,
                     (i & 0x4000) != 0,
                     (o & 0x8000) != 0,
                     (o & 0x4000) != 0};
  }
  void emit(std::span<std::byte> b) const {
    store_be16(b.first(2), static_cast<uint16_t>((ird & kMask) | (peer_to_peer ? 0x8000 : 0) |
                                                 (zero_length_send_rtr ? 0x4000 : 0)));
    store_be16(b.subspan(2, 2),
               static_cast<uint16_t>((ord & kMask) | (write_rtr ? 0x8000 : 0) | (read_rtr ? 0x4000 : 0)));
  }
  bool operator==(const MpaIrdOrd&) const = default;
};

}  // namespace rdmasim
