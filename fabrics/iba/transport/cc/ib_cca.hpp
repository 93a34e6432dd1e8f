// InfiniBand congestion control at the source (IBA annex A10.4, the CA's
// reaction): a BECN for the QP raises its congestion control table index
// (CCTI) by CCTI_Increase, up to CCTI_Limit; each CCTI_Timer expiry lowers
// it by one, down to CCTI_Min. The table entry at the index is the
// inter-packet delay the QP inserts after each data packet; here entry i is
// i x delay_step (a linear table, the usual choice). A QP at CCTI 0 is not
// held back. The timer runs only while the index is above its minimum.
#pragma once

#include "core/lazy_timer.hpp"
#include "fabrics/iba/transport/cc/congestion_control.hpp"

namespace rdmasim {

class IbCca final : public QpCongestionControl {
 public:
  IbCca(Simulator& sim, const IbCcaConfig& cfg, DataRate line);
  IbCca(const IbCca&) = delete;
  IbCca& operator=(const IbCca&) = delete;

  std::optional<DataRate> pacing_rate() const override;
  void set_mtu(uint32_t mtu) override { mtu_ = mtu; }
  void on_cnp() override { becn(); }
  void on_ack(const CcAck& a) override {
    if (a.ecn_echo) becn();
  }

  uint32_t index() const { return ccti_; }
  void becn();

 private:
  void on_timer();

  Simulator& sim_;
  const IbCcaConfig& cfg_;
  DataRate line_;
  uint32_t mtu_ = 4096;
  uint32_t ccti_;
  LazyTimer timer_;
};

}  // namespace rdmasim
