// A port is one end of a full-duplex link. Its egress side queues frames per
// traffic class (802.1p priority on Ethernet, virtual lane on InfiniBand),
// serialises one frame at a time at the link rate, and delivers it to the
// peer port after the propagation delay. Flow control (PFC, IB credits)
// plugs in as a gate on the egress side and a meter on the ingress side.
// Capture and statistics observe the port through its signals.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "core/packet.hpp"
#include "core/random.hpp"
#include "core/ring.hpp"
#include "core/units.hpp"

namespace rdmasim {

class Node;
class Port;

struct LinkParams {
  DataRate rate{100'000'000'000};
  Time delay = Time::us(1);
  uint64_t buffer_bytes = 1 << 20;  // egress queue limit, all classes together
  double loss = 0;                  // probability that a frame is lost on the wire
  uint32_t wire_overhead = 0;       // bytes per frame not in the capture (preamble, IFG, FCS)
  // The shortest frame the link carries, as captured: a shorter one is
  // padded with zeros to this many bytes when it is queued, so that the
  // wire, the capture, the counters and the receiver all see the pad
  // (Ethernet: 60, the 64-byte minimum less the FCS; 0: no minimum).
  uint32_t min_frame = 0;
};

struct PortStats {
  uint64_t tx_frames = 0, rx_frames = 0;
  uint64_t tx_bytes = 0, rx_bytes = 0;
  uint64_t drops = 0;         // tail drops at egress, frames lost on the wire or on a down link
  uint64_t link_drops = 0;    // of those: lost on the wire, on a down link or on a port with no link
  uint64_t pause_frames = 0;  // PFC frames sent and received
  uint64_t ecn_marks = 0;
  uint64_t max_queue_bytes = 0;  // the most bytes the egress queue ever held
  Time credit_wait;              // time with frames queued but no class allowed to send
};

// Egress gate: may a frame of `cls` and `bytes` start now? PFC pauses a class;
// IB flow control counts credits. `sent` is told of every frame that starts.
class EgressGate {
 public:
  virtual ~EgressGate() = default;
  virtual bool may_send(uint8_t cls, size_t bytes) const = 0;
  virtual void sent(uint8_t cls, size_t bytes) = 0;
  // A flow-control update the peer's meter sent from another engine
  // (RemoteLink::gate_update): `amount` of `cls` for this gate, due at
  // `at` and keyed `order` as the peer keyed it.
  virtual void remote_update(Time at, uint64_t order, uint8_t cls, uint64_t amount);
};

// Ingress meter: told when a received frame takes buffer space in the node
// and when the node gives that space back (forwarded or consumed).
class IngressMeter {
 public:
  virtual ~IngressMeter() = default;
  virtual void hold(uint8_t cls, size_t bytes) = 0;
  virtual void release(uint8_t cls, size_t bytes) = 0;
  // A frame of `cls` and `bytes` sent to this port was lost on the wire
  // (loss, a link down): it never takes buffer space here.
  virtual void lost(uint8_t cls, size_t bytes) {
    (void)cls;
    (void)bytes;
  }
};

// The other end of a link cut between two engines (parallel/): told when
// the port put a frame on the wire, which it takes from Port::wire() to
// send to the engine that runs the peer; and given the link-level updates
// a meter sends back to its peer's gate (IB credits), which that engine
// hands to the gate's remote_update. Both arrive at least a link delay
// after they were sent.
class RemoteLink {
 public:
  virtual ~RemoteLink() = default;
  virtual void sent(Port& from) = 0;
  virtual void gate_update(Port& gate, Time at, uint64_t order, uint8_t cls, uint64_t amount) = 0;
};

class Port {
 public:
  static constexpr size_t kClasses = 8;
  // A frame on the wire: lost (by the loss draw or a link going down), when
  // it arrives, and the key of its arrival event.
  struct InFlight {
    Packet packet;
    bool lost;
    Time at;
    uint64_t order;
  };
  using Observer = std::function<void(Time, Packet&)>;

