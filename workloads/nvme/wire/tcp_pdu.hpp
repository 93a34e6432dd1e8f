// NVMe/TCP PDUs (NVM Express TCP Transport Specification 1.0, 3.6; TP 8000
// of NVMe-oF 1.1). Every PDU starts with the common header (CH), 8 bytes:
//
//  0  PDU-Type   1 FLAGS   2 HLEN   3 PDO   4 PLEN(32)
//
// then the PDU specific header (PSH) up to HLEN, a header digest (4 bytes,
// when HDGSTF), pad to PDO, the PDU data, a data digest (4 bytes, when
// DDGSTF). PLEN counts all of it. The PSHs:
//
//  ICReq  (0x00, HLEN 128)  8 PFV(16) 10 HPDA 11 DGST(bit 0 HDGST_ENABLE, bit 1 DDGST_ENABLE) 12 MAXR2T(32,
//  0's based) ICResp (0x01, HLEN 128)  8 PFV(16) 10 CPDA 11 DGST 12 MAXH2CDATA(32) CapsuleCmd  (0x04, HLEN
//  72)  8 the 64-byte SQE; in-capsule data at PDO CapsuleResp (0x05, HLEN 24)  8 the 16-byte CQE H2CData
//  (0x06, HLEN 24)  8 CCCID(16) 10 TTAG(16) 12 DATAO(32) 16 DATAL(32) 20 reserved C2HData (0x07, HLEN 24)  8
//  CCCID(16) 10 reserved 12 DATAO(32) 16 DATAL(32) 20 reserved R2T     (0x09, HLEN 24)  8 CCCID(16) 10
//  TTAG(16) 12 R2TO(32) 16 R2TL(32) 20 reserved
//
// FLAGS: bit 0 HDGSTF, bit 1 DDGSTF, bit 2 LAST_PDU (H2CData, C2HData),
// bit 3 SUCCESS (C2HData: no CapsuleResp follows). Digests are CRC32C
// (core/crc.hpp), the header's over the HLEN bytes before it, the data's
// over the PDU data; written least significant byte first, as Linux's
// nvme-tcp and nvmet-tcp do. ICReq and ICResp never carry digests. All
// fields are little-endian.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "core/bytes.hpp"
#include "core/crc.hpp"

namespace rdmasim::nvme::tcp {

enum class PduType : uint8_t {
  ic_req = 0x00,
  ic_resp = 0x01,
  h2c_term_req = 0x02,
  c2h_term_req = 0x03,
  capsule_cmd = 0x04,
  capsule_resp = 0x05,
  h2c_data = 0x06,
  c2h_data = 0x07,
  r2t = 0x09,
};

inline constexpr uint8_t kFlagHdgst = 0x01, kFlagDdgst = 0x02, kFlagLast = 0x04, kFlagSuccess = 0x08;
inline constexpr uint8_t kDgstHeader = 0x01, kDgstData = 0x02;  // ICReq/ICResp DGST bits
inline constexpr size_t kChLen = 8, kIcLen = 128, kCmdHlen = 72, kRespHlen = 24, kDataHlen = 24;
inline constexpr size_t kDigestLen = 4;

// The common header.
struct Ch {
  PduType type = PduType::ic_req;
  uint8_t flags = 0;
  uint8_t hlen = 0, pdo = 0;
  uint32_t plen = 0;

  bool hdgst() const { return flags & kFlagHdgst; }
  bool ddgst() const { return flags & kFlagDdgst; }
  // Bytes of PDU data: what PLEN holds beyond the header, its digest and the data digest.
  uint32_t data_len() const {
    const uint32_t start = pdo ? pdo : hlen + (hdgst() ? kDigestLen : 0);
    const uint32_t end = plen - (ddgst() && plen > start ? kDigestLen : 0);
    return end > start ? end - start : 0;
  }
  uint32_t data_offset() const { return pdo ? pdo : hlen + (hdgst() ? kDigestLen : 0); }

  static std::optional<Ch> parse(std::span<const std::byte> b) {
    if (b.size() < kChLen) return std::nullopt;
    Ch c{static_cast<PduType>(u8(b[0])), u8(b[1]), u8(b[2]), u8(b[3]), load_le32(b.subspan(4, 4))};
    if (c.hlen < kChLen || c.plen < c.hlen || (c.pdo && c.pdo < c.hlen)) return std::nullopt;
    return c;
  }
  void emit(std::span<std::byte> b) const {
    b[0] = std::byte(static_cast<uint8_t>(type));
    b[1] = std::byte(flags);
    b[2] = std::byte(hlen);
    b[3] = std::byte(pdo);
    store_le32(b.subspan(4, 4), plen);
  }
  bool operator==(const Ch&) const = default;
};

// ICReq and ICResp: the connection's parameters (PFV 0, no alignment).
struct Ic {
  bool request = true;
  uint8_t digests = 0;    // kDgstHeader | kDgstData
  uint32_t limit = 0;     // ICReq: MAXR2T (0's based); ICResp: MAXH2CDATA (bytes)
  uint8_t alignment = 0;  // HPDA or CPDA
  uint16_t pfv = 0;

