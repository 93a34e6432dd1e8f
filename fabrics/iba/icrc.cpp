#include "fabrics/iba/icrc.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "core/bytes.hpp"
#include "core/crc.hpp"

namespace rdmasim {

namespace {

constexpr size_t kOnesLen = 8;  // stand-in for an LRH (A16.4, A17.4.3.1)
constexpr size_t kIpv4MaxLen = 60;
constexpr size_t kIpv6Len = 40;  // also the GRH
constexpr size_t kUdpLen = 8;
constexpr size_t kLrhLen = 8;
constexpr size_t kBthLen = 12;
constexpr size_t kBthVariantByte = 4;

// The masked copy of the headers, at most ones + IPv4 with options + UDP + BTH.
struct Pseudo {
  std::array<std::byte, kOnesLen + kIpv4MaxLen + kUdpLen + kBthLen> buf;
  size_t len = 0;

  std::span<std::byte> append(std::span<const std::byte> src) {
    std::span<std::byte> dst(buf.data() + len, src.size());
    std::memcpy(dst.data(), src.data(), src.size());
    len += src.size();
    return dst;
  }
  void append_ones(size_t n) {
    std::fill_n(buf.data() + len, n, std::byte{0xFF});
    len += n;
  }
};

void set_ones(std::span<std::byte> s, size_t off, size_t n) {
  std::fill_n(s.data() + off, n, std::byte{0xFF});
}

// IPv6 header or GRH: traffic class, flow label (the low 28 bits of word 0)
// and hop limit are variant.
void mask_ipv6(std::span<std::byte> h) {
  h[0] |= std::byte{0x0F};
  set_ones(h, 1, 3);
  set_ones(h, 7, 1);
}

void mask_bth(std::span<std::byte> h) { set_ones(h, kBthVariantByte, 1); }

// Masks the headers into `p` and returns where the unmasked rest starts in
// `frame`, or 0 when the frame is too short.
size_t build_pseudo(IcrcEncap encap, std::span<const std::byte> frame, Pseudo& p) {
  size_t hdr = 0;  // bytes of `frame` taken into the pseudo header
  switch (encap) {
    case IcrcEncap::RoceV2Ipv4: {
      if (frame.empty()) return 0;
      const size_t ihl = size_t{u8(frame[0]) & 0x0Fu} * 4;
      if (ihl < 20) return 0;
      hdr = ihl + kUdpLen + kBthLen;
      if (frame.size() < hdr + kIcrcLen) return 0;
      p.append_ones(kOnesLen);
      auto ip = p.append(frame.first(ihl));
      set_ones(ip, 1, 1);   // TOS: DSCP and ECN
      set_ones(ip, 8, 1);   // TTL
      set_ones(ip, 10, 2);  // header checksum
      auto udp = p.append(frame.subspan(ihl, kUdpLen));
      set_ones(udp, 6, 2);
      mask_bth(p.append(frame.subspan(ihl + kUdpLen, kBthLen)));
      return hdr;
    }
    case IcrcEncap::RoceV2Ipv6: {
      hdr = kIpv6Len + kUdpLen + kBthLen;
      if (frame.size() < hdr + kIcrcLen) return 0;
      p.append_ones(kOnesLen);
      mask_ipv6(p.append(frame.first(kIpv6Len)));
      auto udp = p.append(frame.subspan(kIpv6Len, kUdpLen));
      set_ones(udp, 6, 2);
      mask_bth(p.append(frame.subspan(kIpv6Len + kUdpLen, kBthLen)));
      return hdr;
    }
    case IcrcEncap::RoceV1:
    case IcrcEncap::IbGlobal: {
      // RoCE v1 has no LRH; a global IB packet's LRH is entirely variant.
      // Both get 8 bytes of ones, then the GRH.
      const size_t lrh = encap == IcrcEncap::IbGlobal ? kLrhLen : 0;
      hdr = lrh + kIpv6Len + kBthLen;
      if (frame.size() < hdr + kIcrcLen) return 0;
      p.append_ones(kOnesLen);
      mask_ipv6(p.append(frame.subspan(lrh, kIpv6Len)));
      mask_bth(p.append(frame.subspan(lrh + kIpv6Len, kBthLen)));
      return hdr;
    }
    case IcrcEncap::IbLocal: {
      hdr = kLrhLen + kBthLen;
      if (frame.size() < hdr + kIcrcLen) return 0;
      auto lrh = p.append(frame.first(kLrhLen));
      lrh[0] |= std::byte{0xF0};  // VL
      mask_bth(p.append(frame.subspan(kLrhLen, kBthLen)));
      return hdr;
    }
  }
  return 0;
}

}  // namespace

uint32_t compute_icrc(IcrcEncap encap, std::span<const std::byte> frame) {
  Pseudo p;
  const size_t hdr = build_pseudo(encap, frame, p);
  if (hdr == 0) return 0;
  uint32_t state = crc32_update(kCrcInit, std::span<const std::byte>(p.buf.data(), p.len));
  state = crc32_update(state, frame.subspan(hdr, frame.size() - kIcrcLen - hdr));
  return crc32_finish(state);
}

void fill_icrc(IcrcEncap encap, std::span<std::byte> frame) {
  if (frame.size() < kIcrcLen) return;
  store_le32(frame.last(kIcrcLen), compute_icrc(encap, frame));
}

bool icrc_ok(IcrcEncap encap, std::span<const std::byte> frame) {
  return frame.size() >= kIcrcLen && load_le32(frame.last(kIcrcLen)) == compute_icrc(encap, frame);
}

void fill_vcrc(std::span<std::byte> f) {
  if (f.size() < kLrhLen + kVcrcLen) return;
  const uint16_t v = vcrc16(f.first(f.size() - kVcrcLen));
  f[f.size() - 2] = std::byte(v);
  f[f.size() - 1] = std::byte(v >> 8);
}

void fill_ib_crcs(std::span<std::byte> f) {
  if (f.size() < kLrhLen + kVcrcLen) return;
  const bool global = (u8(f[1]) & 0x3) == 3;  // LRH.LNH (IBA 7.7.5)
  fill_icrc(global ? IcrcEncap::IbGlobal : IcrcEncap::IbLocal, f.first(f.size() - kVcrcLen));
  fill_vcrc(f);
}

}  // namespace rdmasim
