// Virtual lanes (IBA 7.6): a link carries up to 15 data VLs, each with its
// own receive buffer and its own credits, so traffic on one VL never waits
// behind traffic on another. A packet's service level (SL, in the LRH)
// chooses its VL on every hop through the SL-to-VL table of the port it
// leaves by (IBA 7.6.6).
#pragma once

#include <array>
#include <cstdint>

namespace rdmasim {

// How many data VLs this model runs. A Port has 8 egress classes (one a VL),
// so `ib.vls: 15` runs on 8 data VLs: VL 8..14 would share queues and credits
// with VL 0..6, which is not IB.
inline constexpr uint8_t kMaxModelledDataVls = 8;

constexpr uint8_t modelled_data_vls(uint8_t configured) {
  if (configured == 0) return 1;
  return configured > kMaxModelledDataVls ? kMaxModelledDataVls : configured;
}

// One port's SLtoVLMappingTable (IBA 14.2.5.8): 16 service levels to a data VL.
class SlToVl {
 public:
  constexpr SlToVl() = default;
  // SL s runs on VL s mod `data_vls`: with 2 VLs, even SLs on VL 0, odd on VL 1.
  static constexpr SlToVl modulo(uint8_t data_vls) {
    SlToVl t;
    const uint8_t n = modelled_data_vls(data_vls);
    for (uint8_t sl = 0; sl < 16; ++sl) t.vl_[sl] = static_cast<uint8_t>(sl % n);
    return t;
  }
  constexpr uint8_t operator()(uint8_t sl) const { return vl_[sl & 0xF]; }
  constexpr void set(uint8_t sl, uint8_t vl) { vl_[sl & 0xF] = vl; }
  constexpr bool operator==(const SlToVl&) const = default;

 private:
  std::array<uint8_t, 16> vl_{};
};

}  // namespace rdmasim
