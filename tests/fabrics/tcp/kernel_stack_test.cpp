// fabric: tcp's host stack (fabrics/tcp: KernelNic, KernelTcp) on a built
// network, used as a workload uses it, through the NIC's SocketStack and
// socket programs: a connection set up across the switch, the receive
// window its reader opens, retransmission over a lossy link, UDP ports and
// datagrams.
#include <doctest/doctest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "fabrics/ip/wire/ipv4.hpp"
#include "fabrics/tcp/kernel_nic.hpp"
#include "fabrics/tcp/kernel_tcp.hpp"
#include "nodes/host/kernel/socket_stack.hpp"
#include "nodes/host/kernel/stream_socket.hpp"
#include "nodes/host/kernel/udp_socket.hpp"
#include "tests/fixtures/network.hpp"

using namespace rdmasim;

namespace {

std::vector<std::byte> pattern(size_t n) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::byte((i * 131 + i / 4099) & 0xFF);
  return v;
}

// A TCP connection from host a (client) to host b (server) of a two-host
// tcp network, each end a socket program.
struct Connection {
  explicit Connection(LinkConfig link = {}) : n(test::two_hosts("tcp", link)) {
    auto [c, s] = a().connect(client, b(), server, 1000, 5000);
    client_end = std::move(c);
    server_end = std::move(s);
    Simulator::Scope as(n.net.sim, n.host(1).context());
    server_end->listen();
  }
  SocketStack& a() { return socket_stack_of(n.host(0), "a test"); }
  SocketStack& b() { return socket_stack_of(n.host(1), "a test"); }
  // The protocol ends below the sockets.
  const KernelTcp& tx() const { return static_cast<const KernelTcp&>(*client_end); }
  const KernelTcp& rx() const { return static_cast<const KernelTcp&>(*server_end); }
  void run_until(Time t) { n.net.sim.run(t); }

  // The client connects and sends `data`.
  void send(const std::vector<std::byte>& data) {
    Simulator::Scope as(n.net.sim, n.host(0).context());
    [](Connection& c, std::vector<std::byte> data) -> Task {  // a copy: the frame outlives the call
      Process& p = c.n.host(0).spawn("client");
      co_await c.client.connect(c.n.host(0).cpu(), p, c.client_ok);
      if (c.client_ok && !data.empty()) co_await c.client.send(c.n.host(0).cpu(), p, data, c.client_ok);
    }(*this, data);
  }
  // The server accepts (at once: the protocol listens already) and, from
  // `from` on, reads `want` bytes into `got`.
  void receive(size_t want, Time from = Time{}) {
    Simulator::Scope as(n.net.sim, n.host(1).context());
    [](Connection& c, size_t want, Time from) -> Task {
      Process& p = c.n.host(1).spawn("server");
      bool ok = false;
      co_await c.server.accept(c.n.host(1).cpu(), p, ok);
      if (c.n.net.sim.now() < from) co_await sleep_until(c.n.net.sim, from);
      std::vector<std::byte> buf(64 * 1024);
      while (ok && c.got.size() < want) {
        size_t got = 0;
        co_await c.server.recv(c.n.host(1).cpu(), p, buf, got);
        if (got == 0) break;
        c.got.insert(c.got.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(got));
      }
    }(*this, want, from);
  }

  test::BuiltNetwork n;
  StreamSocket client{n.net.sim, SocketCosts::of(n.host(0).config())};
  StreamSocket server{n.net.sim, SocketCosts::of(n.host(1).config())};
  std::unique_ptr<StreamConnection> client_end, server_end;
  bool client_ok = false;
  std::vector<std::byte> got;
};

}  // namespace

TEST_CASE("kernel stack: a connection is set up across the switch, on iperf3's port and an ephemeral one") {
  Connection c;
  CHECK(c.rx().tcp().flow().local_port == 5201);
  CHECK(c.tx().tcp().flow().local_port == 49152);
  CHECK(c.tx().tcp().flow().remote_port == 5201);
  CHECK(!c.client.is_established());
  c.send({});
  c.receive(0);
  c.run_until(Time::ms(1));
  CHECK(c.client_ok);
  CHECK(c.client.is_established());
  CHECK(c.server.is_established());
  CHECK(c.tx().tcp().sack_enabled());  // negotiated in the handshake
  CHECK(c.rx().tcp().sack_enabled());
  CHECK(c.client_end->retransmits() == 0);
  // The next connection between these hosts takes the next ports.
  StreamSocket s1{c.n.net.sim, SocketCosts::of(c.n.host(0).config())};
  StreamSocket s2{c.n.net.sim, SocketCosts::of(c.n.host(1).config())};
  auto [next_client, next_server] = c.a().connect(s1, c.b(), s2, 1, 2);
  CHECK(static_cast<const KernelTcp&>(*next_server).tcp().flow().local_port == 5202);
  CHECK(static_cast<const KernelTcp&>(*next_client).tcp().flow().local_port == 49153);
}

