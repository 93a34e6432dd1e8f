// A tiny network for TCP tests: host a -- switch -- host b, built from real
// Nodes and Ports. Frames carry a one-byte stand-in for the IP header that
// holds the ECN codepoint, so the switch can mark CE; the switch can also
// drop chosen frames and mark above a queue threshold (DCTCP's K).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "core/engine.hpp"
#include "core/packet.hpp"
#include "fabrics/ip/tcp/tcp_connection.hpp"
#include "fabrics/ip/wire/ecn.hpp"
#include "fabrics/ip/wire/tcp.hpp"
#include "nodes/node.hpp"
#include "nodes/port.hpp"

namespace rdmasim::tcp_test {

// One byte in front of the TCP header: the ECN field.
inline void push_ecn(Packet& p, Ecn e) { p.push_front(1)[0] = std::byte{static_cast<uint8_t>(e)}; }
inline Ecn pop_ecn(Packet& p) {
  const Ecn e = Ecn(u8(p.bytes()[0]) & 3);
  p.pull_front(1);
  return e;
}

class TestHost : public Node {
 public:
  TestHost(Simulator& sim, std::string name) : Node(sim, std::move(name)) { add_port(); }
  std::function<void(Packet, bool ce)> on_frame;
  void receive(Port& in, Packet p) override {
    in.release_ingress(0, p.size());
    const bool ce = pop_ecn(p) == Ecn::Ce;
    if (on_frame) on_frame(std::move(p), ce);
  }
  void transmit(Packet p, bool ect) {
    push_ecn(p, ect ? Ecn::Ect0 : Ecn::NotEct);
    port(0).send(std::move(p));
  }
};

// Forwards between its two ports. `drop` sees each frame (TCP bytes) with
// the port it arrived on and may discard it.
class TestSwitch : public Node {
 public:
  TestSwitch(Simulator& sim, std::string name) : Node(sim, std::move(name)) {
    add_port();
    add_port();
  }
  std::function<bool(uint16_t in_port, ConstTcpView seg)> drop;
  uint64_t mark_threshold = UINT64_MAX;  // bytes queued at egress above which ECT frames get CE
  uint64_t marks = 0, dropped = 0, max_queue[2] = {0, 0};

  void receive(Port& in, Packet p) override {
    in.release_ingress(0, p.size());
    Port& out = port(1 - in.index());
    auto tcp = ConstTcpView::check(std::as_const(p).bytes().subspan(1));
    if (drop && tcp && drop(in.index(), *tcp)) {
      ++dropped;
      return;
    }
    const Ecn e = Ecn(u8(p.bytes()[0]) & 3);
    if (is_ect(e) && out.queued_bytes() > mark_threshold) {
      p.bytes()[0] = std::byte{static_cast<uint8_t>(Ecn::Ce)};
      ++marks;
    }
    out.send(std::move(p));
    max_queue[out.index()] = std::max(max_queue[out.index()], out.queued_bytes());
  }
};

// Bytes that differ at every offset, so a misplaced byte shows.
inline std::byte pattern(uint64_t i) {
  return std::byte(static_cast<uint8_t>(i * 131 + (i >> 8) + (i >> 16)));
}

// Sends `total` bytes as records of `record` bytes, as fast as TCP takes them.
struct Source : TcpUpper {
  TcpConnection* c = nullptr;
  uint64_t total = 0, queued = 0;
  size_t record = 0;  // 0: max_record()
  bool established = false, peer_closed = false, closed = false, close_when_done = false;
  TcpCloseReason reason{};
  uint64_t acked = 0;

  void fill() {
    while (c && queued < total) {
      const size_t want = record ? record : c->max_record();
      const size_t n = static_cast<size_t>(std::min<uint64_t>(want, total - queued));
      auto s = c->reserve(n);
      if (s.empty()) return;
      for (size_t i = 0; i < n; ++i) s[i] = pattern(queued + i);
      queued += n;
      c->commit();
    }
    if (close_when_done && queued == total) {
      close_when_done = false;
      c->close();
    }
  }
  void tcp_established() override {
    established = true;
    fill();
  }
  void tcp_receive(std::span<const std::byte>) override {}
  void tcp_acked(uint64_t a) override {
    acked = a;
    fill();
  }
  void tcp_peer_closed() override { peer_closed = true; }
  void tcp_closed(TcpCloseReason r) override {
    closed = true;
    reason = r;
  }
};

// Receives and checks bytes against pattern().
struct Sink : TcpUpper {
  uint64_t received = 0;
  bool intact = true;
  bool established = false, peer_closed = false, closed = false, close_on_fin = false;
  TcpCloseReason reason{};
  TcpConnection* c = nullptr;

  void tcp_established() override { established = true; }
  void tcp_receive(std::span<const std::byte> b) override {
    for (size_t i = 0; i < b.size(); ++i)
      if (b[i] != pattern(received + i)) intact = false;
    received += b.size();
  }
  void tcp_peer_closed() override {
    peer_closed = true;
    if (close_on_fin && c) c->close();
  }
  void tcp_closed(TcpCloseReason r) override {
    closed = true;
    reason = r;
  }
};

struct Testbed {
  Simulator sim;
  PacketPool pool;
  TestHost ha{sim, "a"}, hb{sim, "b"};
  TestSwitch sw{sim, "sw"};
  std::unique_ptr<TcpConnection> a, b;  // a connects, b listens

  // Link a-sw uses `near`, sw-b uses `far` (make it the bottleneck).
  Testbed(const TcpEndpointConfig& ca, const TcpEndpointConfig& cb, const LinkParams& near,
          const LinkParams& far, uint64_t seed = 1) {
    Port::connect(ha.port(0), sw.port(0), near, seed);
    Port::connect(sw.port(1), hb.port(0), far, seed);
    const TcpFlow fa{
        TcpPseudoHeader::v4(Ipv4Address::from_u32(0x0A000001), Ipv4Address::from_u32(0x0A000002)), 49152,
        4791 + 1};
    a = std::make_unique<TcpConnection>(sim, pool, ca, fa, 0x10000000u);
    b = std::make_unique<TcpConnection>(sim, pool, cb, fa.reversed(), 0xF0000000u);
    a->set_output([this](Packet p, bool ect) { ha.transmit(std::move(p), ect); });
    b->set_output([this](Packet p, bool ect) { hb.transmit(std::move(p), ect); });
    ha.on_frame = [this](Packet p, bool ce) { a->receive(std::move(p), ce); };
    hb.on_frame = [this](Packet p, bool ce) { b->receive(std::move(p), ce); };
  }
  void open() {
    b->listen();
    a->connect();
  }
};

// Host ports queue whole windows in push mode, so the default buffer is deep.
inline LinkParams link(uint64_t gbps, Time delay, uint64_t buffer = 4 << 20, double loss = 0) {
  LinkParams l;
  l.rate = DataRate(gbps * 1'000'000'000ull);
  l.delay = delay;
  l.buffer_bytes = buffer;
  l.loss = loss;
  return l;
}

}  // namespace rdmasim::tcp_test
