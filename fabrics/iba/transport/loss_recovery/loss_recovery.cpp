#include "fabrics/iba/transport/loss_recovery/loss_recovery.hpp"

#include "fabrics/iba/transport/loss_recovery/go_back_n.hpp"
#include "fabrics/iba/transport/loss_recovery/irn_recovery.hpp"

namespace rdmasim {

QpLossRecovery& go_back_n() {
  static GoBackN shared;
  return shared;
}

// IRN runs on RC QPs only: UC has no acknowledgements to recover with.
std::unique_ptr<QpLossRecovery> make_loss_recovery(const IrnConfig* irn, ibv_qp_type type) {
  if (irn && type == IBV_QPT_RC) return std::make_unique<IrnRecovery>(*irn);
  return nullptr;
}

}  // namespace rdmasim
