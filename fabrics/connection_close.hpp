// The end of a QP's connection on a fabric that connects QPs itself: iWARP,
// whose connection is a TCP connection (MPA has no disconnect message: RFC
// 5044, RFC 6581). There moving the QP to ERR closes it (rdma_disconnect
// through iw_cm: a FIN), and the peer's close reaches the consumer as
// rdma_cm's RDMA_CM_EVENT_DISCONNECTED, as a CM DREQ does on the IBA
// fabrics (workloads/nvme/rdma_cm.hpp), whose QPs have no connection of
// their own.
#pragma once

#include <functional>

namespace rdmasim {

namespace verbs {
class QueuePair;
}

// Has `disconnected` called once when the peer ends `qp`'s established
// connection (its QP then in ERR, what was outstanding flushed); false
// where its fabric's QPs have no connection of their own.
bool on_connection_closed(verbs::QueuePair& qp, std::function<void()> disconnected);

}  // namespace rdmasim
