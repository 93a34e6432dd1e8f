// Priority-based flow control (IEEE 802.1Qbb) on the Ethernet ports of a
// node: hosts, L2 bridges, L3 switches.
//
// Ingress: the bytes a node holds for each priority that came in on a port
// are counted; when they reach XOFF the port sends its upstream neighbour a
// PFC frame pausing that priority for the longest time (0xFFFF quanta),
// repeated before it runs out while the bytes stay above XON, and a frame
// with time 0 (resume) once they fall to XON. Egress: a port that receives a
// PFC frame stops starting frames of the paused priorities (its EgressGate)
// for the time the frame asks, quanta of 512 bit times at the link rate
// (802.3 31B.2), or until a resume. Frames already being sent finish. PFC
// frames leave ahead of every queued frame (Port::send_control) and are
// counted in PortStats.pause_frames on both sides. Frame format: IEEE 802.3
// annex 31D (wire/pfc.hpp); a time of 0 for an enabled priority means
// "resume" (802.1Q clause 36).
//
// How long a node holds a frame: a host's NIC gives its buffer back when the
// node calls Port::release_ingress (the IngressMeter). A switch holds the
// frame until it leaves the egress port it was forwarded to (or is dropped),
// which is what its shared buffer does; switches release the meter earlier,
// when they pick the egress port, so for them the count follows the ports'
// rx, tx and drop signals instead (PfcAccounting::until_departed).
//
// "Headroom so nothing is dropped": after XOFF the upstream keeps sending for
// a round trip on the link plus a frame on each side. A switch's XOFF is the
// configured one, lowered where needed so that every ingress port's XOFF, the
// frame that crossed it and its headroom fit in any one egress buffer
// (lossless_thresholds): then no egress queue of a lossless priority can
// overflow, whatever the pattern.
#pragma once

#include <array>
#include <bit>
#include <cassert>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "core/engine.hpp"
#include "core/packet.hpp"
#include "fabrics/ethernet/wire/ethernet.hpp"
#include "fabrics/ethernet/wire/pfc.hpp"
#include "fabrics/network.hpp"
#include "fabrics/pfc_deadlocks.hpp"
#include "nodes/node.hpp"
#include "nodes/port.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

// A switch's buffer shared by its ports, as HPCC's simulator's SwitchMmu
// (switch-mmu.cc) accounts it: per ingress port and priority, `reserve`
// bytes of its own, then bytes from the shared pool, and past the dynamic
// threshold bytes from the port's headroom (a round trip and more on its
// link, which catches what comes after the pause). The threshold:
//   (size - every port's headroom - every port's reserve - shared bytes in use) >> shift
// with shift the port's (alpha = 1/8 at the hosts' rate, doubled per
// doubling of the port's). A priority pauses upstream when its bytes
// past the reserve reach the threshold or it holds headroom bytes, and
// resumes once it holds no headroom and is resume_offset below it.
struct SharedBuffer {
  uint64_t size = 0;
  uint64_t reserve = 4096;
  uint64_t resume_offset = 3072;
  uint64_t total_headroom = 0, total_reserve = 0;
  uint64_t shared_used = 0;
  void used_add(uint64_t b) { shared_used += b; }
  uint64_t threshold(uint32_t shift) const {
    const uint64_t fixed = total_headroom + total_reserve + shared_used;
    return size > fixed ? (size - fixed) >> shift : 0;
  }
};

struct PfcSettings {
  uint8_t classes = 1 << 3;        // bit i: priority i is lossless (paused and counted)
  uint64_t xoff = 256 << 10;       // held bytes of a priority at which it is paused upstream
  uint64_t xon = 128 << 10;        // ... and resumed
  uint16_t pause_quanta = 0xFFFF;  // what an XOFF asks for; refreshed at half of it
  Time watchdog{};                 // PFC watchdog: detection time (zero: none)
  Time watchdog_restore{};         // ... and PFC frames ignored until none came for this long
};

enum class PfcAccounting {
  until_released,  // hosts: Port::release_ingress frees the bytes (the IngressMeter)
  until_departed,  // switches: the frame leaves an egress port or is dropped
};

// Bytes that may still arrive on a link after its receiver decides to
// pause: the PFC frame waits for a frame being sent, crosses the link, the
// peer finishes the frame it is sending, and the wire held a round trip.
uint64_t pfc_headroom(const LinkParams& link, uint32_t max_frame);

// The thresholds a switch with these ports uses: the configured ones,
// lowered so that (ports - 1) * (XOFF + a frame + headroom) fits in the
// smallest egress buffer, but XOFF never below one frame. XON scales with XOFF.
PfcSettings lossless_thresholds(const PfcSettings& configured, const Node& node, uint32_t max_frame);

