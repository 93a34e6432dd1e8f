// RDMAP (RFC 5040): the control field in the DDP header, the
// opcodes, the RDMA Read Request header and the Terminate header, and the
// error codes a Terminate carries (RFC 5040, RFC 5041, RFC 5044; the IANA
// registry of RFC 6580).
//
// Control field (RFC 5040, RDMAP Control Field), the first DDP RsvdULP byte:
//   RV(2) = 01 | Rsv(2) | Opcode(4)
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

#include "core/bytes.hpp"
#include "fabrics/iwarp/ddp.hpp"

namespace rdmasim {

namespace rdmap {
inline constexpr uint8_t kVersion = 1;
// The untagged queues RDMAP uses (RFC 5040, RDMAP over DDP).
inline constexpr uint32_t kQueueSend = 0;
inline constexpr uint32_t kQueueReadRequest = 1;
inline constexpr uint32_t kQueueTerminate = 2;
}  // namespace rdmap

enum class RdmapOpcode : uint8_t {
  write = 0x0,
  read_request = 0x1,
  read_response = 0x2,
  send = 0x3,
  send_invalidate = 0x4,
  send_se = 0x5,
  send_se_invalidate = 0x6,
  terminate = 0x7,
};

constexpr uint8_t rdmap_control(RdmapOpcode op) {
  return static_cast<uint8_t>(rdmap::kVersion << 6 | static_cast<uint8_t>(op));
}
constexpr uint8_t rdmap_version(uint8_t control) { return control >> 6; }
constexpr uint8_t rdmap_opcode_bits(uint8_t control) { return control & 0x0F; }

// What each opcode is (RFC 5040, RDMA Message Definitions): its DDP buffer model, its
// untagged queue, whether its payload is user data.
struct RdmapOpInfo {
  std::string_view name;
  bool valid = false;
  bool tagged = false;
  uint32_t queue = 0;      // untagged only
  bool data = false;       // carries ULP payload
  bool solicited = false;  // Send with Solicited Event
  bool invalidate = false;
};

inline constexpr auto kRdmapOps = [] {
  std::array<RdmapOpInfo, 16> t{};
  t[0x0] = {"RDMA Write", true, true, 0, true, false, false};
  t[0x1] = {"RDMA Read Request", true, false, rdmap::kQueueReadRequest, false, false, false};
  t[0x2] = {"RDMA Read Response", true, true, 0, true, false, false};
  t[0x3] = {"Send", true, false, rdmap::kQueueSend, true, false, false};
  t[0x4] = {"Send with Invalidate", true, false, rdmap::kQueueSend, true, false, true};
  t[0x5] = {"Send with Solicited Event", true, false, rdmap::kQueueSend, true, true, false};
  t[0x6] = {"Send with Solicited Event and Invalidate", true, false, rdmap::kQueueSend, true, true, true};
  t[0x7] = {"Terminate", true, false, rdmap::kQueueTerminate, false, false, false};
  return t;
}();
constexpr const RdmapOpInfo& rdmap_info(uint8_t opcode) { return kRdmapOps[opcode & 0x0F]; }
static_assert(rdmap_control(RdmapOpcode::send) == 0x43);

// RDMA Read Request header (RFC 5040), after the untagged DDP header.
//  0 Data Sink STag | 4 Data Sink TO (64) | 12 RDMA Read Message Size |
// 16 Data Source STag | 20 Data Source TO (64)
struct ReadRequestHeader {
  static constexpr size_t kLen = 28;
  uint32_t sink_stag = 0;
  uint64_t sink_to = 0;
  uint32_t size = 0;
  uint32_t source_stag = 0;
  uint64_t source_to = 0;

