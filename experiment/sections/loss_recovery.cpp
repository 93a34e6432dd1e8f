// `loss_recovery:` (go_back_n | irn) and `irn:`, IRN's timers and BDP cap.
// Which fabrics can run IRN is the validate pass's.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

void read_loss_recovery(ExperimentDraft& d, const Entry& e) {
  if (auto v = d.c.choice<LossRecovery>(e, "loss recovery")) d.x.loss_recovery = *v;
  d.loss_recovery = e;
}

void read_irn(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "IRN settings",
                      {"rto_low", "rto_high", "rto_low_packets", "base_rtt", "bdp_packets"});
  if (!f) return;
  IrnConfig& c = d.x.irn;
  d.c.read(*f, "rto_low", c.rto_low, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "rto_high", c.rto_high, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "rto_low_packets", c.rto_low_packets,
           [&](const Entry& v) { return d.c.whole(v, 0, 1u << 20); });
  d.c.read(*f, "base_rtt", c.base_rtt, [&](const Entry& v) { return d.c.positive_time(v); });
  // The receiver's bitmap holds this many PSNs; IBA allows 2^23 unacknowledged.
  d.c.read(*f, "bdp_packets", c.bdp_packets, [&](const Entry& v) { return d.c.whole(v, 0, 1u << 16); });
  if (c.rto_low > c.rto_high) {
    const Entry* at = f->find("rto_low") ? f->find("rto_low") : f->find("rto_high");
    d.c.error(
        at->value, at->path,
        "rto_low (" + to_string(c.rto_low) + ") must not exceed rto_high (" + to_string(c.rto_high) + ")");
  }
}

}  // namespace rdmasim
