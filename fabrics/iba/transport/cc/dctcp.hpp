// DCTCP for RoCE (Alizadeh et al., SIGCOMM 2010, section 3.1), as the
// DCTCP baseline of HPCC's simulator runs it at an RDMA NIC (rdma-hw.cc
// HandleAckDctcp): the receiver echoes CE as BECN in the ACK of each marked
// packet; the sender keeps alpha, the EWMA (gain g) of the fraction of its
// packets acknowledged with BECN, updated once a window of data (when an
// ACK passes the PSN sent at the last update); then, on a BECN, it cuts its
// rate by alpha/2 at most once a window (the update comes first, as RFC
// 8257 3.3 orders it); a window without a cut raises the rate by rate_ai
// (DCTCP's one MTU per RTT, as a rate). The QP is paced at the rate and
// keeps at most the BDP at that rate unacknowledged (VAR_WIN). A timeout
// leaves the rate alone, as that simulator does.
#pragma once

#include "fabrics/iba/transport/cc/congestion_control.hpp"

namespace rdmasim {

class Dctcp final : public QpCongestionControl {
 public:
  Dctcp(const DctcpConfig& cfg, DataRate line);

  std::optional<DataRate> pacing_rate() const override;
  std::optional<uint64_t> window() const override;
  void set_mtu(uint32_t mtu) override { mtu_ = mtu; }
  void on_ack(const CcAck& a) override;

  double alpha() const { return alpha_; }
  double rate_bps() const { return rate_; }

 private:
  const DctcpConfig& cfg_;
  const double line_;
  double rate_;
  double alpha_ = 1;  // as Linux starts it: the first marks cut by half
  uint32_t mtu_ = 4096;
  bool started_ = false;
  uint32_t window_end_ = 0;  // alpha is updated once ACKs pass this PSN
  uint32_t batch_ = 1;       // packets in the window alpha is measured over
  uint32_t marked_ = 0;      // BECN ACKs in it
  uint32_t cut_end_ = 0;     // no second cut before ACKs pass this PSN
  bool cut_ = false;
};

}  // namespace rdmasim
