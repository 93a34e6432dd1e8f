// IBA transport opcodes (IBA 9.2 Table 35 "OpCode field"; the same table as
// Linux rxe_opcode.c) and what each one means, in one constexpr table:
// the flags, the extension headers that follow the BTH in order, their
// offsets and the total header length, all derived from the header list.
//
// The opcode's top three bits name the transport service (IBA 9.2.1):
// 000 RC, 001 UC, 010 RD, 011 UD, 101 XRC; 100 is manufacturer specific,
// where RoCE v2 puts its congestion notification packet (IBA annex A17.9.2).
// RD and XRC are not modelled: their entries stay invalid.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace rdmasim {

enum IbaOpcode : uint8_t {
  RC_SEND_FIRST = 0x00,
  RC_SEND_MIDDLE = 0x01,
  RC_SEND_LAST = 0x02,
  RC_SEND_LAST_IMM = 0x03,
  RC_SEND_ONLY = 0x04,
  RC_SEND_ONLY_IMM = 0x05,
  RC_RDMA_WRITE_FIRST = 0x06,
  RC_RDMA_WRITE_MIDDLE = 0x07,
  RC_RDMA_WRITE_LAST = 0x08,
  RC_RDMA_WRITE_LAST_IMM = 0x09,
  RC_RDMA_WRITE_ONLY = 0x0A,
  RC_RDMA_WRITE_ONLY_IMM = 0x0B,
  RC_RDMA_READ_REQUEST = 0x0C,
  RC_RDMA_READ_RESPONSE_FIRST = 0x0D,
  RC_RDMA_READ_RESPONSE_MIDDLE = 0x0E,
  RC_RDMA_READ_RESPONSE_LAST = 0x0F,
  RC_RDMA_READ_RESPONSE_ONLY = 0x10,
  RC_ACKNOWLEDGE = 0x11,
  RC_ATOMIC_ACKNOWLEDGE = 0x12,
  RC_COMPARE_SWAP = 0x13,
  RC_FETCH_ADD = 0x14,
  RC_SEND_LAST_INV = 0x16,
  RC_SEND_ONLY_INV = 0x17,

  UC_SEND_FIRST = 0x20,
  UC_SEND_MIDDLE = 0x21,
  UC_SEND_LAST = 0x22,
  UC_SEND_LAST_IMM = 0x23,
  UC_SEND_ONLY = 0x24,
  UC_SEND_ONLY_IMM = 0x25,
  UC_RDMA_WRITE_FIRST = 0x26,
  UC_RDMA_WRITE_MIDDLE = 0x27,
  UC_RDMA_WRITE_LAST = 0x28,
  UC_RDMA_WRITE_LAST_IMM = 0x29,
  UC_RDMA_WRITE_ONLY = 0x2A,
  UC_RDMA_WRITE_ONLY_IMM = 0x2B,

  UD_SEND_ONLY = 0x64,
  UD_SEND_ONLY_IMM = 0x65,

  CNP = 0x81,  // RoCE v2 congestion notification (annex A17.9.2): BTH, 16 reserved bytes
};

enum class IbaService : uint8_t {
  RC = 0,
  UC = 1,
  RD = 2,
  UD = 3,
  Vendor = 4,
  XRC = 5,
  Reserved6 = 6,
  Reserved7 = 7
};
constexpr IbaService iba_service(uint8_t opcode) { return IbaService(opcode >> 5); }

// The headers an IBA packet can carry after the LRH/GRH (IBA 9.2-9.5), in
// the order they appear on the wire when several are present.
enum class IbaHeader : uint8_t { BTH, RETH, AETH, DETH, AtomicETH, AtomicAckETH, ImmDt, IETH };
inline constexpr size_t kIbaHeaderKinds = 8;
inline constexpr std::array<uint8_t, kIbaHeaderKinds> kIbaHeaderLen = {
    12,  // BTH 9.2
    16,  // RETH 9.3.2
    4,   // AETH 9.3.5
    8,   // DETH 9.3.3
    28,  // AtomicETH 9.3.4
    8,   // AtomicAckETH 9.5.3
    4,   // ImmDt 9.3.6
    4,   // IETH 9.3.7
};
constexpr uint8_t iba_header_len(IbaHeader h) { return kIbaHeaderLen[static_cast<size_t>(h)]; }