  Port(Simulator& sim, Node& owner, uint16_t index) : sim_(sim), owner_(owner), index_(index) {}
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  // Joins two ports into a link (both directions use `params`).
  static void connect(Port& a, Port& b, const LinkParams& params, uint64_t seed);

  Node& owner() const { return owner_; }
  uint16_t index() const { return index_; }
  Port* peer() const { return peer_; }
  const LinkParams& params() const { return params_; }
  // This end's egress queue limit (a switch whose ports share a buffer).
  void set_buffer_bytes(uint64_t b) { params_.buffer_bytes = b; }
  bool connected() const { return peer_ != nullptr; }
  // The bytes a frame of `bytes` (captured bytes) takes on the wire: padded
  // to the link's minimum frame, plus its per-frame overhead.
  uint64_t wire_bytes(size_t bytes) const {
    return std::max<uint64_t>(bytes, params_.min_frame) + params_.wire_overhead;
  }
  // Time to serialise a frame of `bytes` (captured bytes; as wire_bytes
  // counts them). Frames come in few sizes: the last answer is kept, which
  // spares a division on most frames.
  Time tx_time(size_t bytes) const {
    if (bytes != last_tx_bytes_) {
      last_tx_bytes_ = bytes;
      last_tx_time_ = params_.rate.tx_time(wire_bytes(bytes));
    }
    return last_tx_time_;
  }
  bool up() const { return up_; }

  // Queues a frame for transmission in class meta.priority (or meta.vl when
  // the node says so), padded to the link's minimum frame first. Returns
  // false and counts a drop when the queue is full.
  // A frame may not start before `ready` (a switch's forwarding latency): it
  // holds its buffer space from now on, and frames of one class keep their order.
  bool send(Packet p, Time ready = Time{});
  // Like send() (padded too), ahead of every queued frame and past any
  // gate: MAC control frames (PFC PAUSE) and IB link packets.
  void send_control(Packet p);

  // Link state, both directions. Frames on the wire when it goes down are lost.
  static void set_link_up(Port& a, bool up);

  uint64_t queued_bytes() const { return queued_bytes_; }
  size_t queued_frames() const { return queued_frames_; }
  uint64_t queued_bytes(uint8_t cls) const { return class_bytes_[cls]; }
  // Serialising a frame right now.
  bool busy() const { return sim_.now() < busy_until_; }

  void set_gate(EgressGate* g) { gate_ = g; }
  EgressGate* gate() const { return gate_; }
  void set_meter(IngressMeter* m) { meter_ = m; }
  IngressMeter* meter() const { return meter_; }
  // Drops every frame queued in class `cls` (not the one being sent), each
  // whole through the drop signal; returns how many (a PFC watchdog).
  size_t drain(uint8_t cls);
  // Re-examines the queues: a gate calls this when a class may send again.
  void kick() {
    if (!busy()) start_next();
  }
  // The class a frame queues in: its priority, or its VL on InfiniBand.
  void classify_by_vl(bool on) { by_vl_ = on; }
  // Classes served before every other (strict priority, highest class
  // first), e.g. a control class for ACKs and CNPs; the rest round robin.
  void set_strict_classes(uint8_t mask) { strict_ = mask; }
  uint8_t strict_classes() const { return strict_; }

  // Tells the ingress meter that the node is done with a received frame.
  void release_ingress(uint8_t cls, size_t bytes) {
    if (meter_) meter_->release(cls, bytes);
  }
  // The same for a whole frame, in the class it was counted in on arrival.
  void release_ingress(const Packet& p) { release_ingress(class_of(p), p.size()); }

