// Management Datagram common header (IBA 13.4.3), 24 bytes, then 232 bytes
// of class data: 256 bytes in all, the payload of a UD SEND to QP1 (the
// GSI; Q_Key 0x80010000).
//
//  0  BaseVersion     1
//  1  MgmtClass       0x07: communication management (IBA 12.11)
//  2  ClassVersion    2 for CM
//  3  R(1) Method(7)  0x03: Send (CM messages are all Sends)
//  4  Status(16)
//  6  ClassSpecific(16)
//  8  TransactionID(64)
// 16  AttributeID(16) the CM message (REQ 0x0010, REJ 0x0012, REP 0x0013, RTU 0x0014, ...)
// 18  reserved(16)
// 20  AttributeModifier(32)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "core/bytes.hpp"

namespace rdmasim {

inline constexpr size_t kMadLen = 256;
inline constexpr size_t kMadHeaderLen = 24;
inline constexpr size_t kMadDataLen = kMadLen - kMadHeaderLen;
inline constexpr uint32_t kGsiQpn = 1;
inline constexpr uint32_t kGsiQkey = 0x80010000;

inline constexpr uint8_t kMgmtClassCm = 0x07;
inline constexpr uint8_t kMethodSend = 0x03;

struct MadHeader {
  uint8_t base_version = 1;
  uint8_t mgmt_class = kMgmtClassCm;
  uint8_t class_version = 2;
  uint8_t method = kMethodSend;  // R bit included (bit 7)
  uint16_t status = 0;
  uint16_t class_specific = 0;
  uint64_t transaction_id = 0;
  uint16_t attribute_id = 0;
  uint32_t attribute_modifier = 0;

  static std::optional<MadHeader> parse(std::span<const std::byte> b) {
    if (b.size() < kMadHeaderLen) return std::nullopt;
    MadHeader h;
    h.base_version = u8(b[0]);
    h.mgmt_class = u8(b[1]);
    h.class_version = u8(b[2]);
    h.method = u8(b[3]);
    h.status = load_be16(b.subspan(4, 2));
    h.class_specific = load_be16(b.subspan(6, 2));
    h.transaction_id = load_be64(b.subspan(8, 8));
    h.attribute_id = load_be16(b.subspan(16, 2));
    h.attribute_modifier = load_be32(b.subspan(20, 4));
    return h;
  }
  void emit(std::span<std::byte> b) const {
    b[0] = std::byte(base_version);
    b[1] = std::byte(mgmt_class);
    b[2] = std::byte(class_version);
    b[3] = std::byte(method);
    store_be16(b.subspan(4, 2), status);
    store_be16(b.subspan(6, 2), class_specific);
    store_be64(b.subspan(8, 8), transaction_id);
    store_be16(b.subspan(16, 2), attribute_id);
    store_be16(b.subspan(18, 2), 0);
    store_be32(b.subspan(20, 4), attribute_modifier);
  }
  bool operator==(const MadHeader&) const = default;
};

}  // namespace rdmasim
