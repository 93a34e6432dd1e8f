// `loss_recovery:` (go_back_n | irn) and `irn:`, IRN's timers and BDP cap.
// Which fabrics can run IRN is the validate pass's.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

using namespace keys;

// IRN's timeouts are a NIC's retransmission timer: the paper's are 100 us and 320 us.
ValueType<Time> irn_timeout() { return time_from(kShortestTimer, "a NIC's retransmission timer"); }

const KeyTable<IrnConfig>& irn_keys() {
  static const KeyTable<IrnConfig> t{
      "irn",
      "IRN settings",
      {
          key("rto_low", &IrnConfig::rto_low, irn_timeout(), "100us",
              "RTO_low: the retransmission timeout with `rto_low_packets` or fewer packets in flight; at "
              "most `rto_high`"),
          key("rto_high", &IrnConfig::rto_high, irn_timeout(), "320us", "RTO_high: the timeout otherwise"),
          key("rto_low_packets", &IrnConfig::rto_low_packets, whole(0, 1u << 20, "packets"), "3", "N"),
          key("base_rtt", &IrnConfig::base_rtt, positive_time(), "10us",
              "BDP-FC: at most line rate × `base_rtt` of packets (path MTU) unacknowledged"),
          // The receiver's bitmap holds this many PSNs; IBA allows 2^23 unacknowledged.
          key("bdp_packets", &IrnConfig::bdp_packets, whole(0, 1u << 16, "packets"), "0",
              "the cap in packets instead (0: from `base_rtt`); also the receiver's bitmap"),
      }};
  return t;
}

void read_loss_recovery(ExperimentDraft& d, const Entry& e) {
  if (auto v = d.c.choice<LossRecovery>(e, "loss recovery")) d.x.loss_recovery = *v;
  d.loss_recovery = e;
}

void read_irn(ExperimentDraft& d, const Entry& e) {
  const auto f = irn_keys().read(d.c, e.value, e.path, d.x.irn);
  if (!f) return;
  const IrnConfig& c = d.x.irn;
  if (c.rto_low > c.rto_high)
    order_error(d.c, *f, "rto_low", to_string(c.rto_low), "rto_high", to_string(c.rto_high), false);
}

}  // namespace rdmasim