  void on_tx(Observer f) { tx_observers_.push_back(std::move(f)); }
  void on_rx(Observer f) { rx_observers_.push_back(std::move(f)); }
  void on_drop(Observer f) { drop_observers_.push_back(std::move(f)); }
  // Called each time a frame has left (a switch or NIC refills the queue
  // from it). A user that is often idle may turn it off meanwhile with
  // want_tx_ready(false), which spares an event per frame.
  void on_tx_ready(std::function<void()> f) {
    tx_ready_ = std::move(f);
    want_ready_ = true;
  }
  void want_tx_ready(bool on) {
    want_ready_ = on;
    if (on) arm_tx_done();
  }

  PortStats& stats() { return stats_; }
  const PortStats& stats() const { return stats_; }

  // A cut link: frames this port sends go to `r` instead of arriving here.
  void set_remote(RemoteLink* r) { remote_ = r; }
  RemoteLink* remote() const { return remote_; }
  // The frames on the wire, oldest first.
  Ring<InFlight>& wire() { return wire_; }
  // A frame this port's twin sent on the engine that runs this port's node:
  // it arrives at f.at, keyed as the sender keyed it. Its sender marked it
  // lost for a fault until it was handed over; a fault after that (every
  // engine runs the experiment's events) marks it here.
  void put_on_wire(InFlight f);

 private:
  uint8_t class_of(const Packet& p) const { return (by_vl_ ? p.meta().vl : p.meta().priority) & 7; }
  void start_next();
  // Starts the front frame of `cls` if it is ready and its gate lets it.
  bool try_class(uint8_t cls, Time now, Time& earliest, bool& gated);
  void transmit(Packet p);
  void tx_done();
  void arm_tx_done();
  void arrive();
  void schedule_arrival();  // of the oldest frame on the wire
  void drop(Packet& p, bool on_link = false);
  void note_blocked(bool blocked);
  void wake_at(Time t);

  // A queued frame and when it may start (also its meta().enqueued): the
  // queue's own copy spares start_next a read of the frame's buffer, which
  // has usually left the cache while the frame waited.
  struct Queued {
    Packet packet;
    Time ready;
  };
  // A class queue or the wire that empties gives back room beyond this
  // many frames (Ring::shrink_if_empty): what a busy port reuses stays.
  static constexpr size_t kKeptQueue = 64;

  // In the order a frame's hop reads them: with tens of thousands of busy
  // ports (a k = 32 fat tree) a port has usually left the cache between
  // two of its frames, and each cache line a hop touches is a miss. The
  // first 128 bytes hold what every frame reads, then the link and the
  // control queue, the counters and signals; the class queues and what is
  // rarely read come last. (Aligning the port to a line measured no
  // faster and cost 8 bytes a port.)
  Simulator& sim_;
  Node& owner_;
  Port* peer_ = nullptr;
  Time busy_until_;  // the wire is taken until then
  uint64_t queued_bytes_ = 0;
  size_t queued_frames_ = 0;
  EgressGate* gate_ = nullptr;
  IngressMeter* meter_ = nullptr;

  Ring<InFlight> wire_;  // frames serialised onto the link, oldest first
  RemoteLink* remote_ = nullptr;
  uint16_t index_;
  bool up_ = true;
  bool tx_done_pending_ = false;
  bool want_ready_ = false;
  bool by_vl_ = false;
  uint8_t rr_next_ = 0;   // round-robin position among classes
  uint8_t nonempty_ = 0;  // bit c set: class c has frames queued
  uint8_t strict_ = 0;    // bit c set: class c is served first
  bool blocked_ = false;
  mutable size_t last_tx_bytes_ = SIZE_MAX;
  mutable Time last_tx_time_;

  LinkParams params_;
  Ring<Packet> control_;

  PortStats stats_;
  std::vector<Observer> tx_observers_, rx_observers_, drop_observers_;

  std::array<uint64_t, kClasses> class_bytes_{};
  std::array<Ring<Queued>, kClasses> queues_;
  Rng loss_rng_;
  Time blocked_since_;
  EventId wake_;  // pending re-examination for a frame not ready yet
  Time wake_time_;
  std::function<void()> tx_ready_;
};

}  // namespace rdmasim
