// DDP segment headers (RFC 5041): the start of every ULPDU.
//
// Tagged buffer model, 14 bytes, for RDMA Write and Read Response:
//  0  T(1)=1 L(1) Rsvd(4) DV(2) | RsvdULP(8) | STag(32, bytes 2-5)
//  6  TO (64)
// Untagged buffer model, 18 bytes, for Send, Read Request, Terminate:
//  0  T(1)=0 L(1) Rsvd(4) DV(2) | RsvdULP(40, bytes 1-5)
//  6  QN(32) | 10 MSN(32) | 14 MO(32)
//
// L marks the last segment of a message; DV is the DDP version, 1. The
// first RsvdULP byte is RDMAP's control field (rdmap.hpp); the other 32
// untagged RsvdULP bits carry the STag of a Send with Invalidate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"

namespace rdmasim {

namespace ddp {
inline constexpr size_t kTaggedLen = 14;
inline constexpr size_t kUntaggedLen = 18;
inline constexpr uint8_t kVersion = 1;
inline constexpr uint8_t kFlagTagged = 0x80;
inline constexpr uint8_t kFlagLast = 0x40;
}  // namespace ddp

template <class B>
class DdpViewT {
  template <class>
  friend class DdpViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit DdpViewT(std::span<B> b) : b_(b) {}

 public:
  // Reading: the header that the T flag announces must fit.
  static std::optional<DdpViewT> check(std::span<B> b) {
    if (b.empty()) return std::nullopt;
    return check(b, (u8(b[0]) & ddp::kFlagTagged) != 0);
  }
  // Writing: room for the header of the given buffer model.
  static std::optional<DdpViewT> check(std::span<B> b, bool tagged) {
    if (b.size() < (tagged ? ddp::kTaggedLen : ddp::kUntaggedLen)) return std::nullopt;
    return DdpViewT(b);
  }
  operator DdpViewT<const std::byte>() const requires kMut { return DdpViewT<const std::byte>(b_); }

  bool tagged() const { return u8(b_[0]) & ddp::kFlagTagged; }
  bool last() const { return u8(b_[0]) & ddp::kFlagLast; }
  uint8_t reserved() const { return (u8(b_[0]) >> 2) & 0x0F; }
  uint8_t version() const { return u8(b_[0]) & 0x03; }
  uint8_t ulp_control() const { return u8(b_[1]); }  // RDMAP control field
  size_t header_len() const { return tagged() ? ddp::kTaggedLen : ddp::kUntaggedLen; }
  std::span<B> payload() const { return b_.subspan(header_len()); }

  // Tagged.
  uint32_t stag() const { return load_be32(b_.subspan(2, 4)); }
  uint64_t to() const { return load_be64(b_.subspan(6, 8)); }
  // Untagged.
  uint32_t ulp_word() const { return load_be32(b_.subspan(2, 4)); }
  uint32_t qn() const { return load_be32(b_.subspan(6, 4)); }
  uint32_t msn() const { return load_be32(b_.subspan(10, 4)); }
  uint32_t mo() const { return load_be32(b_.subspan(14, 4)); }

  void set_control(bool tagged, bool last) requires kMut {
    store_u8(b_, static_cast<uint8_t>((tagged ? ddp::kFlagTagged : 0) | (last ? ddp::kFlagLast : 0) |
                                      ddp::kVersion));
  }
  void set_ulp_control(uint8_t v) requires kMut { store_u8(b_.subspan(1), v); }
  void set_stag(uint32_t v) requires kMut { store_be32(b_.subspan(2, 4), v); }
  void set_to(uint64_t v) requires kMut { store_be64(b_.subspan(6, 8), v); }
  void set_ulp_word(uint32_t v) requires kMut { store_be32(b_.subspan(2, 4), v); }
  void set_qn(uint32_t v) requires kMut { store_be32(b_.subspan(6, 4), v); }
  void set_msn(uint32_t v) requires kMut { store_be32(b_.subspan(10, 4), v); }
  void set_mo(uint32_t v) requires kMut { store_be32(b_.subspan(14, 4), v); }
};

using DdpView = DdpViewT<std::byte>;
using ConstDdpView = DdpViewT<const std::byte>;

// The fields of either DDP header.
struct DdpHeader {
  bool tagged = false;
  bool last = true;
  uint8_t version = ddp::kVersion;
  uint8_t ulp_control = 0;  // RDMAP control field
  // Tagged buffer model.
  uint32_t stag = 0;
  uint64_t to = 0;
  // Untagged buffer model.
  uint32_t ulp_word = 0;  // reserved, or the STag to invalidate
  uint32_t qn = 0, msn = 0, mo = 0;

  size_t length() const { return tagged ? ddp::kTaggedLen : ddp::kUntaggedLen; }

  static DdpHeader parse(ConstDdpView v) {
    DdpHeader h;
    h.tagged = v.tagged();
    h.last = v.last();
    h.version = v.version();
    h.ulp_control = v.ulp_control();
    if (h.tagged) {
      h.stag = v.stag();
      h.to = v.to();
    } else {
      h.ulp_word = v.ulp_word();
      h.qn = v.qn();
      h.msn = v.msn();
      h.mo = v.mo();
    }
    return h;
  }
  // Writes DV = 1 whatever `version` says: the model speaks only DDP version 1.
  // `b` must hold length() bytes.
  void emit(std::span<std::byte> b) const {
    DdpView v = *DdpView::check(b, tagged);
    v.set_control(tagged, last);
    v.set_ulp_control(ulp_control);
    if (tagged) {
      v.set_stag(stag);
      v.set_to(to);
    } else {
      v.set_ulp_word(ulp_word);
      v.set_qn(qn);
      v.set_msn(msn);
      v.set_mo(mo);
    }
  }
  bool operator==(const DdpHeader&) const = default;
};

}  // namespace rdmasim
