// IRN's extension header on the wire (docs/reliability.md, "IRN loss
// recovery"): an IPv4 option (RFC 791 section 3.1) of type 0x1E -- copy 0,
// class 0 (control), number 30, the experimental number of RFC 4727 --
// 28 bytes long, right after the 20-byte header (IHL 12):
//   0 type, 1 length 28, 2 kind (1 WRITE, 2 SEND, 3 SACK), 3 zero,
//   4..7 recv_WQE_SN (SEND, WRITE with immediate) or the selectively
//        acknowledged PSN (SACK, in a NACK),
//   8..11 the bytes of the message before this packet,
//   12..27 a WRITE packet's own RETH: virtual address of its first byte,
//          R_Key, the message's DMA length (IBA 9.3.3 layout).
// The IBA headers stay exactly as IBA defines them, so tshark dissects the
// transport as usual and shows "Unknown (0x1e) (28 bytes)" among the IP
// options, which is not an error.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/bytes.hpp"

namespace rdmasim {

// What IRN adds to a packet (fabrics/iba/transport/loss_recovery/irn.hpp),
// as IrnOption reads and writes it.
struct IrnExt {
  enum Kind : uint8_t { None = 0, Write = 1, Send = 2, Sack = 3 };
  Kind kind = None;
  uint32_t sn = 0;       // Send, and a WRITE with immediate: recv_WQE_SN; Sack: the PSN it acks
  uint32_t offset = 0;   // bytes of the message before this packet
  uint64_t va = 0;       // Write: where this packet's first byte goes
  uint32_t rkey = 0;     // Write: the R_Key
  uint32_t dma_len = 0;  // Write: the message's DMA length
  bool operator==(const IrnExt&) const = default;
};

struct IrnOption {
  static constexpr uint8_t kType = 0x1E;
  static constexpr size_t kLen = 28;

  static void emit(std::span<std::byte> b, const IrnExt& e) {
    b[0] = std::byte{kType};
    b[1] = std::byte{kLen};
    b[2] = std::byte{static_cast<uint8_t>(e.kind)};
    b[3] = std::byte{0};
    store_be32(b.subspan(4), e.sn);
    store_be32(b.subspan(8), e.offset);
    store_be64(b.subspan(12), e.va);
    store_be32(b.subspan(20), e.rkey);
    store_be32(b.subspan(24), e.dma_len);
  }
  // The option at the start of `options` (an IPv4 header's), if it is IRN's.
  static std::optional<IrnExt> parse(std::span<const std::byte> options) {
    if (options.size() < kLen || u8(options[0]) != kType || u8(options[1]) != kLen) return std::nullopt;
    const uint8_t kind = u8(options[2]);
    if (kind < IrnExt::Write || kind > IrnExt::Sack) return std::nullopt;
    IrnExt e;
    e.kind = static_cast<IrnExt::Kind>(kind);
    e.sn = load_be32(options.subspan(4));
    e.offset = load_be32(options.subspan(8));
    e.va = load_be64(options.subspan(12));
    e.rkey = load_be32(options.subspan(20));
    e.dma_len = load_be32(options.subspan(24));
    return e;
  }
};

}  // namespace rdmasim
