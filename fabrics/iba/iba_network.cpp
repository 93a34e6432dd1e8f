#include "fabrics/iba/iba_network.hpp"

#include "topologies/experiment_draft.hpp"

namespace rdmasim {

// IBA path MTUs (IBA 7.7.8).
std::string IbaNet::mtu_error(uint32_t mtu) const {
  if (is_iba_mtu(mtu)) return {};
  return std::string(name()) + " needs an IBA MTU: 256, 512, 1024, 2048 or 4096, got " + std::to_string(mtu);
}

// IRN's extension header rides in an IPv4 option (docs/reliability.md#irn-loss-recovery):
// a fabric whose frames carry one says so.
std::string IbaNet::recovery_error(LossRecovery r) const {
  if (r == LossRecovery::go_back_n) return {};
  return "its extension header rides in an IPv4 option, and " + std::string(name()) +
         " frames have no IP header";
}

// The operations each IBA service type supports (IBA 9.8.3, table 40).
bool IbaNet::check_workload(ExperimentDraft& d, const WorkloadConfig& w, const WorkloadSites& at) const {
  const WorkloadKind op = basic_op(w);
  const bool send = op == WorkloadKind::send || op == WorkloadKind::send_imm;
  if (w.qp == QpType::ud && !send) {
    d.c.error(at.qp.value, at.qp.path,
              "UD QPs carry only SEND; " + w.op + " needs qp: rc" +
                  (op == WorkloadKind::rdma_write || op == WorkloadKind::rdma_write_imm ? " or uc" : ""));
  } else if (w.qp == QpType::uc && (op == WorkloadKind::rdma_read || is_atomic(op))) {
    d.c.error(at.qp.value, at.qp.path, "UC QPs have no RDMA READ or atomics; " + w.op + " needs qp: rc");
  }
  if (w.qp != QpType::ud || !send) return false;
  const uint32_t mtu = path_mtu(d.x);
  // A flow is one message of a size its CDF draws: the largest must fit.
  const bool flows = w.kind == WorkloadKind::flows;
  const uint64_t largest = flows ? w.flows.largest() : w.size.count();
  if (largest > mtu) {
    const Entry& e = at.size ? *at.size : at.kind;
    d.c.error(e.value, e.path,
              "a UD message fits in one packet: at most the path MTU (" + std::to_string(mtu) + " bytes), " +
                  (flows ? "but the cdf " + w.flows.cdf + " draws flows of up to " + std::to_string(largest) +
                               " bytes"
                         : "got " + to_string(w.size)));
  }
  return true;
}

}  // namespace rdmasim
