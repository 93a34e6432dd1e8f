// What the IBA queue pair's role files (iba_qp.cpp, requester.cpp,
// completer.cpp, responder.cpp) share: AETH syndromes, the ACK timeout and
// the kinds of work request. Internal to fabrics/iba/transport/.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/units.hpp"
#include "nodes/host/verbs.hpp"

namespace rdmasim::iba_qp {

using verbs::SendWqe;

// AETH syndrome (IBA 9.3.5): bits 6..5 say ACK (00), RNR NAK (01) or NAK (11).
inline constexpr uint8_t kAckSyndrome = 0x1F;  // ACK, credit field 11111: end-to-end credits not used
inline constexpr uint8_t kNakSeqError = 0x60;
inline constexpr uint8_t kNakInvalidRequest = 0x61;
inline constexpr uint8_t kNakRemoteAccess = 0x62;
inline constexpr uint8_t kNakRemoteOp = 0x63;
inline bool is_rnr_nak(uint8_t s) { return (s & 0x60) == 0x20; }
inline bool is_nak(uint8_t s) { return (s & 0x60) == 0x60; }

// Local ACK timeout: 4.096 us * 2^timeout (IBA 9.7.6.1.3); 0 means infinite.
inline Time ack_timeout(uint8_t t) {
  return t == 0 ? Time::max() : Time::ns(4096) * (int64_t{1} << std::min<int>(t, 31));
}

// Request packets without AckReq before one asks again (rxe's RXE_MAX_PKT_PER_ACK).
inline constexpr uint32_t kMaxPacketsPerAck = 64;

inline bool is_read(const SendWqe& w) { return w.opcode == IBV_WR_RDMA_READ; }
inline bool is_atomic(const SendWqe& w) {
  return w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}
// A message that takes a receive WQE at the responder (IBA 9.7.5.2.3).
inline bool takes_recv(const SendWqe& w) {
  return w.opcode == IBV_WR_SEND || w.opcode == IBV_WR_SEND_WITH_IMM || w.opcode == IBV_WR_SEND_WITH_INV ||
         w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
}

}  // namespace rdmasim::iba_qp
