#include "fabrics/iba/iba_fabric.hpp"

#include <cerrno>

#include "fabrics/iba/transport/iba_qp.hpp"
#include "nodes/host/verbs.hpp"

namespace rdmasim {

std::unique_ptr<verbs::QueuePair> IbaFabric::create_qp(verbs::Device& d, verbs::ProtectionDomain& pd,
                                                       uint32_t qpn, const verbs::QpInitAttr& init) {
  if (init.qp_type != IBV_QPT_RC && init.qp_type != IBV_QPT_UC && init.qp_type != IBV_QPT_UD) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  return std::make_unique<IbaQp>(d, pd, qpn, init, nic_, *this);
}

void IbaFabric::receive(Packet p) {
  if (is_link_control(p)) return;
  IbaSource src;
  if (!decap(p, src)) {
    ++stats_.malformed;
    return;
  }
  auto parsed = iba_parse(p.raw_bytes());  // headers only: a deferred payload stays where it is
  if (!parsed) {
    ++stats_.malformed;
    return;
  }
  // Every QP of an IBA fabric is an IbaQp (create_qp above makes them).
  auto* qp = static_cast<IbaQp*>(nic_.device().qp_by_num(parsed->h.dest_qp));
  if (!qp) {
    ++stats_.unknown_qp;  // IBA 9.6.1.2: no such QP, silently dropped
    return;
  }
  qp->receive(*parsed, p.source_of(p.raw_bytes().subspan(parsed->header_len, parsed->payload_len)), src);
}

}  // namespace rdmasim
