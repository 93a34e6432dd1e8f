// iWARP's side of fabrics/connection_close.hpp: the QP's TCP connection.
#include "fabrics/connection_close.hpp"

#include <utility>

#include "fabrics/iwarp/iwarp_qp.hpp"

namespace rdmasim {

bool on_connection_closed(verbs::QueuePair& qp, std::function<void()> disconnected) {
  auto* iw = dynamic_cast<IwarpQp*>(&qp);
  if (!iw) return false;
  iw->on_disconnected(std::move(disconnected));
  return true;
}

}  // namespace rdmasim