  static std::optional<Ic> parse(const Ch& ch, std::span<const std::byte> pdu) {
    if ((ch.type != PduType::ic_req && ch.type != PduType::ic_resp) || ch.hlen != kIcLen ||
        ch.plen != kIcLen || pdu.size() < kIcLen)
      return std::nullopt;
    return Ic{ch.type == PduType::ic_req, u8(pdu[11]), load_le32(pdu.subspan(12, 4)), u8(pdu[10]),
              load_le16(pdu.subspan(8, 2))};
  }
  void emit(std::span<std::byte> pdu) const {
    std::fill(pdu.begin(), pdu.begin() + kIcLen, std::byte{0});
    Ch{request ? PduType::ic_req : PduType::ic_resp, 0, kIcLen, 0, kIcLen}.emit(pdu);
    store_le16(pdu.subspan(8, 2), pfv);
    pdu[10] = std::byte(alignment);
    pdu[11] = std::byte(digests);
    store_le32(pdu.subspan(12, 4), limit);
  }
  bool operator==(const Ic&) const = default;
};

// H2CData, C2HData and R2T: a transfer of a command's data.
struct DataHeader {
  uint16_t cccid = 0;
  uint16_t ttag = 0;    // H2CData and R2T; reserved in C2HData
  uint32_t offset = 0;  // DATAO, R2TO
  uint32_t length = 0;  // DATAL, R2TL

  static DataHeader parse(std::span<const std::byte> pdu) {
    return {load_le16(pdu.subspan(8, 2)), load_le16(pdu.subspan(10, 2)), load_le32(pdu.subspan(12, 4)),
            load_le32(pdu.subspan(16, 4))};
  }
  void emit(std::span<std::byte> pdu) const {
    store_le16(pdu.subspan(8, 2), cccid);
    store_le16(pdu.subspan(10, 2), ttag);
    store_le32(pdu.subspan(12, 4), offset);
    store_le32(pdu.subspan(16, 4), length);
    std::fill(pdu.begin() + 20, pdu.begin() + kDataHlen, std::byte{0});
  }
  bool operator==(const DataHeader&) const = default;
};

// The length of a PDU of `hlen` header bytes and `data` bytes of data, with
// the digests `digests` (kDgstHeader | kDgstData) negotiated.
inline uint32_t pdu_len(size_t hlen, size_t data, uint8_t digests) {
  return static_cast<uint32_t>(hlen + (digests & kDgstHeader ? kDigestLen : 0) + data +
                               (data && (digests & kDgstData) ? kDigestLen : 0));
}

// The common header of a PDU with those lengths (PDO: the data right after
// the header and its digest; 0 without data), its digest flags set.
inline Ch pdu_header(PduType t, uint8_t flags, size_t hlen, size_t data, uint8_t digests) {
  Ch c;
  c.type = t;
  c.flags =
      flags | (digests & kDgstHeader ? kFlagHdgst : 0) | (data && (digests & kDgstData) ? kFlagDdgst : 0);
  c.hlen = static_cast<uint8_t>(hlen);
  c.pdo = data ? static_cast<uint8_t>(hlen + (digests & kDgstHeader ? kDigestLen : 0)) : 0;
  c.plen = pdu_len(hlen, data, digests);
  return c;
}

// Writes the digests the common header asks for into a PDU whose header
// and data are in place.
inline void seal_digests(std::span<std::byte> pdu) {
  const auto ch = Ch::parse(pdu);
  if (!ch) return;
  if (ch->hdgst()) store_le32(pdu.subspan(ch->hlen, kDigestLen), crc32c(pdu.first(ch->hlen)));
  if (ch->ddgst() && ch->data_len())
    store_le32(pdu.subspan(ch->plen - kDigestLen, kDigestLen),
               crc32c(pdu.subspan(ch->data_offset(), ch->data_len())));
}

// Whether the digests a PDU carries are right (true when it has none).
inline bool digests_ok(std::span<const std::byte> pdu) {
  const auto ch = Ch::parse(pdu);
  if (!ch || pdu.size() < ch->plen) return false;
  if (ch->hdgst() && load_le32(pdu.subspan(ch->hlen, kDigestLen)) != crc32c(pdu.first(ch->hlen)))
    return false;
  if (ch->ddgst() && ch->data_len() &&
      load_le32(pdu.subspan(ch->plen - kDigestLen, kDigestLen)) !=
          crc32c(pdu.subspan(ch->data_offset(), ch->data_len())))
    return false;
  return true;
}

}  // namespace rdmasim::nvme::tcp
