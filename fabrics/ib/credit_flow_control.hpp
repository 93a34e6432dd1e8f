// Credit-based link-level flow control (IBA 7.9), one direction of a link.
//
// The receiving port has a buffer per data VL; the sending port may start a
// packet on a VL only when that buffer has room for all of it, counted in
// 64-byte blocks (IBA 7.9.3: one credit is 64 bytes). The receiver frees a
// packet's blocks when its node is done with it (a switch: when the packet
// has left by its output port; an HCA: when it has taken the packet in), and
// the sender learns of it one link delay later: the flow-control packet that
// carries the credits crosses the link (IBA 7.9.4). Flow-control packets are
// not captured and take no link time; their effect is exact: a packet is
// never sent without room, so none is ever dropped for lack of buffer.
//
// A packet lost on the wire (a link going down, `loss`) gives its blocks back
// when it would have arrived, as IBA's FCTBS (total blocks sent)
// resynchronises the credit count after a loss (7.9.4.2).
//
// The channel has two halves that share no state: the sender's (the gate:
// the credits it holds) and the receiver's (the meter: the buffer, and the
// updates it sends back). On a link cut between two engines (parallel/)
// each engine uses the half of the end it runs, and an update crosses to
// the sender's engine through the port's RemoteLink like a frame, keyed
// and timed as one engine schedules it: the link delay keeps it beyond the
// window the receiver's engine ran.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "core/engine.hpp"
#include "nodes/port.hpp"

namespace rdmasim {

inline constexpr uint64_t kCreditBlock = 64;  // bytes a credit stands for (IBA 7.9.3)
constexpr uint64_t credit_blocks(uint64_t bytes) { return (bytes + kCreditBlock - 1) / kCreditBlock; }

class CreditChannel final : public EgressGate, public IngressMeter {
 public:
  // Gate on `sender`, meter on `receiver` (its link peer). Each of `data_vls`
  // VLs gets buffer_bytes / data_vls, rounded down to whole blocks.
  // `receiver_frees_on_arrival`: the receiving node takes every packet out of
  // the buffer the moment it arrives (an HCA, nodes/host/host.cpp), so the
  // credits go back at once whatever class it later names.
  CreditChannel(Simulator& sim, Port& sender, Port& receiver, uint64_t buffer_bytes, uint8_t data_vls,
                bool receiver_frees_on_arrival);

  // EgressGate (the sender's view: credits it holds).
  bool may_send(uint8_t vl, size_t bytes) const override { return credit_blocks(bytes) <= credits_[vl]; }
  void sent(uint8_t vl, size_t bytes) override;
  // Credits the receiver gave back on another engine.
  void remote_update(Time at, uint64_t order, uint8_t vl, uint64_t blocks) override;

  // IngressMeter (the receiver's buffer).
  void hold(uint8_t vl, size_t bytes) override;
  void release(uint8_t vl, size_t bytes) override;
  void lost(uint8_t vl, size_t bytes) override;

  Port& sender() const { return sender_; }
  Port& receiver() const { return receiver_; }
  uint8_t data_vls() const { return data_vls_; }
  uint64_t limit_blocks() const { return limit_; }                      // buffer of one VL, in blocks
  uint64_t credits(uint8_t vl) const { return credits_[vl]; }           // blocks the sender may still send
  uint64_t occupied_blocks(uint8_t vl) const { return occupied_[vl]; }  // blocks in the receiver's buffer

  struct Stats {
    uint64_t packets = 0;      // packets sent on this channel (the sender's half)
    uint64_t lost = 0;         // lost on the wire; their credits came back (the receiver's half)
    uint64_t overruns = 0;     // packets that found the buffer full: never, if the gate works
    uint64_t peak_blocks = 0;  // highest occupancy of any one VL's buffer
  };
  const Stats& stats() const { return stats_; }

 private:
  void give_back(uint8_t vl, uint64_t blocks);  // after the link delay
  void credit_arrives(uint8_t vl, uint64_t blocks);

  Simulator& sim_;
  Port& sender_;
  Port& receiver_;
  uint8_t data_vls_;
  uint64_t limit_;
  bool frees_on_arrival_;
  std::array<uint64_t, Port::kClasses> credits_{};
  std::array<uint64_t, Port::kClasses> occupied_{};
  Stats stats_;
};

// Installs credit flow control on both directions of the link a <-> b, each
// receiving port with `buffer_bytes` of receive buffer shared by the data VLs.
// Both ports classify egress frames by VL. The channels live as long as the
// ports do (each port's observers own the channel it sends on); the
// returned pointers are for reading their state.
struct CreditLink {
  std::shared_ptr<CreditChannel> a_to_b, b_to_a;
};
CreditLink install_credit_flow_control(Simulator& sim, Port& a, Port& b, uint64_t buffer_bytes,
                                       uint8_t data_vls, bool a_frees_on_arrival, bool b_frees_on_arrival);

}  // namespace rdmasim