// Flags of an opcode.
namespace iba_op {
inline constexpr uint32_t kRequest = 1u << 0;      // sent by the requester
inline constexpr uint32_t kResponse = 1u << 1;     // sent by the responder (read response, ACKs)
inline constexpr uint32_t kAcknowledge = 1u << 2;  // Acknowledge or Atomic Acknowledge
inline constexpr uint32_t kSend = 1u << 3;
inline constexpr uint32_t kWrite = 1u << 4;
inline constexpr uint32_t kRead = 1u << 5;    // read request and read responses
inline constexpr uint32_t kAtomic = 1u << 6;  // atomic requests and the atomic acknowledge
inline constexpr uint32_t kFirst = 1u << 7;
inline constexpr uint32_t kMiddle = 1u << 8;
inline constexpr uint32_t kLast = 1u << 9;
inline constexpr uint32_t kOnly = 1u << 10;  // a whole message in one packet
inline constexpr uint32_t kImmediate = 1u << 11;
inline constexpr uint32_t kInvalidate = 1u << 12;
inline constexpr uint32_t kPayload = 1u << 13;     // data follows the headers
inline constexpr uint32_t kCompletion = 1u << 14;  // ends a message that completes a receive WQE
inline constexpr uint32_t kRecvWqe = 1u << 15;     // needs a receive WQE at the responder (RNR if none)
inline constexpr uint32_t kSolicited = 1u << 16;  // SE may be set (9.2.3: last packet of SEND / WRITE w/ imm)
inline constexpr uint32_t kCnp = 1u << 17;

inline constexpr uint32_t kKindMask = kSend | kWrite | kRead | kAtomic;
inline constexpr uint32_t kPositionMask = kFirst | kMiddle | kLast | kOnly;
}  // namespace iba_op

struct IbaOpInfo {
  static constexpr uint8_t kAbsent = 0xFF;

  const char* name = nullptr;  // null: not an opcode we model
  uint32_t flags = 0;
  std::array<IbaHeader, 2> ext{};  // extension headers after the BTH, wire order
  uint8_t ext_count = 0;
  std::array<uint8_t, kIbaHeaderKinds> offset = filled(kAbsent);  // from the first byte of the BTH
  uint8_t header_len = 0;  // BTH and extension headers: where the payload starts

  constexpr bool valid() const { return name != nullptr; }
  constexpr bool is(uint32_t f) const { return (flags & f) == f; }
  constexpr bool any(uint32_t f) const { return (flags & f) != 0; }
  constexpr bool has(IbaHeader h) const { return offset[static_cast<size_t>(h)] != kAbsent; }
  constexpr uint8_t offset_of(IbaHeader h) const { return offset[static_cast<size_t>(h)]; }

 private:
  static constexpr std::array<uint8_t, kIbaHeaderKinds> filled(uint8_t v) {
    std::array<uint8_t, kIbaHeaderKinds> a{};
    for (auto& x : a) x = v;
    return a;
  }
};

