#include "fabrics/iba/transport/cc/ib_cca.hpp"

#include <algorithm>

namespace rdmasim {

IbCca::IbCca(Simulator& sim, const IbCcaConfig& cfg, DataRate line)
    : sim_(sim), cfg_(cfg), line_(line), ccti_(cfg.min), timer_(sim, this, [](void* c) {
        static_cast<IbCca*>(c)->on_timer();
      }) {}

// A packet of one MTU, then the table's delay: the rate that spacing makes.
std::optional<DataRate> IbCca::pacing_rate() const {
  if (ccti_ == 0) return std::nullopt;
  const double tx = line_.tx_time(mtu_).to_s();
  const double ipd = (cfg_.delay_step * ccti_).to_s();
  return DataRate(static_cast<uint64_t>(static_cast<double>(line_.bps()) * tx / (tx + ipd)));
}

void IbCca::becn() {
  ccti_ = std::min(ccti_ + cfg_.increase, cfg_.limit);
  if (!timer_.armed()) timer_.arm_after(cfg_.timer);
}

void IbCca::on_timer() {
  if (ccti_ > cfg_.min) --ccti_;
  if (ccti_ > cfg_.min) timer_.arm_after(cfg_.timer);
}

}  // namespace rdmasim