// PFC on one port: its EgressGate and (hosts) IngressMeter.
class PfcPort final : public EgressGate, public IngressMeter {
 public:
  PfcPort(Port& port, PacketPool& pool, const MacAddress& mac, const PfcSettings& s);
  PfcPort(const PfcPort&) = delete;
  PfcPort& operator=(const PfcPort&) = delete;

  // EgressGate: a paused priority may not start a frame.
  bool may_send(uint8_t cls, size_t) const override { return !(paused_ >> cls & 1); }
  void sent(uint8_t, size_t) override {}
  // IngressMeter (until_released).
  void hold(uint8_t cls, size_t bytes) override { add(cls, bytes); }
  void release(uint8_t cls, size_t bytes) override { remove(cls, bytes); }

  // Bytes of a priority that came in here are held, or no longer held.
  void add(uint8_t cls, uint64_t bytes);
  void remove(uint8_t cls, uint64_t bytes);
  // Thresholds from the node's shared buffer instead of XOFF and XON.
  void share(SharedBuffer* b, uint32_t shift) {
    shared_ = b;
    shift_ = shift;
  }
  // Bytes of `cls` held in the port's headroom (shared buffer only).
  uint64_t headroom_held(uint8_t cls) const { return hdrm_[cls & 7]; }
  // A PFC frame arrived on this port.
  void on_pfc(const PfcFrame& f);

  uint64_t held(uint8_t cls) const { return held_[cls & 7]; }
  bool pausing_peer(uint8_t cls) const { return pausing_ >> cls & 1; }  // our XOFF is in force
  bool paused(uint8_t cls) const { return paused_ >> cls & 1; }         // the peer's is
  const PfcSettings& settings() const { return s_; }
  Port& port() const { return port_; }

  // Paused, with frames queued, since when (Time::max(): not stuck).
  Time stuck_since(uint8_t cls) const;
  // The deadlock detector's watch on `cls`: while it is paused, a check at
  // every multiple of `every` from `detect` after the pause began calls
  // `stuck` if the port is stuck (stuck_since) for at least `detect` then.
  // The checks are the port's node's own events, on a grid of times that
  // does not depend on anything else: which ports are stuck at a grid time
  // is the same however the network is split (parallel/).
  void watch_stuck(uint8_t cls, Time detect, Time every, std::function<void()> stuck);
  // Called when the watchdog drains a priority, with the frames it dropped.
  void on_watchdog(std::function<void(uint8_t cls, size_t dropped)> f) { watchdog_fired_ = std::move(f); }
  bool watchdog_active(uint8_t cls) const { return ignoring_ >> cls & 1; }

  struct Stats {
    uint64_t xoff_sent = 0, xon_sent = 0, received = 0;
    uint64_t max_held = 0;  // the most bytes of a lossless priority held at once
    uint64_t watchdog_events = 0, watchdog_drops = 0;
  };
  const Stats& stats() const { return stats_; }
  // Whether it has needed its per-priority timers yet (a PFC frame sent or received).
  bool has_timers() const { return timers_ != nullptr; }

 private:
  void send_pfc(uint8_t cls, uint16_t quanta);
  void refresh(uint8_t cls);
  void expire(uint8_t cls);
  void resume(uint8_t cls);
  void arm_watchdog(uint8_t cls);
  void watchdog_check(uint8_t cls);
  void restore_check(uint8_t cls);
  void arm_stuck_check();
  void stuck_check();
  void stop_stuck_check(uint8_t cls);