namespace detail {
constexpr IbaOpInfo iba_op_info(const char* name, uint32_t flags, std::initializer_list<IbaHeader> ext) {
  IbaOpInfo o;
  o.name = name;
  o.flags = flags;
  o.offset[static_cast<size_t>(IbaHeader::BTH)] = 0;
  uint8_t at = iba_header_len(IbaHeader::BTH);
  for (IbaHeader h : ext) {
    o.ext[o.ext_count++] = h;
    o.offset[static_cast<size_t>(h)] = at;
    at = static_cast<uint8_t>(at + iba_header_len(h));
  }
  o.header_len = at;
  return o;
}

// RC and UC share SEND and RDMA WRITE; `base` is 0x00 for RC, 0x20 for UC.
constexpr void iba_add_send_write(std::array<IbaOpInfo, 256>& t, uint8_t base, const char* const names[12]) {
  using namespace iba_op;
  using H = IbaHeader;
  constexpr uint32_t S = kRequest | kSend | kPayload;
  constexpr uint32_t W = kRequest | kWrite | kPayload;
  t[base + 0x00] = iba_op_info(names[0], S | kFirst | kRecvWqe, {});
  t[base + 0x01] = iba_op_info(names[1], S | kMiddle, {});
  t[base + 0x02] = iba_op_info(names[2], S | kLast | kCompletion | kSolicited, {});
  t[base + 0x03] = iba_op_info(names[3], S | kLast | kImmediate | kCompletion | kSolicited, {H::ImmDt});
  t[base + 0x04] = iba_op_info(names[4], S | kOnly | kCompletion | kRecvWqe | kSolicited, {});
  t[base + 0x05] =
      iba_op_info(names[5], S | kOnly | kImmediate | kCompletion | kRecvWqe | kSolicited, {H::ImmDt});
  t[base + 0x06] = iba_op_info(names[6], W | kFirst, {H::RETH});
  t[base + 0x07] = iba_op_info(names[7], W | kMiddle, {});
  t[base + 0x08] = iba_op_info(names[8], W | kLast, {});
  t[base + 0x09] =
      iba_op_info(names[9], W | kLast | kImmediate | kCompletion | kRecvWqe | kSolicited, {H::ImmDt});
  t[base + 0x0A] = iba_op_info(names[10], W | kOnly, {H::RETH});
  t[base + 0x0B] = iba_op_info(names[11], W | kOnly | kImmediate | kCompletion | kRecvWqe | kSolicited,
                               {H::RETH, H::ImmDt});
}

inline constexpr const char* kRcSendWriteNames[12] = {
    "RC_SEND_FIRST",      "RC_SEND_MIDDLE",         "RC_SEND_LAST",        "RC_SEND_LAST_IMM",
    "RC_SEND_ONLY",       "RC_SEND_ONLY_IMM",       "RC_RDMA_WRITE_FIRST", "RC_RDMA_WRITE_MIDDLE",
    "RC_RDMA_WRITE_LAST", "RC_RDMA_WRITE_LAST_IMM", "RC_RDMA_WRITE_ONLY",  "RC_RDMA_WRITE_ONLY_IMM"};
inline constexpr const char* kUcSendWriteNames[12] = {
    "UC_SEND_FIRST",      "UC_SEND_MIDDLE",         "UC_SEND_LAST",        "UC_SEND_LAST_IMM",
    "UC_SEND_ONLY",       "UC_SEND_ONLY_IMM",       "UC_RDMA_WRITE_FIRST", "UC_RDMA_WRITE_MIDDLE",
    "UC_RDMA_WRITE_LAST", "UC_RDMA_WRITE_LAST_IMM", "UC_RDMA_WRITE_ONLY",  "UC_RDMA_WRITE_ONLY_IMM"};
}  // namespace detail

inline constexpr std::array<IbaOpInfo, 256> kIbaOps = [] {
  using namespace iba_op;
  using H = IbaHeader;
  using detail::iba_op_info;
  std::array<IbaOpInfo, 256> t{};
  detail::iba_add_send_write(t, 0x00, detail::kRcSendWriteNames);
  t[RC_RDMA_READ_REQUEST] = iba_op_info("RC_RDMA_READ_REQUEST", kRequest | kRead | kOnly, {H::RETH});
  constexpr uint32_t R = kResponse | kRead | kPayload;
  t[RC_RDMA_READ_RESPONSE_FIRST] = iba_op_info("RC_RDMA_READ_RESPONSE_FIRST", R | kFirst, {H::AETH});
  t[RC_RDMA_READ_RESPONSE_MIDDLE] = iba_op_info("RC_RDMA_READ_RESPONSE_MIDDLE", R | kMiddle, {});
  t[RC_RDMA_READ_RESPONSE_LAST] = iba_op_info("RC_RDMA_READ_RESPONSE_LAST", R | kLast, {H::AETH});
  t[RC_RDMA_READ_RESPONSE_ONLY] = iba_op_info("RC_RDMA_READ_RESPONSE_ONLY", R | kOnly, {H::AETH});
  t[RC_ACKNOWLEDGE] = iba_op_info("RC_ACKNOWLEDGE", kResponse | kAcknowledge | kOnly, {H::AETH});
  t[RC_ATOMIC_ACKNOWLEDGE] = iba_op_info("RC_ATOMIC_ACKNOWLEDGE", kResponse | kAcknowledge | kAtomic | kOnly,
                                         {H::AETH, H::AtomicAckETH});
  t[RC_COMPARE_SWAP] = iba_op_info("RC_COMPARE_SWAP", kRequest | kAtomic | kOnly, {H::AtomicETH});
  t[RC_FETCH_ADD] = iba_op_info("RC_FETCH_ADD", kRequest | kAtomic | kOnly, {H::AtomicETH});
  constexpr uint32_t SI = kRequest | kSend | kPayload | kInvalidate | kCompletion | kSolicited;
  t[RC_SEND_LAST_INV] = iba_op_info("RC_SEND_LAST_INV", SI | kLast, {H::IETH});
  t[RC_SEND_ONLY_INV] = iba_op_info("RC_SEND_ONLY_INV", SI | kOnly | kRecvWqe, {H::IETH});

  detail::iba_add_send_write(t, 0x20, detail::kUcSendWriteNames);

  constexpr uint32_t U = kRequest | kSend | kPayload | kOnly | kCompletion | kRecvWqe | kSolicited;
  t[UD_SEND_ONLY] = iba_op_info("UD_SEND_ONLY", U, {H::DETH});
  t[UD_SEND_ONLY_IMM] = iba_op_info("UD_SEND_ONLY_IMM", U | kImmediate, {H::DETH, H::ImmDt});

  t[CNP] = iba_op_info("CNP", kCnp | kOnly, {});
  return t;
}();

