// An InfiniBand switch (IBA chapter 18): forwards each packet on the DLID of
// its LRH through the linear forwarding table the subnet manager programmed,
// moves it to the VL that the output port's SL-to-VL table gives its SL, and
// otherwise passes its bytes on unchanged. Lossless: a packet stays in the
// input port's VL buffer (holding the credits of the link it came in on)
// until it has left by its output port, and an output port sends on a VL
// only when the next hop has credits for it (fabrics/ib/credit_flow_control.hpp).
//
// Inside, each output port has one FIFO per VL; the port is handed at most
// one packet of a VL at a time, so a VL without credits never holds back
// another, and the port's round robin over VLs is the VL arbitration
// (IBA 7.6.9, with equal weights).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/ring.hpp"
#include "fabrics/ib/virtual_lanes.hpp"
#include "nodes/node.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

class IbSwitch final : public Node {
 public:
  IbSwitch(Simulator& sim, std::string name, const SwitchConfig& cfg);

  // The switch's own LID (port 0, IBA 18.2.4.1): the subnet manager sets it.
  uint16_t lid() const { return lid_; }
  void set_lid(uint16_t lid) { lid_ = lid; }

  // LinearForwardingTable (IBA 14.2.5.10): the output port for a DLID.
  void set_forwarding(uint16_t dlid, uint16_t port);
  std::optional<uint16_t> forwarding(uint16_t dlid) const;
  void clear_forwarding() { lft_.clear(); }

  // SLtoVLMappingTable of an output port (IBA 14.2.5.8); every port starts
  // with SlToVl::modulo(1) (everything on VL 0).
  void set_sl_to_vl(uint16_t out_port, const SlToVl& t);
  const SlToVl& sl_to_vl(uint16_t out_port) const { return sl2vl_.at(out_port); }

  // Subscribes to the ports' signals; call once every port exists (after the
  // links are wired) and before any packet moves.
  void attach_ports();

  void receive(Port& in, Packet p) override;
  uint64_t queued_bytes(size_t i) const override { return port(i).queued_bytes() + out_[i].queued; }
  // IB congestion control (IBA A10.2.1.1): packets that reach an output
  // holding more than `threshold` bytes leave with BTH FECN set.
  void mark_fecn_above(uint64_t threshold) { fecn_threshold_ = threshold; }

  struct Stats {
    uint64_t forwarded = 0;
    uint64_t no_route = 0;     // DLID not in the table, or the table says the input port
    uint64_t malformed = 0;    // not an IBA packet: short, PktLen wrong, raw or IP LNH
    uint64_t vl_changes = 0;   // packets that left on another VL than they came on (VCRC redone)
    uint64_t fecn_marked = 0;  // IB CCA: packets that left with FECN set here
  };
  const Stats& stats() const { return stats_; }
  std::vector<std::pair<std::string_view, uint64_t>> discards() const override {
    return {{"no_route", stats_.no_route}};
  }
  // Packets waiting inside the switch for an output port (all ports, all VLs).
  size_t waiting() const;
  // Heap bytes its outputs' queues hold.
  size_t queue_bytes() const;

 private:
  // A packet inside the switch and the input buffer it holds.
  struct Held {
    Packet packet;
    uint16_t in_port;
    uint8_t in_class;  // the class its input buffer counted it in (its VL on arrival)
  };
  // What a packet handed to an output port must give back once it has left.
  struct Release {
    uint16_t in_port;
    uint8_t in_class;
    uint32_t bytes;
  };
  // An output's queues are Rings, which allocate nothing until a packet
  // comes (std::deque took 576 bytes each, 10 KiB an output, when it was
  // made): an output that forwards nothing, or the replica of another
  // rank's switch in a split run (docs/parallel.md), costs its handles.
  struct Output {
    Ring<Held> pipeline;  // through the forwarding latency, in order
    Time last;            // when the newest pipelined packet reaches the output
    std::array<Ring<Held>, Port::kClasses> vl_queue;
    uint64_t queued = 0;                                      // bytes in vl_queue
    std::array<Ring<Release>, Port::kClasses> in_port_queue;  // handed to the port, not yet sent
    Ring<Release> on_wire;                                    // being serialised, oldest first
  };

  void reached_output(uint16_t out);
  void feed(uint16_t out);
  void on_tx(uint16_t out, const Packet& p);
  void tx_done(uint16_t out);

  SwitchConfig cfg_;
  uint16_t lid_ = 0;
  std::vector<int16_t> lft_;  // by DLID; -1: no entry
  std::vector<SlToVl> sl2vl_;
  std::vector<Output> out_;  // by port
  Stats stats_;
  uint64_t fecn_threshold_ = UINT64_MAX;
};

}  // namespace rdmasim
