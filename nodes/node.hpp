// A node of the network: a host, a switch or a router. It owns its ports and
// is handed every frame that arrives on one of them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/engine.hpp"
#include "nodes/port.hpp"

namespace rdmasim {

class Node {
 public:
  Node(Simulator& sim, std::string name) : sim_(sim), name_(std::move(name)) {}
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const std::string& name() const { return name_; }
  Simulator& sim() const { return sim_; }
  // The engine context its events run in and are keyed by (core/engine.hpp):
  // its graph index + 1, set by whoever builds the network.
  Context context() const { return ctx_; }
  void set_context(Context c) { ctx_ = c; }

  Port& add_port() {
    ports_.push_back(std::make_unique<Port>(sim_, *this, static_cast<uint16_t>(ports_.size())));
    return *ports_.back();
  }
  Port& port(size_t i) const { return *ports_[i]; }
  // Keeps `part` (state a fabric adds to the node, as PFC's) alive as long
  // as the node, so that the ports' signals may reach it by a plain pointer.
  void keep(std::shared_ptr<void> part) { parts_.push_back(std::move(part)); }
  size_t port_count() const { return ports_.size(); }

  // A frame has fully arrived on `in`. The node owns it now and must call
  // in.release_ingress() once it no longer holds the frame's buffer space.
  virtual void receive(Port& in, Packet p) = 0;
  // Bytes waiting to leave port `i`: its queue, and what the node holds for
  // it beyond (an IB switch keeps its output queues itself).
  virtual uint64_t queued_bytes(size_t i) const { return port(i).queued_bytes(); }
  // Frames it received and discarded by its own decision, by reason (a
  // switch: "no_route", "ttl_expired"), beyond what its ports count (queue
  // and link drops). Empty for a node that decides none (results.json
  // `switches` lists the nodes that do).
  virtual std::vector<std::pair<std::string_view, uint64_t>> discards() const { return {}; }
  // The link of port `p` went down or came up (a fault): a host's device
  // tells its programs (ibv_get_async_event).
  virtual void link_changed(Port& p, bool up) {
    (void)p;
    (void)up;
  }

 protected:
  Simulator& sim_;
  std::string name_;
  Context ctx_ = 0;
  std::vector<std::shared_ptr<void>> parts_;  // before ports_: the ports go first
  std::vector<std::unique_ptr<Port>> ports_;
};

}  // namespace rdmasim