  static std::optional<ReadRequestHeader> parse(std::span<const std::byte> b) {
    if (b.size() < kLen) return std::nullopt;
    return ReadRequestHeader{load_be32(b.subspan(0, 4)), load_be64(b.subspan(4, 8)),
                             load_be32(b.subspan(12, 4)), load_be32(b.subspan(16, 4)),
                             load_be64(b.subspan(20, 8))};
  }
  void emit(std::span<std::byte> b) const {
    store_be32(b.subspan(0, 4), sink_stag);
    store_be64(b.subspan(4, 8), sink_to);
    store_be32(b.subspan(12, 4), size);
    store_be32(b.subspan(16, 4), source_stag);
    store_be64(b.subspan(20, 8), source_to);
  }
  bool operator==(const ReadRequestHeader&) const = default;
};

// Which layer found an error (RFC 5040, Terminate Header).
enum class TermLayer : uint8_t { rdmap = 0x0, ddp = 0x1, llp = 0x2 };

// The Layer / Error Type / Error Code triple of a Terminate.
struct TermError {
  TermLayer layer = TermLayer::rdmap;
  uint8_t etype = 0;
  uint8_t code = 0;
  bool operator==(const TermError&) const = default;
};

namespace term {
// RDMAP (RFC 5040; registry of RFC 6580). EType 0 local catastrophic, 1 remote
// protection, 2 remote operation.
inline constexpr TermError kRdmapCatastrophic{TermLayer::rdmap, 0x0, 0x00};
inline constexpr TermError kRdmapInvalidStag{TermLayer::rdmap, 0x1, 0x00};
inline constexpr TermError kRdmapBaseBounds{TermLayer::rdmap, 0x1, 0x01};
inline constexpr TermError kRdmapAccessRights{TermLayer::rdmap, 0x1, 0x02};
inline constexpr TermError kRdmapStagNotAssociated{TermLayer::rdmap, 0x1, 0x03};
inline constexpr TermError kRdmapToWrap{TermLayer::rdmap, 0x1, 0x04};
inline constexpr TermError kRdmapInvalidVersion{TermLayer::rdmap, 0x2, 0x05};
inline constexpr TermError kRdmapUnexpectedOpcode{TermLayer::rdmap, 0x2, 0x06};
inline constexpr TermError kRdmapCatastrophicStream{TermLayer::rdmap, 0x2, 0x07};
inline constexpr TermError kRdmapCannotInvalidate{TermLayer::rdmap, 0x2, 0x09};
inline constexpr TermError kRdmapUnspecified{TermLayer::rdmap, 0x2, 0xFF};
// DDP (RFC 5041; RFC 6580). EType 1 tagged buffer, 2 untagged buffer.
inline constexpr TermError kDdpCatastrophic{TermLayer::ddp, 0x0, 0x00};
inline constexpr TermError kDdpTaggedInvalidStag{TermLayer::ddp, 0x1, 0x00};
inline constexpr TermError kDdpTaggedBaseBounds{TermLayer::ddp, 0x1, 0x01};
inline constexpr TermError kDdpTaggedStagNotAssociated{TermLayer::ddp, 0x1, 0x02};
inline constexpr TermError kDdpTaggedToWrap{TermLayer::ddp, 0x1, 0x03};
inline constexpr TermError kDdpTaggedInvalidVersion{TermLayer::ddp, 0x1, 0x04};
inline constexpr TermError kDdpUntaggedInvalidQn{TermLayer::ddp, 0x2, 0x01};
inline constexpr TermError kDdpUntaggedNoBuffer{TermLayer::ddp, 0x2, 0x02};
inline constexpr TermError kDdpUntaggedMsnRange{TermLayer::ddp, 0x2, 0x03};
inline constexpr TermError kDdpUntaggedInvalidMo{TermLayer::ddp, 0x2, 0x04};
inline constexpr TermError kDdpUntaggedTooLong{TermLayer::ddp, 0x2, 0x05};
inline constexpr TermError kDdpUntaggedInvalidVersion{TermLayer::ddp, 0x2, 0x06};
// MPA, the LLP (RFC 5044; RFC 6580), EType 0.
inline constexpr TermError kMpaStreamLost{TermLayer::llp, 0x0, 0x01};
inline constexpr TermError kMpaCrcError{TermLayer::llp, 0x0, 0x02};
inline constexpr TermError kMpaMarkerMismatch{TermLayer::llp, 0x0, 0x03};
inline constexpr TermError kMpaInvalidFrame{TermLayer::llp, 0x0, 0x04};
}  // namespace term

// "DDP tagged buffer: invalid STag" and the like, for logs and tests.
std::string_view describe(const TermError& e);

// Terminate header (RFC 5040), after the untagged DDP header:
//  0  Layer(4) EType(4) | Error Code(8) | M D R (3) Reserved(13)
//  4  DDP Segment Length (16)            when M (this model sets M and D together)
//  6  Terminated DDP header (14 or 18)   when D
//     Terminated RDMAP header (28)       when R (the Read Request header)
struct TerminateHeader {
  static constexpr size_t kControlLen = 4;
  static constexpr uint8_t kFlagM = 0x80, kFlagD = 0x40, kFlagR = 0x20;