  Port& port_;
  PacketPool& pool_;
  MacAddress mac_;
  const PfcSettings& s_;  // its node's (PfcNode), the same for every port of it
  std::array<uint64_t, 8> held_{};
  SharedBuffer* shared_ = nullptr;
  uint32_t shift_ = 3;
  std::array<uint64_t, 8> hdrm_{};  // of held_, in the headroom (shared buffer)
  bool over_threshold(uint8_t cls) const;
  bool under_resume(uint8_t cls) const;
  uint8_t pausing_ = 0;  // priorities we asked the peer to pause
  uint8_t paused_ = 0;   // priorities the peer asked us to pause
  // The deadlock detector's watch (watch_stuck); kClasses: none.
  uint8_t stuck_cls_ = 8;
  Time stuck_detect_, stuck_every_;
  EventId stuck_check_;
  std::function<void()> stuck_;
  uint8_t ignoring_ = 0;  // priorities whose PFC frames the watchdog ignores
  std::function<void(uint8_t, size_t)> watchdog_fired_;
  // Per priority, what a pause in either direction needs: our XOFF's
  // refresh; the peer's pause's expiry and start; the watchdog's check
  // while paused, when a PFC frame it ignored last came, its restore
  // check. Made by the first PFC frame sent or received (timers()): most
  // ports of a network are never paused, and a split run's replicas of
  // other ranks' ports never run (docs/parallel.md), so they hold none.
  // One lossless class's (only those pause or are paused): 80 bytes each,
  // where eight of everything for every class were 640 a port (21 MiB of
  // a k = 32 run's paused ports).
  struct ClassTimers {
    EventId refresh, expire, watchdog, restore;
    Time paused_since, last_ignored;
  };
  // `cls`'s, by its rank among the lossless classes.
  size_t timer_index(uint8_t cls) const {
    assert(s_.classes >> cls & 1);
    return static_cast<size_t>(std::popcount(static_cast<unsigned>(s_.classes & ((1u << cls) - 1))));
  }
  ClassTimers& timers(uint8_t cls) {
    if (!timers_)
      timers_ = std::make_unique<ClassTimers[]>(static_cast<size_t>(std::popcount(unsigned{s_.classes})));
    return timers_[timer_index(cls)];
  }
  std::unique_ptr<ClassTimers[]> timers_;
  Stats stats_;
};

// PFC on every port of a node. The node keeps it (Node::keep), so it lives
// exactly as long as the ports whose signals reach it.
class PfcNode {
 public:
  // Gives every port of `node` a PfcPort with `s` and subscribes to the
  // ports' signals. Call after the node's links are wired.
  static PfcNode& attach(Node& node, PacketPool& pool, const PfcSettings& s, PfcAccounting accounting,
                         const std::function<MacAddress(uint16_t port)>& port_mac);

  PfcPort& port(size_t i) { return ports_[i]; }
  size_t port_count() const { return count_; }
  // until_departed: the node discarded a frame it had received instead of
  // forwarding it, so its bytes are free.
  void discarded(const Packet& p);

  PfcNode(Node& node, PacketPool& pool, const PfcSettings& s, PfcAccounting accounting,
          const std::function<MacAddress(uint16_t port)>& port_mac);  // use attach()
  ~PfcNode();
  PfcNode(const PfcNode&) = delete;
  PfcNode& operator=(const PfcNode&) = delete;
  // The node's ports share `b` (switches; SharedBuffer).
  void share(const SharedBuffer& b) { shared_ = b; }
  SharedBuffer* shared() { return shared_ ? &*shared_ : nullptr; }

 private:
  // until_departed: a frame's count rides in its metadata (PacketMeta::pfc_bytes).
  void on_rx(uint16_t port, Packet& p);
  void on_gone(Packet& p);

  // Every frame a switch forwards passes on_rx and on_gone, which reach the
  // frame's ingress PfcPort and the buffer: the ports side by side and the
  // buffer in place, so that each is one cache miss from the node, not
  // two or three (a k = 32 fat tree's frames find none of them in cache).
  PfcAccounting accounting_;
  PfcSettings settings_;  // every port's
  std::optional<SharedBuffer> shared_;
  size_t count_ = 0;
  PfcPort* ports_ = nullptr;  // count_ of them, built in place
};

// Looks for PFC deadlocks: a cycle of ports, each paused (the PFC priority)
// with frames waiting for at least cfg.pfc_config.deadlock_detect, where
// each port's peer node has the next one. Each port is looked at on a grid
// of times, every quarter of the detection time (PfcPort::watch_stuck),
// only while it is paused; a port stuck at a grid time goes into
// net.pfc_stuck. PfcDeadlockFinder finds the cycles among the ports stuck
// at each grid time, so a run split over ranks finds the same ones from
// the pooled lists of its ranks.
void detect_pfc_deadlocks(Network& net, const std::vector<PfcNode*>& nodes);

// Whether a frame is an 802.1Qbb PFC frame (MAC control opcode 0x0101).
bool is_pfc_frame(std::span<const std::byte> frame);

// The PFC settings an experiment asks for: its priority, XOFF and XON.
PfcSettings pfc_settings(const PfcConfig& c);

// Makes `node`'s ports share one buffer (pfc.shared_buffer), its size per
// `host_rate` when pfc.shared_buffer_per says so.
void share_buffer(PfcNode& pfc, Node& node, const PfcConfig& c, uint64_t host_rate);

// flow_control: pfc on a whole network: hosts count until released, every
// other node until departed with lossless_thresholds. `port_mac` gives the
// source MAC of each node's PFC frames. Returns the PfcNode of each node by
// graph index.
std::vector<PfcNode*> enable_pfc(Network& net,
                                 const std::function<MacAddress(int node, uint16_t port)>& port_mac);

}  // namespace rdmasim
