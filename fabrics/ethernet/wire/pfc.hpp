// Priority-based Flow Control (IEEE 802.1Qbb, carried as an IEEE 802.3
// annex 31D MAC Control frame), the payload after the Ethernet header:
//
//  0  MAC Control opcode 0x0101 (class-based flow control)
//  2  priority-enable vector: high byte reserved zero, bit i = class i
//  4  time[0] .. time[7], 16 bits each: pause quanta of 512 bit times
//
// The frame goes to the reserved multicast 01:80:C2:00:00:01 with EtherType
// 0x8808 and is padded to the 60-byte minimum (64 with the FCS, which
// captures leave out). tshark shows it as "MAC Control, Class Based Flow
// Control [CBFC] Pause" with fields macc.cbfc.enbv and macc.cbfc.pause_time.c0..c7.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"
#include "core/units.hpp"
#include "fabrics/ethernet/wire/ethernet.hpp"

namespace rdmasim {

inline constexpr MacAddress kPfcDestination{{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01}};
inline constexpr uint16_t kMacControlOpcodePfc = 0x0101;
inline constexpr size_t kPfcFrameLen = EthernetView::kMinFrameLen;  // 14 + 20 + 26 bytes of zero

// One pause quantum lasts 512 bit times at the link rate (802.3 31B.2).
constexpr Time pfc_quanta_to_time(uint16_t quanta, DataRate rate) {
  return rate.tx_time(uint64_t{quanta} * 64);
}
// The smallest number of quanta lasting at least `t`, capped at 0xFFFF.
constexpr uint16_t pfc_time_to_quanta(Time t, DataRate rate) {
  const Time quantum = rate.tx_time(64);
  if (t.count() <= 0) return 0;
  const int64_t q = (t.count() + quantum.count() - 1) / quantum.count();
  return static_cast<uint16_t>(std::min<int64_t>(q, 0xFFFF));
}

template <class B>
class PfcViewT {
  template <class>
  friend class PfcViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit PfcViewT(std::span<B> b) : b_(b) {}

 public:
  static constexpr size_t kLen = 20;

  static std::optional<PfcViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return PfcViewT(b);
  }
  operator PfcViewT<const std::byte>() const requires kMut { return PfcViewT<const std::byte>(b_); }

  bool valid() const { return opcode() == kMacControlOpcodePfc; }

  uint16_t opcode() const { return load_be16(b_.first(2)); }
  uint8_t class_enable() const { return u8(b_[3]); }
  bool enabled(unsigned cls) const { return class_enable() >> cls & 1; }
  uint16_t quanta(unsigned cls) const { return load_be16(b_.subspan(4 + 2 * cls, 2)); }

  void set_opcode(uint16_t v) requires kMut { store_be16(b_.first(2), v); }
  void set_class_enable(uint8_t v) requires kMut { store_be16(b_.subspan(2, 2), v); }
  void set_quanta(unsigned cls, uint16_t v) requires kMut { store_be16(b_.subspan(4 + 2 * cls, 2), v); }
};

using PfcView = PfcViewT<std::byte>;
using ConstPfcView = PfcViewT<const std::byte>;

struct PfcFrame {
  static constexpr size_t kLen = PfcView::kLen;

  uint8_t class_enable = 0;  // bit i: time[i] is meaningful (0 quanta = resume)
  std::array<uint16_t, 8> quanta{};

  static PfcFrame parse(ConstPfcView v) {
    PfcFrame f{v.class_enable(), {}};
    for (unsigned i = 0; i < 8; ++i) f.quanta[i] = v.quanta(i);
    return f;
  }
  void emit(PfcView v) const {
    v.set_opcode(kMacControlOpcodePfc);
    v.set_class_enable(class_enable);
    for (unsigned i = 0; i < 8; ++i) v.set_quanta(i, quanta[i]);
  }
  // The whole frame: Ethernet header from `src` to kPfcDestination, this
  // payload, zero padding. `frame` must hold kPfcFrameLen bytes.
  void emit_frame(std::span<std::byte> frame, const MacAddress& src) const {
    auto eth = *EthernetView::check(frame);
    EthernetHeader{kPfcDestination, src, ethertype::kMacControl}.emit(eth);
    emit(*PfcView::check(eth.payload()));
    std::fill(frame.begin() + EthernetView::kLen + kLen, frame.begin() + kPfcFrameLen, std::byte{0});
  }
  bool operator==(const PfcFrame&) const = default;
};

}  // namespace rdmasim