TEST_CASE("kernel stack: a stream arrives exactly; an unread socket closes the window, reading opens it") {
  Connection c;
  const std::vector<std::byte> data = pattern(4 << 20);
  c.send(data);
  c.receive(data.size(), Time::ms(5));  // reads nothing for 5 ms
  c.run_until(Time::ms(4));
  // The receive buffer (tcp.receive_buffer, 1 MiB) is full and unread: the
  // window left is less than a segment (silly window avoidance keeps it
  // shut), nothing is in flight, and the sender waits with the rest.
  CHECK(c.server.queued() > c.rx().tcp().config().receive_buffer / 2);
  CHECK(c.server.queued() <= c.rx().tcp().config().receive_buffer);
  CHECK(c.tx().tcp().send_window() < c.rx().tcp().local_mss());
  CHECK(c.tx().tcp().bytes_in_flight() == 0);
  const size_t held = c.server.queued();
  c.run_until(Time::ms(4) + Time::us(500));
  CHECK(c.server.queued() == held);
  CHECK(c.got.empty());
  c.run_until(Time::ms(100));
  REQUIRE(c.got.size() == data.size());
  CHECK(c.got == data);
  CHECK(c.client_end->retransmits() == 0);
}

TEST_CASE(
    "kernel stack: short frames leave padded to 60 bytes; the receiver takes a segment by its IP length") {
  Connection c;
  // Every frame either host sends: its size, and its IP datagram's.
  std::vector<std::pair<size_t, size_t>> frames;
  for (int h = 0; h < 2; ++h)
    c.n.host(h).nic().port().on_tx([&frames](Time, Packet& f) {
      auto b = std::as_const(f).raw_bytes();
      frames.emplace_back(b.size(), ConstIpv4View::check(b.subspan(EthernetView::kLen))->total_length());
    });
  const std::vector<std::byte> one = pattern(1);  // a 55-byte frame; its ACK 54
  c.send(one);
  c.receive(1);
  c.run_until(Time::ms(10));
  CHECK(c.got == one);  // one byte, not the pad behind it
  size_t padded = 0;
  for (const auto& [frame, datagram] : frames) {
    CHECK(frame == std::max<size_t>(EthernetView::kLen + datagram, EthernetView::kMinFrameLen));
    padded += frame > EthernetView::kLen + datagram;
  }
  CHECK(padded >= 2);  // the segment and its ACK at least
}

TEST_CASE("kernel stack: segments lost on the wire are sent again and the stream still arrives exactly") {
  LinkConfig lossy;
  lossy.loss = 0.02;
  Connection c(lossy);
  const std::vector<std::byte> data = pattern(1 << 20);
  c.send(data);
  c.receive(data.size());
  c.run_until(Time::ms(500));
  REQUIRE(c.got.size() == data.size());
  CHECK(c.got == data);
  CHECK(c.client_end->retransmits() > 0);
  CHECK(c.client_end->retransmits() == c.tx().tcp().stats().retransmits);
}

TEST_CASE("kernel stack: UDP ports are bound in turn and a datagram reaches its socket") {
  test::BuiltNetwork n{test::two_hosts("tcp")};
  SocketStack& a = socket_stack_of(n.host(0), "a test");
  SocketStack& b = socket_stack_of(n.host(1), "a test");
  UdpSocket s1{n.net.sim, 1 << 20}, s2{n.net.sim, 1 << 20};
  CHECK(b.bind_udp(s1) == 5001);
  CHECK(b.bind_udp(s2) == 5002);
  // One datagram of 1000 bytes from a to b's second port.
  struct One final : TxSource {
    explicit One(Packet p) : frame(std::move(p)) {}
    bool has_tx() const override { return !sent; }
    Packet next_frame() override {
      sent = true;
      return std::move(frame);
    }
    Packet frame;
    bool sent = false;
  };
  One one{a.udp_frame(b, 40000, 5002, 1000, 7)};
  CHECK(one.frame.size() == 14 + 20 + 8 + 1000);
  {
    Simulator::Scope as(n.net.sim, n.host(0).context());
    n.host(0).nic().wake(one);
  }
  n.net.sim.run(Time::ms(1));
  CHECK(one.sent);
  CHECK(b.udp_stats(5002).received == 1);
  CHECK(b.udp_stats(5001).received == 0);
  REQUIRE(!s2.empty());
  CHECK(s2.take().bytes == 1000);
  CHECK(s1.empty());
  const auto& nic = static_cast<const KernelNic&>(*n.host(1).nic().fabric().sockets());
  CHECK(nic.discarded() == 0);
  // A host that runs verbs offers no sockets.
  test::BuiltNetwork rdma{test::two_hosts("roce_v2")};
  CHECK(rdma.host(0).nic().fabric().sockets() == nullptr);
  CHECK_THROWS_AS(socket_stack_of(rdma.host(0), "a test"), std::logic_error);
  n.host(0).nic().forget(one);
}
