// IEEE 802.1Q VLAN tag. On the wire the tag is TPID (0x8100) followed by the
// TCI; the outer Ethernet header's EtherType field holds the TPID, so this
// view covers the 4 bytes after it: TCI and the encapsulated EtherType.
//
//  0  PCP(3) DEI(1) VID(12)      802.1Q 9.6: priority code point, drop eligible, VLAN id
//  2  EtherType of the payload
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"
#include "fabrics/ethernet/wire/ethernet.hpp"

namespace rdmasim {

template <class B>
class VlanViewT {
  template <class>
  friend class VlanViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit VlanViewT(std::span<B> b) : b_(b) {}
  uint16_t tci() const { return load_be16(b_.first(2)); }

 public:
  static constexpr size_t kLen = 4;
  static constexpr uint16_t kTpid = ethertype::kVlan;

  static std::optional<VlanViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return VlanViewT(b);
  }
  operator VlanViewT<const std::byte>() const requires kMut { return VlanViewT<const std::byte>(b_); }

  uint8_t pcp() const { return static_cast<uint8_t>(tci() >> 13); }
  bool dei() const { return tci() & 0x1000; }
  uint16_t vid() const { return tci() & 0x0FFF; }
  uint16_t ethertype() const { return load_be16(b_.subspan(2, 2)); }
  std::span<B> header() const { return b_.first(kLen); }
  std::span<B> payload() const { return b_.subspan(kLen); }

  void set_tci(uint8_t pcp, bool dei, uint16_t vid) requires kMut {
    store_be16(b_.first(2), static_cast<uint16_t>((pcp & 0x7) << 13 | (dei ? 0x1000 : 0) | (vid & 0x0FFF)));
  }
  void set_pcp(uint8_t pcp) requires kMut { set_tci(pcp, dei(), vid()); }
  void set_ethertype(uint16_t v) requires kMut { store_be16(b_.subspan(2, 2), v); }
};

using VlanView = VlanViewT<std::byte>;
using ConstVlanView = VlanViewT<const std::byte>;

struct VlanTag {
  static constexpr size_t kLen = VlanView::kLen;

  uint8_t pcp = 0;  // 802.1p priority: the PFC class
  bool dei = false;
  uint16_t vid = 0;
  uint16_t ethertype = 0;  // of what follows the tag

  static VlanTag parse(ConstVlanView v) { return {v.pcp(), v.dei(), v.vid(), v.ethertype()}; }
  void emit(VlanView v) const {
    v.set_tci(pcp, dei, vid);
    v.set_ethertype(ethertype);
  }
  bool operator==(const VlanTag&) const = default;
};

}  // namespace rdmasim
