// The IBA transport headers of one packet in decoded form: what the QP state
// machines read and write. The codec turns it into bytes (BTH, extension
// headers, payload, pad) with the typed views of fabrics/iba/wire/.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/packet.hpp"

namespace rdmasim {

struct IbaHeaders {
  uint8_t opcode = 0;
  bool solicited = false;
  bool ack_req = false;
  bool fecn = false;  // IB CCA: a switch saw congestion on the way (IBA A10.2.1)
  bool becn = false;  // CNP, and congestion echoed to the sender in an ACK
  uint16_t pkey = 0xFFFF;
  uint32_t dest_qp = 0;
  uint32_t psn = 0;
  // RETH
  uint64_t va = 0;
  uint32_t rkey = 0;
  uint32_t dma_len = 0;
  // AETH
  uint8_t syndrome = 0;
  uint32_t msn = 0;
  // DETH
  uint32_t qkey = 0;
  uint32_t src_qp = 0;
  // AtomicETH
  uint64_t swap_add = 0;
  uint64_t compare = 0;
  // AtomicAckETH
  uint64_t orig = 0;
  // ImmDt, as a number (ibv_wc/ibv_send_wr hold it in network byte order)
  uint32_t imm = 0;
};

// Writes the transport headers in front of the payload already in `p` (whose
// bytes are exactly the payload) and pads it to a 4-byte multiple. The
// fabric adds its own headers and the ICRC. False for an unknown opcode.
bool iba_emit(Packet& p, const IbaHeaders& h);

// Parses transport headers at the start of `bytes` (which end before the
// ICRC). Returns the header length consumed and the payload length (pad
// excluded), or nullopt for an unknown opcode or a short packet.
struct IbaParsed {
  IbaHeaders h;
  size_t header_len = 0;
  size_t payload_len = 0;
};
std::optional<IbaParsed> iba_parse(std::span<const std::byte> bytes);

}  // namespace rdmasim
