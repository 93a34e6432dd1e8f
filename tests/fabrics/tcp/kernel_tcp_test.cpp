// Kernel TCP sockets on `fabric: tcp` (fabrics/tcp): two hosts built as a
// run builds them, a StreamSocket and a KernelTcp on each, driven through
// the socket calls a program makes (connect, accept, send, recv). The TCP
// model's own rules are tested in tests/fabrics/ip/tcp; these check that
// the kernel NIC carries them: the handshake as Ethernet + IPv4 + TCP
// frames, the socket buffers as the window, losses repaired, FIN teardown.
#include "fabrics/tcp/kernel_tcp.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "fabrics/ethernet/wire/ethernet.hpp"
#include "fabrics/ip/wire/ipv4.hpp"
#include "fabrics/ip/wire/tcp.hpp"
#include "fabrics/tcp/kernel_nic.hpp"
#include "tests/fixtures/network.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

// The fabric's NIC of `h`, which these tests drive directly.
KernelNic& kernel_nic(Host& h, const char*) { return dynamic_cast<KernelNic&>(h.nic().fabric()); }

constexpr uint8_t kNotTcp = 0xFF;  // no TCP segment sets every flag

// One end: its host, socket, connection and the program using the socket.
struct End {
  Host* host = nullptr;
  std::unique_ptr<StreamSocket> socket;
  std::unique_ptr<KernelTcp> tcp;
  Process* process = nullptr;
  std::vector<uint8_t> flags_sent;  // the TCP flags of every frame the host sends
};

// Client a, server b, connected by KernelTcp as a socket workload does.
struct Sockets {
  test::BuiltNetwork n;
  End a, b;

  explicit Sockets(LinkConfig link = {}) : n(test::two_hosts("tcp", link)) {
    KernelNic& na = kernel_nic(n.host(0), "a test");
    KernelNic& nb = kernel_nic(n.host(1), "a test");
    const uint16_t server_port = nb.listen_port(), client_port = na.ephemeral_port();
    const TcpPseudoHeader ip = TcpPseudoHeader::v4(na.self().ipv4, nb.self().ipv4);
    make(a, n.host(0), TcpFlow{ip, client_port, server_port}, 1000);
    make(b, n.host(1), TcpFlow{ip.reversed(), server_port, client_port}, 5000);
    Simulator::Scope as(n.net.sim, n.host(1).context());
    b.tcp->listen();
  }

  void make(End& e, Host& h, const TcpFlow& flow, uint32_t iss) {
    e.host = &h;
    e.socket = std::make_unique<StreamSocket>(n.net.sim, SocketCosts::of(h.config()));
    e.tcp = std::make_unique<KernelTcp>(kernel_nic(h, "a test"), *e.socket, flow, iss);
    e.process = &h.spawn(h.name() + " program", Process::Kind::io, true);
    // Every frame is Ethernet + IPv4 + TCP; its flags are kept.
    h.port(0).on_tx([&e](Time, Packet& p) {
      auto eth = ConstEthernetView::check(std::as_const(p).raw_bytes());
      auto ip =
          eth && eth->ethertype() == ethertype::kIpv4 ? ConstIpv4View::check(eth->payload()) : std::nullopt;
      auto tcp = ip && ip->protocol() == 6 ? ConstTcpView::check(ip->payload()) : std::nullopt;
      e.flags_sent.push_back(tcp ? tcp->flags() : kNotTcp);
    });
  }
  void run(Time t) { n.net.sim.run(t); }
  // Starts a program on `e`'s host, as that host (core/engine.hpp: contexts).
  template <typename Start>
  void on(End& e, Start start) {
    Simulator::Scope as(n.net.sim, e.host->context());
    start();
  }
};

std::vector<std::byte> pattern(size_t n) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::byte(static_cast<uint8_t>(i * 31 + i / 251));
  return v;
}

// connect(), then send() of all of `data`; `ok` once send() has returned it all.
Task client(End& e, std::span<const std::byte> data, bool& ok) {
  bool connected = false;
  co_await e.socket->connect(e.host->cpu(), *e.process, connected);
  ok = connected && data.empty();
  if (connected && !data.empty()) co_await e.socket->send(e.host->cpu(), *e.process, data, ok);
}

// recv() until `want` bytes are in `got` (ok false if the connection is gone first).
Task read_all(End& e, size_t want, std::vector<std::byte>& got, bool& ok) {
  std::vector<std::byte> buf(64 * 1024);
  while (ok && got.size() < want) {
    size_t n = 0;
    co_await e.socket->recv(e.host->cpu(), *e.process, buf, n);
    if (n == 0) ok = false;
    got.insert(got.end(), buf.begin(), buf.begin() + static_cast<ptrdiff_t>(n));
  }
}

// accept(), then read_all.
Task server(End& e, size_t want, std::vector<std::byte>& got, bool& ok) {
  co_await e.socket->accept(e.host->cpu(), *e.process, ok);
  co_await read_all(e, want, got, ok);
}

}  // namespace

