// Decoded transport headers <-> bytes, through the typed views of
// fabrics/iba/wire/ and the opcode table (which says which extension headers
// follow the BTH, and where).
#include <cstring>

#include "fabrics/iba/opcodes.hpp"
#include "fabrics/iba/transport/headers.hpp"
#include "fabrics/iba/wire/aeth.hpp"
#include "fabrics/iba/wire/atomic_ack_eth.hpp"
#include "fabrics/iba/wire/atomic_eth.hpp"
#include "fabrics/iba/wire/bth.hpp"
#include "fabrics/iba/wire/deth.hpp"
#include "fabrics/iba/wire/immdt.hpp"
#include "fabrics/iba/wire/reth.hpp"

namespace rdmasim {

bool iba_emit(Packet& p, const IbaHeaders& h) {
  const IbaOpInfo& info = kIbaOps[h.opcode];
  if (!info.valid()) return false;
  const uint8_t pad = iba_pad_count(p.size());
  if (pad) std::memset(p.push_back(pad).data(), 0, pad);
  const std::span<std::byte> hdr = p.push_front(info.header_len);
  auto at = [&](IbaHeader k) { return hdr.subspan(info.offset_of(k)); };

  Bth bth;
  bth.opcode = IbaOpcode(h.opcode);
  bth.solicited = h.solicited;
  bth.pad_count = pad;
  bth.pkey = h.pkey;
  bth.fecn = h.fecn;
  bth.becn = h.becn;
  bth.dest_qp = h.dest_qp;
  bth.ack_req = h.ack_req;
  bth.psn = h.psn;
  bth.emit(*BthView::check(hdr));
  if (info.has(IbaHeader::RETH)) Reth{h.va, h.rkey, h.dma_len}.emit(*RethView::check(at(IbaHeader::RETH)));
  if (info.has(IbaHeader::AETH)) Aeth{h.syndrome, h.msn}.emit(*AethView::check(at(IbaHeader::AETH)));
  if (info.has(IbaHeader::DETH)) Deth{h.qkey, h.src_qp}.emit(*DethView::check(at(IbaHeader::DETH)));
  if (info.has(IbaHeader::AtomicETH))
    AtomicEth{h.va, h.rkey, h.swap_add, h.compare}.emit(*AtomicEthView::check(at(IbaHeader::AtomicETH)));
  if (info.has(IbaHeader::AtomicAckETH))
    AtomicAckEth{h.orig}.emit(*AtomicAckEthView::check(at(IbaHeader::AtomicAckETH)));
  if (info.has(IbaHeader::ImmDt)) ImmDt{h.imm}.emit(*ImmDtView::check(at(IbaHeader::ImmDt)));
  return true;
}

std::optional<IbaParsed> iba_parse(std::span<const std::byte> bytes) {
  auto bth_view = ConstBthView::check(bytes);
  if (!bth_view) return std::nullopt;
  const IbaOpInfo& info = kIbaOps[bth_view->opcode()];
  if (!info.valid() || bytes.size() < info.header_len) return std::nullopt;
  const Bth bth = Bth::parse(*bth_view);
  if (bytes.size() < info.header_len + bth.pad_count) return std::nullopt;

  IbaParsed out;
  IbaHeaders& h = out.h;
  h.opcode = bth.opcode;
  h.solicited = bth.solicited;
  h.ack_req = bth.ack_req;
  h.fecn = bth.fecn;
  h.becn = bth.becn;
  h.pkey = bth.pkey;
  h.dest_qp = bth.dest_qp;
  h.psn = bth.psn;
  auto at = [&](IbaHeader k) { return bytes.subspan(info.offset_of(k)); };
  if (info.has(IbaHeader::RETH)) {
    const Reth r = Reth::parse(*ConstRethView::check(at(IbaHeader::RETH)));
    h.va = r.va;
    h.rkey = r.rkey;
    h.dma_len = r.dma_len;
  }
  if (info.has(IbaHeader::AETH)) {
    const Aeth a = Aeth::parse(*ConstAethView::check(at(IbaHeader::AETH)));
    h.syndrome = a.syndrome;
    h.msn = a.msn;
  }
  if (info.has(IbaHeader::DETH)) {
    const Deth d = Deth::parse(*ConstDethView::check(at(IbaHeader::DETH)));
    h.qkey = d.qkey;
    h.src_qp = d.src_qp;
  }
  if (info.has(IbaHeader::AtomicETH)) {
    const AtomicEth a = AtomicEth::parse(*ConstAtomicEthView::check(at(IbaHeader::AtomicETH)));
    h.va = a.va;
    h.rkey = a.rkey;
    h.swap_add = a.swap_add;
    h.compare = a.compare;
  }
  if (info.has(IbaHeader::AtomicAckETH))
    h.orig = AtomicAckEth::parse(*ConstAtomicAckEthView::check(at(IbaHeader::AtomicAckETH))).original;
  if (info.has(IbaHeader::ImmDt)) h.imm = ImmDt::parse(*ConstImmDtView::check(at(IbaHeader::ImmDt))).imm;
  out.header_len = info.header_len;
  out.payload_len = bytes.size() - info.header_len - bth.pad_count;
  return out;
}

}  // namespace rdmasim
