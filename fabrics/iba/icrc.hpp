// The Invariant CRC (IBA 7.8.1; RoCE: annex A16.4 for v1, A17.4.3.1 for v2).
//
// CRC-32 (IEEE 802.3, as core/crc.hpp) over the packet with the fields that
// switches and routers may change replaced by ones:
//   native IB, no GRH:   LRH.VL and BTH byte 4 (Resv8a / FECN, BECN)
//   native IB with GRH:  the whole LRH; GRH TClass, FlowLabel, HopLmt; BTH byte 4
//   RoCE v1:             8 bytes of ones in place of an LRH; the GRH and BTH as above
//   RoCE v2 over IPv4:   8 bytes of ones; IPv4 TOS, TTL, header checksum;
//                        UDP checksum; BTH byte 4
//   RoCE v2 over IPv6:   8 bytes of ones; IPv6 traffic class, flow label, hop
//                        limit; UDP checksum; BTH byte 4
// then the rest of the BTH, the extension headers, payload and pad. The ICRC
// goes on the wire least significant byte first (store_le32 of the value
// returned here; IBA Table 29 shows the same bytes).
//
// `frame` runs from the first IBA-relevant header (the IP header for RoCE v2,
// the GRH for RoCE v1, the LRH for native IB) to the end of the ICRC field:
// the last 4 bytes are the ICRC itself and are not covered. For native IB
// the VCRC is not part of `frame`. Only the headers are copied (to mask
// them); the payload is read in place. A frame too short to hold its
// headers and an ICRC gets 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace rdmasim {

inline constexpr size_t kIcrcLen = 4;
inline constexpr size_t kVcrcLen = 2;

enum class IcrcEncap : uint8_t { RoceV2Ipv4, RoceV2Ipv6, RoceV1, IbLocal, IbGlobal };

uint32_t compute_icrc(IcrcEncap encap, std::span<const std::byte> frame);
// Writes the ICRC into the last 4 bytes of `frame`.
void fill_icrc(IcrcEncap encap, std::span<std::byte> frame);
bool icrc_ok(IcrcEncap encap, std::span<const std::byte> frame);

inline uint32_t compute_icrc_roce_v2_ipv4(std::span<const std::byte> f) {
  return compute_icrc(IcrcEncap::RoceV2Ipv4, f);
}
inline uint32_t compute_icrc_roce_v2_ipv6(std::span<const std::byte> f) {
  return compute_icrc(IcrcEncap::RoceV2Ipv6, f);
}
inline uint32_t compute_icrc_roce_v1(std::span<const std::byte> f) {
  return compute_icrc(IcrcEncap::RoceV1, f);
}
inline uint32_t compute_icrc_ib_local(std::span<const std::byte> f) {
  return compute_icrc(IcrcEncap::IbLocal, f);
}
inline uint32_t compute_icrc_ib_global(std::span<const std::byte> f) {
  return compute_icrc(IcrcEncap::IbGlobal, f);
}
inline void fill_icrc_roce_v2_ipv4(std::span<std::byte> f) { fill_icrc(IcrcEncap::RoceV2Ipv4, f); }
inline void fill_icrc_roce_v2_ipv6(std::span<std::byte> f) { fill_icrc(IcrcEncap::RoceV2Ipv6, f); }
inline void fill_icrc_roce_v1(std::span<std::byte> f) { fill_icrc(IcrcEncap::RoceV1, f); }
inline void fill_icrc_ib_local(std::span<std::byte> f) { fill_icrc(IcrcEncap::IbLocal, f); }
inline void fill_icrc_ib_global(std::span<std::byte> f) { fill_icrc(IcrcEncap::IbGlobal, f); }

// Native IB, whole frame LRH through VCRC: fills the ICRC (local or global
// from LRH.LNH) and then the VCRC over LRH..ICRC (IBA 7.8.2), the latter low
// byte first as core/crc.hpp documents. A switch that changes the VL
// recomputes only the VCRC: fill_vcrc.
void fill_ib_crcs(std::span<std::byte> lrh_to_vcrc);
void fill_vcrc(std::span<std::byte> lrh_to_vcrc);

}  // namespace rdmasim