TEST_CASE("kernel tcp: connect() and accept() return after a SYN, SYN-ACK, ACK on the wire") {
  Sockets s;
  bool client_ok = false, server_ok = false;
  std::vector<std::byte> got;
  s.on(s.a, [&] { client(s.a, {}, client_ok); });
  s.on(s.b, [&] { server(s.b, 0, got, server_ok); });
  s.run(1_ms);
  CHECK(client_ok);
  CHECK(server_ok);
  CHECK(s.a.socket->is_established());
  CHECK(s.b.socket->is_established());
  CHECK(s.a.tcp->tcp().state() == TcpState::established);
  CHECK(s.b.tcp->tcp().state() == TcpState::established);
  REQUIRE(s.a.flags_sent.size() == 2);
  REQUIRE(s.b.flags_sent.size() == 1);
  CHECK(s.a.flags_sent[0] == tcp_flag::kSyn);
  CHECK(s.b.flags_sent[0] == (tcp_flag::kSyn | tcp_flag::kAck));
  CHECK(s.a.flags_sent[1] == tcp_flag::kAck);
  CHECK(std::ranges::count(s.a.flags_sent, kNotTcp) + std::ranges::count(s.b.flags_sent, kNotTcp) == 0);
  CHECK(s.a.tcp->tcp().max_record() == s.n.cfg.link.mtu - 40);  // the MSS: the MTU less IPv4 and TCP
}

TEST_CASE("kernel tcp: 2 MB sent through the sockets arrive exactly, in order, across 1% loss") {
  LinkConfig lossy;
  lossy.loss = 0.01;
  Sockets s(lossy);
  const auto data = pattern(2'000'000);
  bool client_ok = false, server_ok = false;
  std::vector<std::byte> got;
  s.on(s.a, [&] { client(s.a, data, client_ok); });
  s.on(s.b, [&] { server(s.b, data.size(), got, server_ok); });
  s.run(1_s);
  CHECK(client_ok);
  CHECK(server_ok);
  REQUIRE(got.size() == data.size());
  CHECK(got == data);
  const TcpStats& st = s.a.tcp->tcp().stats();
  CHECK(st.retransmits > 0);  // frames were lost, and sent again
  CHECK(st.bytes_acked == data.size());
  CHECK(s.b.socket->stats().bytes_received == data.size());
}

TEST_CASE("kernel tcp: a server that does not read holds the sender at its receive buffer") {
  Sockets s;
  const uint64_t rcvbuf = s.n.host(1).config().kernel.rcvbuf;
  const auto data = pattern(static_cast<size_t>(8 * rcvbuf));
  bool client_ok = false, server_ok = false;
  std::vector<std::byte> got;
  s.on(s.a, [&] { client(s.a, data, client_ok); });
  s.on(s.b, [&] { server(s.b, 0, got, server_ok); });  // accepted, never read
  s.run(50_ms);
  // The receiver holds at most its buffer; the sender's send() still sleeps.
  CHECK(s.b.socket->queued() > 0);
  CHECK(s.b.socket->queued() <= rcvbuf);
  CHECK(s.a.tcp->tcp().stats().bytes_acked <= rcvbuf);
  CHECK(s.a.socket->stats().send_waits > 0);
  CHECK_FALSE(client_ok);
  CHECK(s.a.tcp->tcp().stats().window_probes > 0);  // the zero window is probed
  // Reading opens the window again: the whole stream arrives.
  s.on(s.b, [&] { read_all(s.b, data.size(), got, server_ok); });
  s.run(1_s);
  CHECK(client_ok);
  REQUIRE(got.size() == data.size());
  CHECK(got == data);
}

TEST_CASE("kernel tcp: FIN from each side closes both connections and their sockets") {
  Sockets s;
  const auto data = pattern(100'000);
  bool client_ok = false, server_ok = false;
  std::vector<std::byte> got;
  s.on(s.a, [&] { client(s.a, data, client_ok); });
  s.on(s.b, [&] { server(s.b, data.size(), got, server_ok); });
  s.run(10_ms);
  REQUIRE(got.size() == data.size());
  s.on(s.a, [&] { s.a.tcp->tcp().close(); });  // the client's close(): FIN after its data
  s.run(s.n.net.sim.now() + 100_us);
  CHECK(s.b.tcp->tcp().state() == TcpState::close_wait);
  CHECK_FALSE(s.b.socket->is_closed());
  s.on(s.b, [&] { s.b.tcp->tcp().close(); });  // the server's close() once it has read the end
  s.run(s.n.net.sim.now() + 100_us);
  CHECK(s.b.tcp->tcp().state() == TcpState::closed);
  CHECK(s.a.tcp->tcp().state() == TcpState::time_wait);
  CHECK(s.b.socket->is_closed());
  s.run(s.n.net.sim.now() + 2_ms);  // 2 MSL later (tcp.time_wait: 1 ms)
  CHECK(s.a.tcp->tcp().state() == TcpState::closed);
  CHECK(s.a.socket->is_closed());
  auto fins = [](const End& e) {
    return std::count_if(e.flags_sent.begin(), e.flags_sent.end(),
                         [](uint8_t f) { return f & tcp_flag::kFin; });
  };
  CHECK(fins(s.a) == 1);
  CHECK(fins(s.b) == 1);
  CHECK(kernel_nic(*s.a.host, "a test").discarded() == 0);
}
