#include "fabrics/ib/ib_fabric.hpp"

#include <cstring>
#include <utility>

#include "fabrics/ib/wire/lrh.hpp"
#include "fabrics/iba/icrc.hpp"
#include "fabrics/iba/opcodes.hpp"
#include "fabrics/iba/wire/grh.hpp"

namespace rdmasim {

namespace {
Gid to_gid(const ibv_gid& g) {
  Gid out;
  std::memcpy(out.octets.data(), g.raw, 16);
  return out;
}
}  // namespace

void seal_ib(Packet& p) {
  if (!p.meta().crc_pending) return;
  p.meta().crc_pending = false;
  fill_ib_crcs(p.bytes());
}

IbFabric::IbFabric(Rnic& nic, const SlToVl& sl_to_vl, int control_sl)
    : IbaFabric(nic), sl_to_vl_(sl_to_vl), control_sl_(control_sl) {}

void IbFabric::encap(Packet& p, const ibv_ah_attr& dest, uint32_t src_qpn, uint32_t dest_qpn) {
  (void)src_qpn;
  (void)dest_qpn;
  // An acknowledgement (IBA 9.7.5.2: ACK or NAK) or a CNP in the control
  // class when there is one; the BTH opcode is the packet's first byte yet.
  uint8_t sl = dest.sl & 0xF;
  if (control_sl_ >= 0) {
    const auto opcode = static_cast<uint8_t>(p.raw_bytes()[0]);
    if (opcode == RC_ACKNOWLEDGE || opcode == CNP) sl = static_cast<uint8_t>(control_sl_);
  }
  // ICRC and VCRC: placeholders until someone observes the frame.
  std::memset(p.push_back(kIbCrcLen).data(), 0, kIbCrcLen);
  p.meta().crc_pending = true;

  const bool global = dest.is_global != 0;
  if (global) {
    Grh grh;
    grh.tclass = dest.grh.traffic_class;
    grh.flow_label = dest.grh.flow_label & 0xFFFFF;
    grh.pay_len = static_cast<uint16_t>(p.size() - 2);  // BTH through ICRC: not the VCRC
    grh.hop_limit = dest.grh.hop_limit ? dest.grh.hop_limit : 64;
    grh.sgid = to_gid(nic_.gid());
    grh.dgid = to_gid(dest.grh.dgid);
    grh.emit(*GrhView::check(p.push_front(kIbGrhLen)));
  }
  const uint8_t vl = sl_to_vl_(sl);
  Lrh lrh;
  lrh.vl = vl;
  lrh.sl = sl;
  lrh.lnh = global ? Lnh::IbaGlobal : Lnh::IbaLocal;
  lrh.dlid = dest.dlid;
  lrh.slid = static_cast<uint16_t>(nic_.lid() | (dest.src_path_bits & 0x7F));
  lrh.pkt_len = lrh_pkt_len(p.size() + kIbLrhLen - 2);  // LRH through ICRC
  lrh.emit(*LrhView::check(p.push_front(kIbLrhLen)));
  p.meta().priority = sl;
  p.meta().vl = vl;
}

bool IbFabric::decap(Packet& p, IbaSource& src) {
  auto lrh = ConstLrhView::check(std::as_const(p).raw_bytes());
  if (!lrh || size_t{lrh->pkt_len()} * 4 + 2 != p.size()) {
    ++ib_stats_.bad_header;
    return false;
  }
  if (lrh->dlid() != nic_.lid() && lrh->dlid() != kPermissiveLid) {
    ++ib_stats_.wrong_dlid;
    return false;
  }
  size_t headers = kIbLrhLen;
  if (lrh->lnh() == Lnh::IbaGlobal) {
    auto grh = ConstGrhView::check(lrh->payload());
    if (!grh || grh->ip_ver() != 6 || grh->next_header() != kGrhNextHeaderIba ||
        size_t{grh->pay_len()} + kIbLrhLen + kIbGrhLen + 2 != p.size()) {
      ++ib_stats_.bad_header;
      return false;
    }
    std::memcpy(src.sgid.data(), grh->sgid().octets.data(), 16);
    std::memcpy(src.dgid.data(), grh->dgid().octets.data(), 16);
    std::memcpy(src.grh.data(), lrh->payload().data(), kIbGrhLen);
    headers += kIbGrhLen;
  } else if (lrh->lnh() != Lnh::IbaLocal) {
    ++ib_stats_.bad_header;  // raw and IPv6 non-IBA packets: no QP takes them
    return false;
  }
  src.slid = lrh->slid();
  src.sl = lrh->sl();
  src.has_grh = lrh->lnh() == Lnh::IbaGlobal;
  if (p.size() < headers + kIbCrcLen) {
    ++ib_stats_.bad_header;
    return false;
  }
  p.pull_front(headers);
  p.pull_back(kIbCrcLen);
  return true;
}

}  // namespace rdmasim
