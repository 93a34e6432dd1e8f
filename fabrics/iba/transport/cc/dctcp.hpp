// DCTCP for RoCE (Alizadeh et al., SIGCOMM 2010, section 3.1; as the DCTCP
// baseline of HPCC's simulator, at an RDMA NIC): the receiver echoes CE as
// BECN in the ACK of each marked packet; the sender keeps alpha, the EWMA
// (gain g) of the fraction of its bytes acknowledged with BECN, updated once
// a window of data, and cuts its window by alpha/2 at most once a window
// when BECNs came back; otherwise the window grows by one MTU per window.
#pragma once

#include "fabrics/iba/transport/cc/congestion_control.hpp"

namespace rdmasim {

class Dctcp final : public QpCongestionControl {
 public:
  Dctcp(const DctcpConfig& cfg, DataRate line);

  std::optional<DataRate> pacing_rate() const override { return std::nullopt; }
  std::optional<uint64_t> window() const override { return static_cast<uint64_t>(cwnd_); }
  void set_mtu(uint32_t mtu) override { mtu_ = mtu; }
  void on_ack(const CcAck& a) override;
  void on_timeout() override;

  double alpha() const { return alpha_; }
  double cwnd() const { return cwnd_; }

 private:
  const DctcpConfig& cfg_;
  double max_cwnd_, cwnd_;
  double alpha_ = 1;  // as Linux starts it: the first marks cut by half
  uint32_t mtu_ = 4096;
  bool started_ = false;
  uint32_t window_end_ = 0;  // alpha is updated once ACKs pass this PSN
  uint32_t cut_end_ = 0;     // no second cut before ACKs pass this PSN
  bool cut_ = false;
  uint64_t acked_ = 0, marked_ = 0;  // bytes in the current observation window
};

}  // namespace rdmasim
