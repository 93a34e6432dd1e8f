#include "fabrics/connect_private_data.hpp"

#include "fabrics/iwarp/iwarp_qp.hpp"

namespace rdmasim {

bool set_connect_private_data(verbs::QueuePair& qp, std::span<const std::byte> data) {
  auto* iw = dynamic_cast<IwarpQp*>(&qp);
  if (!iw) return false;
  iw->set_private_data(data);
  return true;
}

}  // namespace rdmasim
