#include "fabrics/iba/opcodes.hpp"

#include <doctest/doctest.h>

#include <string_view>

using namespace rdmasim;

TEST_CASE("opcodes: every modelled opcode has a name, a position and a kind") {
  int n = 0;
  for (int op = 0; op < 256; ++op) {
    const IbaOpInfo& o = kIbaOps[op];
    if (!o.valid()) continue;
    ++n;
    CAPTURE(op);
    // Exactly one position.
    const uint32_t pos = o.flags & iba_op::kPositionMask;
    CHECK((pos != 0 && (pos & (pos - 1)) == 0));
    // Requests and responses are disjoint.
    CHECK_FALSE(o.is(iba_op::kRequest | iba_op::kResponse));
    // The header length is the sum of the listed headers.
    size_t len = kIbaHeaderLen[0];
    for (uint8_t i = 0; i < o.ext_count; ++i) len += iba_header_len(o.ext[i]);
    CHECK(o.header_len == len);
    CHECK(o.has(IbaHeader::BTH));
    CHECK(o.offset_of(IbaHeader::BTH) == 0);
    CHECK(o.has(IbaHeader::ImmDt) == o.any(iba_op::kImmediate));
    CHECK(o.has(IbaHeader::IETH) == o.any(iba_op::kInvalidate));
    CHECK(std::string_view(iba_opcode_name(static_cast<uint8_t>(op))) == o.name);
    // Names cannot drift from the service the opcode's top bits give.
    const std::string_view name = o.name;
    const char* const prefix[] = {"RC_", "UC_", "RD_", "UD_", "CNP", "XRC_"};
    CHECK(name.substr(0, std::string_view(prefix[op >> 5]).size()) == prefix[op >> 5]);
    // ... nor from the position and kind flags.
    CHECK((name.find("_FIRST") != std::string_view::npos) == o.any(iba_op::kFirst));
    CHECK((name.find("_MIDDLE") != std::string_view::npos) == o.any(iba_op::kMiddle));
    CHECK((name.find("_LAST") != std::string_view::npos) == o.any(iba_op::kLast));
    CHECK((name.find("_IMM") != std::string_view::npos) == o.any(iba_op::kImmediate));
    CHECK((name.find("_INV") != std::string_view::npos) == o.any(iba_op::kInvalidate));
    CHECK((name.find("SEND") != std::string_view::npos) == o.any(iba_op::kSend));
    CHECK((name.find("WRITE") != std::string_view::npos) == o.any(iba_op::kWrite));
    CHECK((name.find("READ") != std::string_view::npos) == o.any(iba_op::kRead));
  }
  CHECK(n == 23 + 12 + 2 + 1);  // RC, UC, UD, CNP
  CHECK(std::string_view(iba_opcode_name(0x15)) == "UNKNOWN");
}

TEST_CASE("opcodes: values and names follow IBA Table 35") {
  CHECK(RC_FETCH_ADD == 0x14);
  CHECK(UC_SEND_FIRST == 0x20);
  CHECK(UD_SEND_ONLY == 0x64);
  CHECK(std::string_view(kIbaOps[RC_RDMA_READ_RESPONSE_MIDDLE].name) == "RC_RDMA_READ_RESPONSE_MIDDLE");
  CHECK(std::string_view(kIbaOps[UC_RDMA_WRITE_ONLY_IMM].name) == "UC_RDMA_WRITE_ONLY_IMM");
  CHECK(iba_service(RC_SEND_ONLY) == IbaService::RC);
  CHECK(iba_service(UC_SEND_ONLY) == IbaService::UC);
  CHECK(iba_service(UD_SEND_ONLY) == IbaService::UD);
  CHECK(iba_service(CNP) == IbaService::Vendor);
  // UC has no READ, ATOMIC or ACK (IBA 9.2 Table 35): 0x2C..0x3F are invalid.
  for (int op = 0x2C; op < 0x40; ++op) CHECK_FALSE(kIbaOps[op].valid());
}

TEST_CASE("opcodes: headers in wire order with derived offsets") {
  const IbaOpInfo& w = kIbaOps[RC_RDMA_WRITE_ONLY_IMM];
  CHECK(w.offset_of(IbaHeader::RETH) == 12);
  CHECK(w.offset_of(IbaHeader::ImmDt) == 28);
  CHECK(w.header_len == 32);
  CHECK_FALSE(w.has(IbaHeader::AETH));
  const IbaOpInfo& a = kIbaOps[RC_ATOMIC_ACKNOWLEDGE];
  CHECK(a.offset_of(IbaHeader::AETH) == 12);
  CHECK(a.offset_of(IbaHeader::AtomicAckETH) == 16);
  CHECK(a.header_len == 24);
  const IbaOpInfo& u = kIbaOps[UD_SEND_ONLY_IMM];
  CHECK(u.offset_of(IbaHeader::DETH) == 12);
  CHECK(u.offset_of(IbaHeader::ImmDt) == 20);
  CHECK(kIbaOps[RC_RDMA_READ_RESPONSE_FIRST].offset_of(IbaHeader::AETH) == 12);
  CHECK_FALSE(kIbaOps[RC_RDMA_READ_RESPONSE_MIDDLE].has(IbaHeader::AETH));
  CHECK(kIbaOps[RC_COMPARE_SWAP].header_len == 40);
  CHECK(kIbaOps[CNP].header_len == 12);
}