  TermError error;
  bool m = false, d = false, r = false;
  uint16_t ddp_segment_length = 0;          // the ULPDU_LENGTH of the offending FPDU
  std::span<const std::byte> ddp_header;    // its DDP header, if d
  std::span<const std::byte> rdmap_header;  // its Read Request header, if r

  size_t length() const {
    return kControlLen + (m || d ? 2 : 0) + (d ? ddp_header.size() : 0) + (r ? rdmap_header.size() : 0);
  }

  static std::optional<TerminateHeader> parse(std::span<const std::byte> b) {
    if (b.size() < kControlLen) return std::nullopt;
    TerminateHeader t;
    t.error = {TermLayer(u8(b[0]) >> 4), static_cast<uint8_t>(u8(b[0]) & 0x0F), u8(b[1])};
    t.m = u8(b[2]) & kFlagM;
    t.d = u8(b[2]) & kFlagD;
    t.r = u8(b[2]) & kFlagR;
    size_t i = kControlLen;
    if (t.m || t.d) {
      if (b.size() < i + 2) return std::nullopt;
      t.ddp_segment_length = load_be16(b.subspan(i, 2));
      i += 2;
    }
    if (t.d) {
      if (b.size() < i + 1) return std::nullopt;
      const size_t n = (u8(b[i]) & ddp::kFlagTagged) ? ddp::kTaggedLen : ddp::kUntaggedLen;
      if (b.size() < i + n) return std::nullopt;
      t.ddp_header = b.subspan(i, n);
      i += n;
    }
    if (t.r) {
      if (b.size() < i + ReadRequestHeader::kLen) return std::nullopt;
      t.rdmap_header = b.subspan(i, ReadRequestHeader::kLen);
    }
    return t;
  }
  // `b` must hold length() bytes.
  void emit(std::span<std::byte> b) const {
    store_u8(b, static_cast<uint8_t>(static_cast<uint8_t>(error.layer) << 4 | (error.etype & 0x0F)));
    store_u8(b.subspan(1), error.code);
    store_u8(b.subspan(2), static_cast<uint8_t>((m ? kFlagM : 0) | (d ? kFlagD : 0) | (r ? kFlagR : 0)));
    store_u8(b.subspan(3), 0);
    size_t i = kControlLen;
    if (m || d) {
      store_be16(b.subspan(i, 2), ddp_segment_length);
      i += 2;
    }
    if (d) {
      std::copy(ddp_header.begin(), ddp_header.end(), b.begin() + static_cast<ptrdiff_t>(i));
      i += ddp_header.size();
    }
    if (r) std::copy(rdmap_header.begin(), rdmap_header.end(), b.begin() + static_cast<ptrdiff_t>(i));
  }
};

}  // namespace rdmasim
