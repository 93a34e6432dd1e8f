// Private data a QP's own connection set-up carries, on a fabric that
// connects QPs itself: iWARP's MPA request or reply (RFC 5044, after RFC
// 6581's IRD and ORD), where rdma_cm's rdma_conn_param.private_data goes
// through iw_cm. The IBA fabrics have none: there the RDMA CM's MADs carry
// it (workloads/nvme/rdma_cm.hpp).
#pragma once

#include <cstddef>
#include <span>

namespace rdmasim {

namespace verbs {
class QueuePair;
}

// Sets what `qp`'s connection set-up will carry (before it reaches RTS);
// false where its fabric's set-up carries none.
bool set_connect_private_data(verbs::QueuePair& qp, std::span<const std::byte> data);

}  // namespace rdmasim