inline constexpr size_t kCnpReservedLen = 16;  // zero bytes after the CNP's BTH (annex A17.9.2)

static_assert(kIbaOps[RC_SEND_ONLY].header_len == 12);
static_assert(kIbaOps[RC_RDMA_WRITE_ONLY_IMM].header_len == 12 + 16 + 4);
static_assert(kIbaOps[RC_RDMA_WRITE_ONLY_IMM].offset_of(IbaHeader::ImmDt) == 12 + 16);
static_assert(kIbaOps[RC_RDMA_READ_REQUEST].header_len == 12 + 16);
static_assert(kIbaOps[RC_RDMA_READ_RESPONSE_MIDDLE].header_len == 12);
static_assert(kIbaOps[RC_ATOMIC_ACKNOWLEDGE].header_len == 12 + 4 + 8);
static_assert(kIbaOps[RC_ATOMIC_ACKNOWLEDGE].offset_of(IbaHeader::AtomicAckETH) == 12 + 4);
static_assert(kIbaOps[RC_FETCH_ADD].header_len == 12 + 28);
static_assert(kIbaOps[UD_SEND_ONLY_IMM].header_len == 12 + 8 + 4);
static_assert(kIbaOps[RC_SEND_ONLY_INV].header_len == 12 + 4);
static_assert(kIbaOps[UC_RDMA_WRITE_FIRST].offset_of(IbaHeader::RETH) == 12);
static_assert(!kIbaOps[0x15].valid() && !kIbaOps[0x40].valid());

constexpr const IbaOpInfo& iba_op_info(uint8_t opcode) { return kIbaOps[opcode]; }
constexpr const char* iba_opcode_name(uint8_t opcode) {
  return kIbaOps[opcode].valid() ? kIbaOps[opcode].name : "UNKNOWN";
}

// After a FIRST or MIDDLE packet the message is open.
constexpr bool iba_op_opens_message(uint8_t opcode) {
  return kIbaOps[opcode].any(iba_op::kFirst | iba_op::kMiddle);
}

// May `next` follow `prev` in the packet stream of one QP direction
// (IBA 9.7.5.1.2 / C9-77 for the responder, 9.7.5.2 for read responses)?
// Inside a message (prev FIRST or MIDDLE) only a MIDDLE or LAST of the same
// service and operation may come; outside one, only a FIRST or an ONLY.
// `prev` may be any value when no packet came before: pass one that does not
// open a message, e.g. RC_ACKNOWLEDGE.
constexpr bool iba_op_may_follow(uint8_t prev, uint8_t next) {
  using namespace iba_op;
  const IbaOpInfo& p = kIbaOps[prev];
  const IbaOpInfo& n = kIbaOps[next];
  if (!n.valid()) return false;
  if (p.valid() && p.any(kFirst | kMiddle)) {
    return iba_service(prev) == iba_service(next) && (p.flags & kKindMask) == (n.flags & kKindMask) &&
           n.any(kMiddle | kLast);
  }
  return n.any(kFirst | kOnly);
}

static_assert(iba_op_may_follow(RC_SEND_FIRST, RC_SEND_MIDDLE));
static_assert(iba_op_may_follow(RC_SEND_MIDDLE, RC_SEND_LAST_IMM));
static_assert(iba_op_may_follow(RC_SEND_FIRST, RC_SEND_LAST_INV));
static_assert(!iba_op_may_follow(RC_SEND_FIRST, RC_RDMA_WRITE_LAST));
static_assert(!iba_op_may_follow(RC_SEND_FIRST, RC_SEND_ONLY));
static_assert(!iba_op_may_follow(RC_SEND_LAST, RC_SEND_MIDDLE));
static_assert(iba_op_may_follow(RC_SEND_LAST, RC_RDMA_WRITE_FIRST));
static_assert(!iba_op_may_follow(RC_RDMA_WRITE_FIRST, UC_RDMA_WRITE_LAST));
static_assert(iba_op_may_follow(RC_RDMA_READ_RESPONSE_FIRST, RC_RDMA_READ_RESPONSE_LAST));

}  // namespace rdmasim
