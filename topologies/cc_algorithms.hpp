// What each congestion control algorithm asks of the network between the
// NICs, and the reference's per-algorithm settings (HPCC's simulator,
// `profile: hpcc_ns3`). One row per algorithm (cc_algorithms.cpp): the
// fabrics, the switches and the config read these facts instead of
// naming algorithms, so a new algorithm is its row here, its row in
// fabrics/iba/transport/cc/congestion_control.cpp (feedback and factory)
// and its own file there, and no switch statement elsewhere
// (docs/architecture.md, "Adding a congestion control algorithm").
#pragma once

#include "topologies/config.hpp"

namespace rdmasim {

// The congestion signal an algorithm reacts to, and so what the fabric's
// wire and switches must carry.
enum class CcSignal {
  none,          // no algorithm
  nic_timing,    // RTT samples the sending RNIC takes itself (TIMELY, Swift)
  ip_ecn,        // ECN CE marks in the IP header, set by IP switches (RFC 3168)
  ip_telemetry,  // switch telemetry in an IPv4 option (HPCC's INT)
  ib_fecn,       // FECN set by InfiniBand switches (IBA annex A10)
};

struct CcAlgorithmFacts {
  CcSignal signal = CcSignal::none;
  // hpcc_ns3: run.py's ACK_HIGH_PRIO, ACKs, NAKs and CNPs in a strict-priority class.
  bool reference_ack_high_priority = false;
  // hpcc_ns3: the reference's ECN marking for this algorithm's switch
  // (KMIN_MAP/KMAX_MAP/PMAX_MAP, scaled by each link's rate over `rates_per`).
  Bytes reference_kmin{100'000}, reference_kmax{400'000};
  double reference_pmax = 0.2;
  DataRate reference_rates_per{25'000'000'000};
};

const CcAlgorithmFacts& cc_facts(CcAlgorithm a);

}  // namespace rdmasim
