// The NVMe completion queue entry (NVM Express Base 2.0, 4.6), 16 bytes,
// sent back as a response capsule (NVMe-oF 1.1, 2.2):
//
//  0  DW0(32)    command specific (Connect: CNTLID in bits 15:0; Property Get: the value's low half)
//  4  DW1(32)    command specific (Property Get of 8 bytes: the high half)
//  8  SQHD(16)   submission queue head pointer
// 10  SQID(16)
// 12  CID(16)    the command's identifier
// 14  P(1) SC(8) SCT(3) CRD(2) M(1) DNR(1)   phase tag and status
// Little-endian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "core/bytes.hpp"

namespace rdmasim::nvme {

inline constexpr size_t kCqeLen = 16;

// Status codes (type 0, generic; NVMe Base 2.0, 4.6.1.2.1; NVMe-oF 1.1, 3.3.2 for Connect's).
enum class Status : uint8_t {
  success = 0x00,
  invalid_opcode = 0x01,
  invalid_field = 0x02,
  data_transfer_error = 0x04,
  invalid_namespace = 0x0B,
  sgl_data_block_length_invalid = 0x0F,
  lba_out_of_range = 0x80,
};
// Command specific status of Connect (SCT 1, NVMe-oF 1.1, Figure 21).
inline constexpr uint8_t kConnectInvalidParameters = 0x82;

struct Completion {
  uint32_t dw0 = 0, dw1 = 0;
  uint16_t sqhd = 0, sqid = 0, cid = 0;
  uint8_t sc = 0;   // status code
  uint8_t sct = 0;  // status code type
  bool dnr = false, phase = false;

  bool ok() const { return sc == 0 && sct == 0; }
  uint16_t status_field() const {
    return static_cast<uint16_t>((phase ? 1 : 0) | sc << 1 | (sct & 7) << 9 | (dnr ? 1 : 0) << 15);
  }
  static std::optional<Completion> parse(std::span<const std::byte> b) {
    if (b.size() < kCqeLen) return std::nullopt;
    Completion c;
    c.dw0 = load_le32(b.first(4));
    c.dw1 = load_le32(b.subspan(4, 4));
    c.sqhd = load_le16(b.subspan(8, 2));
    c.sqid = load_le16(b.subspan(10, 2));
    c.cid = load_le16(b.subspan(12, 2));
    const uint16_t s = load_le16(b.subspan(14, 2));
    c.phase = s & 1;
    c.sc = static_cast<uint8_t>(s >> 1);
    c.sct = (s >> 9) & 7;
    c.dnr = s >> 15;
    return c;
  }
  void emit(std::span<std::byte> b) const {
    store_le32(b.first(4), dw0);
    store_le32(b.subspan(4, 4), dw1);
    store_le16(b.subspan(8, 2), sqhd);
    store_le16(b.subspan(10, 2), sqid);
    store_le16(b.subspan(12, 2), cid);
    store_le16(b.subspan(14, 2), status_field());
  }
  bool operator==(const Completion&) const = default;
};

}  // namespace rdmasim::nvme
