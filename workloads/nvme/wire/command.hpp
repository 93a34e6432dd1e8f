// The NVMe submission queue entry (NVM Express Base 2.0, 4.2), 64 bytes,
// sent as a command capsule over a fabric (NVMe-oF 1.1, 2.2):
//
//  0  OPC             opcode
//  1  FUSE(2) rsvd(4) PSDT(2)   PSDT 01b: SGLs (Linux's NVME_CMD_SGL_METABUF, 0x40)
//  2  CID(16)         command identifier, echoed by the completion
//  4  NSID(32)        namespace; a Fabrics command (OPC 0x7F) has FCTYPE in byte 4
//  8  reserved(64)
// 16  MPTR(64)
// 24  DPTR            SGL descriptor 1 (sgl.hpp)
// 40  CDW10 .. CDW15
//
// Admin Keep Alive (0x18, NVMe Base 2.0, 5.25): no data, NSID 0, no CDWs.
// NVM command set Read (0x02) and Write (0x01): CDW10-11 the starting LBA,
// CDW12 bits 15:0 the number of logical blocks, 0's based.
// Fabrics commands (NVMe-oF 1.1, 3): byte 4 FCTYPE; Connect (0x01): 40
// RECFMT(16), 42 QID(16), 44 SQSIZE(16, 0's based), 46 CATTR, 48 KATO(32);
// Property Set (0x00): 40 ATTRIB (size: 0 4 bytes, 1 8 bytes), 44 OFST(32),
// 48 VALUE(64); Property Get (0x04): 40 ATTRIB, 44 OFST.
// Everything is little-endian.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "core/bytes.hpp"
#include "workloads/nvme/wire/sgl.hpp"

namespace rdmasim::nvme {

inline constexpr size_t kSqeLen = 64;

// NVM I/O opcodes, and on the admin queue Keep Alive (the admin set's
// opcodes the model sends).
enum class Opcode : uint8_t { flush = 0x00, write = 0x01, read = 0x02, keep_alive = 0x18, fabrics = 0x7F };
enum class FabricsType : uint8_t { property_set = 0x00, connect = 0x01, property_get = 0x04 };
inline constexpr uint8_t kFlagsSgl = 0x40;  // PSDT = 01b

// Controller properties (NVMe Base 2.0, 3.1.4) the host touches at start-up.
inline constexpr uint32_t kPropCap = 0x00, kPropCc = 0x14, kPropCsts = 0x1C;

struct Command {
  Opcode opcode = Opcode::read;
  uint8_t flags = kFlagsSgl;
  uint16_t cid = 0;
  uint32_t nsid = 0;                          // NVM commands
  FabricsType fctype = FabricsType::connect;  // Fabrics commands
  Sgl sgl;
  std::array<uint32_t, 6> cdw{};  // CDW10 .. CDW15

  bool is_fabrics() const { return opcode == Opcode::fabrics; }
  // Read and Write.
  uint64_t slba() const { return uint64_t{cdw[1]} << 32 | cdw[0]; }
  uint32_t nlb() const { return (cdw[2] & 0xFFFF) + 1; }  // blocks (the field is 0's based)
  // Connect.
  uint16_t recfmt() const { return static_cast<uint16_t>(cdw[0]); }
  uint16_t qid() const { return static_cast<uint16_t>(cdw[0] >> 16); }
  uint16_t sqsize() const { return static_cast<uint16_t>(cdw[1]); }  // 0's based
  uint32_t kato() const { return cdw[2]; }
  // Property Get and Set.
  bool property_8_bytes() const { return (cdw[0] & 0x7) == 1; }
  uint32_t property_offset() const { return cdw[1]; }
  uint64_t property_value() const { return uint64_t{cdw[3]} << 32 | cdw[2]; }

  static Command io(Opcode op, uint16_t cid, uint32_t nsid, uint64_t slba, uint32_t blocks, const Sgl& sgl) {
    Command c;
    c.opcode = op;
    c.cid = cid;
    c.nsid = nsid;
    c.sgl = sgl;
    c.cdw[0] = static_cast<uint32_t>(slba);
    c.cdw[1] = static_cast<uint32_t>(slba >> 32);
    c.cdw[2] = (blocks - 1) & 0xFFFF;
    return c;
  }
  static Command connect(uint16_t cid, uint16_t qid, uint16_t sqsize, uint32_t kato, const Sgl& sgl) {
    Command c;
    c.opcode = Opcode::fabrics;
    c.fctype = FabricsType::connect;
    c.cid = cid;
    c.sgl = sgl;
    c.cdw[0] = uint32_t{qid} << 16;  // RECFMT 0
    c.cdw[1] = sqsize;               // CATTR 0
    c.cdw[2] = kato;
    return c;
  }
  static Command keep_alive(uint16_t cid) {
    Command c;
    c.opcode = Opcode::keep_alive;
    c.cid = cid;
    return c;
  }
  static Command property_get(uint16_t cid, uint32_t offset, bool eight_bytes) {
    Command c;
    c.opcode = Opcode::fabrics;
    c.fctype = FabricsType::property_get;
    c.cid = cid;
    c.sgl = Sgl::keyed_block(0, 0, 0);
    c.cdw[0] = eight_bytes ? 1 : 0;
    c.cdw[1] = offset;
    return c;
  }
  static Command property_set(uint16_t cid, uint32_t offset, uint64_t value, bool eight_bytes) {
    Command c = property_get(cid, offset, eight_bytes);
    c.fctype = FabricsType::property_set;
    c.cdw[2] = static_cast<uint32_t>(value);
    c.cdw[3] = static_cast<uint32_t>(value >> 32);
    return c;
  }

  // nullopt: shorter than an SQE, or a data pointer that is no SGL NVMe-oF uses.
  static std::optional<Command> parse(std::span<const std::byte> b) {
    if (b.size() < kSqeLen) return std::nullopt;
    Command c;
    c.opcode = static_cast<Opcode>(u8(b[0]));
    c.flags = u8(b[1]);
    c.cid = load_le16(b.subspan(2, 2));
    if (c.is_fabrics()) {
      c.fctype = static_cast<FabricsType>(u8(b[4]));
      c.nsid = 0;
    } else {
      c.nsid = load_le32(b.subspan(4, 4));
    }
    const auto sgl = Sgl::parse(*ConstSglView::check(b.subspan(24, 16)));
    if (!sgl) return std::nullopt;
    c.sgl = *sgl;
    for (size_t i = 0; i < 6; ++i) c.cdw[i] = load_le32(b.subspan(40 + 4 * i, 4));
    return c;
  }
  void emit(std::span<std::byte> b) const {
    for (size_t i = 0; i < kSqeLen; ++i) b[i] = std::byte{0};
    b[0] = std::byte(static_cast<uint8_t>(opcode));
    b[1] = std::byte(flags);
    store_le16(b.subspan(2, 2), cid);
    if (is_fabrics())
      b[4] = std::byte(static_cast<uint8_t>(fctype));
    else
      store_le32(b.subspan(4, 4), nsid);
    sgl.emit(*SglView::check(b.subspan(24, 16)));
    for (size_t i = 0; i < 6; ++i) store_le32(b.subspan(40 + 4 * i, 4), cdw[i]);
  }
  bool operator==(const Command&) const = default;
};

}  // namespace rdmasim::nvme
