// The one seam between a queue pair and its congestion control (IBA
// fabrics): the requester asks it how fast (a pacing rate) and how much (a
// window of unacknowledged bytes) it may send, and tells it what happened
// (a frame sent, an ACK, a CNP, a timeout). Each algorithm is its own file
// in this folder; make_congestion_control picks one from the config.
//
// The receiving side's part (CNPs, echoing CE or FECN as BECN in ACKs,
// echoing switch telemetry) is not per QP state but what the NIC does for
// the algorithm of the run: cc_feedback says what.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "core/engine.hpp"
#include "core/units.hpp"
#include "fabrics/ip/wire/int_telemetry.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

// What one ACK tells the sender (IBA 9.7.6 and the algorithms' feedback).
struct CcAck {
  Time now;
  uint64_t acked_bytes = 0;  // newly acknowledged
  uint32_t acked_packets = 0;
  uint32_t next_psn = 0;                // the requester's next PSN when the ACK arrived
  uint32_t psn = 0;                     // the ACK's PSN
  bool ecn_echo = false;                // BECN set: a packet it acknowledges arrived CE (or FECN)
  std::optional<Time> rtt;              // from the send time of the packet it acknowledges
  int hops = -1;                        // switches the ACK crossed (from its TTL), -1: unknown
  const IntStack* telemetry = nullptr;  // HPCC: the switches' telemetry, echoed
  Time endpoint_delay;                  // Swift: of the RTT, the part spent in the NICs' receive pipelines
};

class QpCongestionControl {
 public:
  virtual ~QpCongestionControl() = default;
  // The rate its data frames keep to; nullopt: line rate, not paced.
  virtual std::optional<DataRate> pacing_rate() const = 0;
  // Bytes it may have unacknowledged; nullopt: no window.
  virtual std::optional<uint64_t> window() const { return std::nullopt; }
  // The path MTU, once the QP knows it (window algorithms count packets).
  virtual void set_mtu(uint32_t) {}
  virtual void on_sent(uint64_t /*bytes*/) {}
  virtual void on_ack(const CcAck&) {}
  virtual void on_cnp() {}
  virtual void on_timeout(Time /*now*/) {}
  // The QP has work again after being idle: timers resume.
  virtual void busy() {}
};

// What the receiving NIC and the requester do for an algorithm.
struct CcFeedback {
  bool cnp_on_ce = false;          // DCQCN: a CNP to the sender of a CE-marked packet
  bool becn_on_ce = false;         // DCTCP: BECN on the ACK of a CE-marked packet
  bool becn_on_fecn = false;       // IB CCA: BECN on the ACK (or a CNP) for a FECN-marked packet
  bool echo_telemetry = false;     // HPCC: the data packet's telemetry into its ACK
  bool request_telemetry = false;  // HPCC: data packets carry room for the switches' telemetry
  bool ack_every_packet = false;   // AckReq on every request packet: per-packet feedback
  bool rtt_samples = false;        // the requester times its packets
};
CcFeedback cc_feedback(CcAlgorithm a);

// A step of rate given per `per` of line rate, for a NIC of `line` b/s
// (HPCC's simulator writes RATE_AI, RATE_HAI and W_AI per 25 Gb/s and
// scales them by each NIC's rate); `per` 0: the step as given.
inline double scaled(DataRate step, DataRate per, double line) {
  const double s = static_cast<double>(step.bps());
  return per.bps() ? s * line / static_cast<double>(per.bps()) : s;
}

// `has_work` tells a timer-driven algorithm whether its QP still has
// anything to send (an idle QP's timers schedule nothing).
using CcHasWork = bool (*)(const void* qp);
std::unique_ptr<QpCongestionControl> make_congestion_control(const CcConfig& cfg, Simulator& sim,
                                                             DataRate line, const void* qp,
                                                             CcHasWork has_work);

}  // namespace rdmasim
