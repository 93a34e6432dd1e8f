// The kernel beside an RNIC (fabrics/tcp/host_kernel.hpp): on roce_v2 and
// iwarp a host's TCP sockets share the port with the RDMA engine. A SYN to
// a port nobody listens on is refused with a RST; one to a listening port
// makes a connection whose bytes cross; on iwarp a SYN to the RNIC's own
// port is the RNIC's, not refused; ib has no IP for a kernel to use. The
// connections are made as a program's sockets make them, through HostTcp
// (nodes/host/kernel/socket_stack.hpp).
#include "fabrics/tcp/host_kernel.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "nodes/host/kernel/socket_stack.hpp"
#include "nodes/host/kernel/stream_socket.hpp"
#include "tests/fixtures/network.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

// One end of a connection: its socket and its TCP.
struct End {
  explicit End(Host& h) : socket(h.nic().sim(), SocketCosts::of(h.config())) {}
  StreamSocket socket;
  std::unique_ptr<StreamConnection> tcp;
  TcpEnds ends;  // an accepted one's
  // connect()'s outcome: the End outlives a connect that never finishes
  // (a SYN nobody answers), which still writes it when the connection ends.
  bool connected = false;
};

struct Pair {
  explicit Pair(const std::string& fabric) : n(test::two_hosts(fabric)) {
    a = HostKernel::beside(n.host(0), n.cfg, 1);
    b = HostKernel::beside(n.host(1), n.cfg, 1);
  }
  // a connects to b's `port`; returns whether connect() succeeded.
  bool connect(uint16_t port, std::unique_ptr<End>& client) {
    client = std::make_unique<End>(n.host(0));
    client->tcp = a->connect(client->socket, b->ipv4(), port);
    [](Pair& t, End& e) -> Task { co_await e.socket.connect(t.n.host(0).cpu(), t.pa, e.connected); }(*this,
                                                                                                     *client);
    n.net.sim.run(n.net.sim.now() + 10_ms);
    return client->connected;
  }
  test::BuiltNetwork n;
  std::unique_ptr<HostKernel> a, b;
  Process& pa = n.host(0).spawn("client");
  Process& pb = n.host(1).spawn("server");
};

}  // namespace

TEST_CASE("host kernel: ib carries no IP for a kernel beside the HCA") {
  test::BuiltNetwork n(test::two_hosts("ib"));
  CHECK(HostKernel::beside(n.host(0), n.cfg, 1) == nullptr);
  CHECK(host_tcp_beside(n.host(0), n.cfg, 1) == nullptr);
}

TEST_CASE("host kernel on roce_v2: a SYN to a closed port is reset, one to a listening port connects") {
  Pair t("roce_v2");
  REQUIRE(t.a);
  REQUIRE(t.b);
  std::unique_ptr<End> refused;
  CHECK_FALSE(t.connect(5000, refused));
  CHECK(refused->socket.is_closed());
  CHECK(refused->tcp->segments_received() == 1);  // the RST
  std::vector<std::unique_ptr<End>> accepted;
  t.b->listen(5000, [&](const TcpEnds& e) {
    accepted.push_back(std::make_unique<End>(t.n.host(1)));
    accepted.back()->ends = e;
    accepted.back()->tcp = t.b->accept(accepted.back()->socket, e);
  });
  std::unique_ptr<End> client;
  REQUIRE(t.connect(5000, client));
  REQUIRE(accepted.size() == 1);
  CHECK(accepted[0]->socket.is_established());
  CHECK(accepted[0]->ends.local_addr == t.b->ipv4());
  CHECK(accepted[0]->ends.peer_addr == t.a->ipv4());
  CHECK(accepted[0]->ends.local_port == 5000);
  CHECK(accepted[0]->ends.peer_port == 32769);  // a's second ephemeral port (the refused SYN had 32768)
  // Bytes cross, through b's receive path; a's FIN ends b's reads.
  const std::string hello = "0000:000011:8e23ee";
  bool sent = false;
  [](Pair& t, End& e, const std::string& s, bool& ok) -> Task {
    co_await e.socket.send(t.n.host(0).cpu(), t.pa, std::as_bytes(std::span(s)), ok);
  }(t, *client, hello, sent);
  std::vector<std::byte> got(64);
  size_t n = 0;
  [](Pair& t, End& e, std::vector<std::byte>& out, size_t& n) -> Task {
    co_await e.socket.recv(t.n.host(1).cpu(), t.pb, out, n);
  }(t, *accepted[0], got, n);
  t.n.net.sim.run(t.n.net.sim.now() + 10_ms);
  CHECK(sent);
  REQUIRE(n == hello.size());
  CHECK(std::string(reinterpret_cast<const char*>(got.data()), n) == hello);
  CHECK(t.b->rx().stats().frames >= 3);  // SYN, ACK, data: through the kernel's receive path
  client->tcp->close();
  t.n.net.sim.run(t.n.net.sim.now() + 10_ms);
  CHECK(accepted[0]->socket.is_peer_closed());
}

TEST_CASE("host kernel on iwarp: a SYN to the RNIC's own port is left to the RNIC, not reset") {
  Pair t("iwarp");
  REQUIRE(t.a);
  const uint16_t rnic_port = t.n.cfg.tcp.listen_port;
  std::unique_ptr<End> client;
  CHECK_FALSE(t.connect(rnic_port, client));
  CHECK(client->tcp->segments_received() == 0);  // no RST: SYNs unanswered
  CHECK(t.b->discarded() == 0);                  // handed to the RNIC, which holds it for the QP it is for
  client->tcp->abort();                          // connect() fails at once
  t.n.net.sim.run(t.n.net.sim.now() + 1_ms);
}