TEST_CASE("opcodes: flags") {
  using namespace iba_op;
  CHECK(kIbaOps[RC_SEND_ONLY].is(kRequest | kSend | kOnly | kCompletion | kRecvWqe | kSolicited | kPayload));
  CHECK_FALSE(kIbaOps[RC_SEND_FIRST].any(kCompletion | kSolicited));
  CHECK(kIbaOps[RC_SEND_FIRST].is(kRecvWqe));
  CHECK_FALSE(kIbaOps[RC_RDMA_WRITE_ONLY].any(kCompletion | kRecvWqe | kSolicited));
  CHECK(kIbaOps[RC_RDMA_WRITE_LAST_IMM].is(kCompletion | kRecvWqe | kSolicited | kImmediate));
  CHECK(kIbaOps[RC_RDMA_READ_REQUEST].is(kRequest | kRead));
  CHECK_FALSE(kIbaOps[RC_RDMA_READ_REQUEST].any(kPayload));
  CHECK(kIbaOps[RC_RDMA_READ_RESPONSE_LAST].is(kResponse | kRead | kPayload | kLast));
  CHECK(kIbaOps[RC_ACKNOWLEDGE].is(kResponse | kAcknowledge));
  CHECK(kIbaOps[RC_ATOMIC_ACKNOWLEDGE].is(kResponse | kAcknowledge | kAtomic));
  CHECK(kIbaOps[RC_FETCH_ADD].is(kRequest | kAtomic));
  CHECK(kIbaOps[RC_SEND_ONLY_INV].is(kInvalidate | kCompletion));
  CHECK(kIbaOps[CNP].is(kCnp));
}

TEST_CASE("opcodes: which opcode may follow which") {
  constexpr uint8_t kNone = RC_ACKNOWLEDGE;  // nothing open
  // Opening a message: FIRST or ONLY, never MIDDLE or LAST.
  CHECK(iba_op_may_follow(kNone, RC_SEND_FIRST));
  CHECK(iba_op_may_follow(kNone, RC_RDMA_WRITE_ONLY_IMM));
  CHECK(iba_op_may_follow(kNone, RC_RDMA_READ_REQUEST));
  CHECK(iba_op_may_follow(kNone, RC_FETCH_ADD));
  CHECK_FALSE(iba_op_may_follow(kNone, RC_SEND_MIDDLE));
  CHECK_FALSE(iba_op_may_follow(kNone, RC_RDMA_WRITE_LAST));
  CHECK_FALSE(iba_op_may_follow(kNone, 0x15));
  // Inside a message: MIDDLE or LAST of the same operation and service.
  CHECK(iba_op_may_follow(RC_RDMA_WRITE_FIRST, RC_RDMA_WRITE_MIDDLE));
  CHECK(iba_op_may_follow(RC_RDMA_WRITE_MIDDLE, RC_RDMA_WRITE_LAST_IMM));
  CHECK(iba_op_may_follow(UC_SEND_FIRST, UC_SEND_LAST));
  CHECK_FALSE(iba_op_may_follow(RC_RDMA_WRITE_MIDDLE, RC_SEND_LAST));
  CHECK_FALSE(iba_op_may_follow(RC_RDMA_WRITE_MIDDLE, RC_RDMA_WRITE_FIRST));
  CHECK_FALSE(iba_op_may_follow(RC_RDMA_WRITE_MIDDLE, RC_RDMA_READ_REQUEST));
  CHECK_FALSE(iba_op_may_follow(UC_SEND_FIRST, RC_SEND_LAST));
  CHECK(iba_op_opens_message(RC_SEND_MIDDLE));
  CHECK_FALSE(iba_op_opens_message(RC_SEND_LAST));
  // A whole message as the table allows it.
  const uint8_t seq[] = {RC_SEND_FIRST, RC_SEND_MIDDLE, RC_SEND_MIDDLE, RC_SEND_LAST_IMM, RC_RDMA_WRITE_ONLY};
  uint8_t prev = kNone;
  for (uint8_t op : seq) {
    CHECK(iba_op_may_follow(prev, op));
    prev = op;
  }
}
