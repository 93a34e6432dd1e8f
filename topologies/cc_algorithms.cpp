#include "topologies/cc_algorithms.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

namespace rdmasim {

namespace {

struct Row {
  CcAlgorithm algorithm;
  CcAlgorithmFacts facts;
};

Row row(CcAlgorithm a, CcSignal s, bool ack_high_priority = false) {
  Row r{a, {}};
  r.facts.signal = s;
  r.facts.reference_ack_high_priority = ack_high_priority;
  return r;
}

// DCTCP in HPCC's simulator marks on a step at 30 KB per 10 Gb/s of link
// rate, every packet above it (run.py: KMIN_MAP = KMAX_MAP, PMAX_MAP 1).
Row dctcp() {
  Row r = row(CcAlgorithm::dctcp, CcSignal::ip_ecn);
  r.facts.reference_kmin = r.facts.reference_kmax = Bytes(30'000);
  r.facts.reference_pmax = 1.0;
  r.facts.reference_rates_per = DataRate(10'000'000'000);
  return r;
}

// run.py's ACK_HIGH_PRIO is 1 for dcqcn and timely, 0 for hp and dctcp.
const std::array kRows{
    row(CcAlgorithm::none, CcSignal::none),
    row(CcAlgorithm::dcqcn, CcSignal::ip_ecn, true),
    row(CcAlgorithm::hpcc, CcSignal::ip_telemetry),
    row(CcAlgorithm::timely, CcSignal::nic_timing, true),
    dctcp(),
    row(CcAlgorithm::swift, CcSignal::nic_timing),
    row(CcAlgorithm::ib_cca, CcSignal::ib_fecn),
};

}  // namespace

const CcAlgorithmFacts& cc_facts(CcAlgorithm a) {
  auto it = std::find_if(kRows.begin(), kRows.end(), [a](const Row& r) { return r.algorithm == a; });
  if (it == kRows.end())
    throw std::logic_error("congestion control " + std::string(to_string(a)) +
                           " has no row in cc_algorithms.cpp");
  return it->facts;
}

}  // namespace rdmasim
