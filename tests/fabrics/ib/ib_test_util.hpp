// Pieces the ib tests share: an independent ICRC/VCRC (bit by bit, written
// from IBA 7.8 rather than calling fabrics/iba/icrc.hpp), native IB frames
// built by hand, and an end node that keeps what it receives and frees its
// receive buffer only when told.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <span>
#include <utility>
#include <vector>

#include "core/bytes.hpp"
#include "core/packet.hpp"
#include "fabrics/ib/wire/lrh.hpp"
#include "fabrics/iba/opcodes.hpp"
#include "fabrics/iba/transport/headers.hpp"
#include "nodes/node.hpp"

namespace rdmasim::test {

inline uint32_t bit_crc32(std::span<const std::byte> b, uint32_t c = 0xFFFFFFFF) {
  for (std::byte x : b) {
    c ^= static_cast<uint8_t>(x);
    for (int i = 0; i < 8; ++i) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
  }
  return c;
}
inline uint16_t bit_crc16_iba(std::span<const std::byte> b) {
  uint16_t c = 0xFFFF;
  for (std::byte x : b) {
    c ^= static_cast<uint8_t>(x);
    for (int i = 0; i < 8; ++i) c = static_cast<uint16_t>((c >> 1) ^ (0xD008u & (0u - (c & 1u))));
  }
  return static_cast<uint16_t>(c ^ 0xFFFF);
}

// IBA 7.8.1: the ICRC of a native IB frame (LRH through VCRC): local packets
// mask LRH.VL, global ones the whole LRH and GRH TClass, FlowLabel, HopLmt;
// both mask BTH byte 4. Returns the value carried least significant byte first.
inline uint32_t ref_ib_icrc(std::span<const std::byte> frame) {
  std::vector<std::byte> f(frame.begin(), frame.end() - 6);  // up to the ICRC
  const bool global = (static_cast<uint8_t>(f[1]) & 3) == 3;
  size_t bth = 8;
  if (global) {
    for (size_t i = 0; i < 8; ++i) f[i] = std::byte{0xFF};
    f[8] |= std::byte{0x0F};
    f[9] = f[10] = f[11] = std::byte{0xFF};
    f[15] = std::byte{0xFF};
    bth = 48;
  } else {
    f[0] |= std::byte{0xF0};
  }
  f[bth + 4] = std::byte{0xFF};
  return ~bit_crc32(f);
}
inline uint32_t carried_icrc(std::span<const std::byte> frame) {
  return load_le32(frame.subspan(frame.size() - 6, 4));
}
// The VCRC as carried: low byte first (core/crc.hpp).
inline uint16_t carried_vcrc(std::span<const std::byte> frame) {
  return static_cast<uint16_t>(static_cast<uint8_t>(frame[frame.size() - 2]) |
                               static_cast<uint8_t>(frame[frame.size() - 1]) << 8);
}
inline bool ib_crcs_ok(std::span<const std::byte> frame) {
  return carried_icrc(frame) == ref_ib_icrc(frame) &&
         carried_vcrc(frame) == bit_crc16_iba(frame.first(frame.size() - 2));
}

// A local (no GRH) RC SEND ONLY frame: LRH, BTH, payload of `len` bytes of
// `fill`, pad, ICRC and VCRC left zero with crc_pending, as an HCA queues it.
inline Packet ib_frame(PacketPool& pool, uint16_t dlid, uint16_t slid, uint8_t sl, uint8_t vl, size_t len,
                       uint32_t psn = 0, uint8_t fill = 0xAB) {
  Packet p = pool.make(64);
  std::memset(p.push_back(len).data(), fill, len);
  IbaHeaders h;
  h.opcode = RC_SEND_ONLY;
  h.dest_qp = 0x12;
  h.psn = psn;
  iba_emit(p, h);
  std::memset(p.push_back(6).data(), 0, 6);
  Lrh lrh{vl, 0, sl, Lnh::IbaLocal, dlid, lrh_pkt_len(p.size() + 8 - 2), slid};
  lrh.emit(*LrhView::check(p.push_front(8)));
  p.meta().vl = vl;
  p.meta().priority = sl;
  p.meta().crc_pending = true;
  return p;
}

// An end node on one port. It holds every frame it receives in its receive
// buffer (the port's ingress meter) until free() or free_all(), or frees at
// once when `frees_at_once`.
class Endpoint final : public Node {
 public:
  Endpoint(Simulator& sim, std::string name, bool frees_at_once = false)
      : Node(sim, std::move(name)), frees_at_once_(frees_at_once) {
    add_port();
  }
  void receive(Port& in, Packet p) override {
    arrivals.push_back(sim_.now());
    if (frees_at_once_)
      in.release_ingress(p.meta().vl & 7, p.size());
    else
      held.push_back(p.size() | uint64_t{p.meta().vl} << 32);
    got.push_back(std::move(p));
  }
  // Frees the oldest held frame's buffer.
  void free_one() {
    const uint64_t h = held.front();
    held.pop_front();
    port(0).release_ingress(static_cast<uint8_t>(h >> 32), h & 0xFFFFFFFF);
  }
  void free_all() {
    while (!held.empty()) free_one();
  }
  // Frees every held frame of one VL.
  void free_vl(uint8_t vl) {
    std::deque<uint64_t> keep;
    for (uint64_t h : held) {
      if ((h >> 32) == vl)
        port(0).release_ingress(vl, h & 0xFFFFFFFF);
      else
        keep.push_back(h);
    }
    held = std::move(keep);
  }

  std::vector<Packet> got;
  std::vector<Time> arrivals;
  std::deque<uint64_t> held;  // size | vl << 32

 private:
  bool frees_at_once_;
};

}  // namespace rdmasim::test
