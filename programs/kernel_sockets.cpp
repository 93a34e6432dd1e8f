#include "programs/kernel_sockets.hpp"

#include <cerrno>

#include "fabrics/network.hpp"
#include "nodes/host/host.hpp"
#include "nodes/host/kernel/socket_stack.hpp"
#include "nodes/host/kernel/stream_socket.hpp"

namespace rdmasim {

struct KernelSockets::Conn {
  Conn(Network& net, int h)
      : host(h),
        socket(std::make_unique<StreamSocket>(
            net.sim, SocketCosts::of(net.hosts[static_cast<size_t>(h)]->config()))) {}
  int host = 0;
  std::unique_ptr<StreamSocket> socket;
  std::unique_ptr<StreamConnection> tcp;
  TcpEnds ends;         // an accepted one's (its peer's address and port)
  bool closed = false;  // by its program
};

std::unique_ptr<KernelSockets> KernelSockets::make(Network& net) {
  std::unique_ptr<KernelSockets> s(new KernelSockets(net));
  for (Host* h : net.hosts) {
    s->kernels_.push_back(host_tcp_beside(*h, net.cfg, net.cfg.seed));
    if (!s->kernels_.back()) return nullptr;  // one fabric for all: none of them carries IPv4
  }
  return s;
}

KernelSockets::KernelSockets(Network& net) : net_(net), listeners_(net.sim) {}
KernelSockets::~KernelSockets() = default;

uint32_t KernelSockets::address(int h) const { return kernels_[static_cast<size_t>(h)]->ipv4(); }

KernelSockets::Conn* KernelSockets::conn(uint64_t id) {
  auto it = conns_.find(id);
  return it == conns_.end() || it->second->closed ? nullptr : it->second.get();
}

uint64_t KernelSockets::accepted(int h, const TcpEnds& ends) {
  auto c = std::make_unique<Conn>(net_, h);
  c->tcp = kernels_[static_cast<size_t>(h)]->accept(*c->socket, ends);
  c->ends = ends;
  const uint64_t id = next_id_++;
  conns_[id] = std::move(c);
  return id;
}

int64_t KernelSockets::listen(int h, uint16_t port) {
  HostTcp& k = *kernels_[static_cast<size_t>(h)];
  if (port == 0) port = k.ephemeral_port();
  if (listeners_.in_use(h, port)) return -EADDRINUSE;
  const uint64_t id = next_id_++;
  listeners_.open(id, h, port);
  k.listen(port, [this, h, id](const TcpEnds& ends) { listeners_.arrive(id, accepted(h, ends)); });
  return static_cast<int64_t>(id);
}

Task KernelSockets::accept(Process& p, uint64_t listener, int64_t& out, uint32_t& peer_addr,
                           uint16_t& peer_port) {
  int64_t next = 0;
  co_await listeners_.next(listener, next);
  if (next < 0) {
    out = next;
    co_return;
  }
  const auto id = static_cast<uint64_t>(next);
  Conn& c = *conns_.at(id);
  bool ok = false;
  co_await c.socket->accept(net_.hosts[static_cast<size_t>(c.host)]->cpu(), p, ok);
  if (!ok) {
    out = -ECONNABORTED;
    co_return;
  }
  peer_addr = c.ends.peer_addr;
  peer_port = c.ends.peer_port;
  out = static_cast<int64_t>(id);
}

Task KernelSockets::connect(Process& p, int h, uint32_t addr, uint16_t port, int64_t& out) {
  if (addr == 0xFFFFFFFF) {  // an IPv6 address: this kernel's TCP is IPv4's
    out = -ENETUNREACH;
    co_return;
  }
  auto made = std::make_unique<Conn>(net_, h);
  made->tcp = kernels_[static_cast<size_t>(h)]->connect(*made->socket, addr, port);
  Conn& c = *made;
  const uint64_t id = next_id_++;
  conns_[id] = std::move(made);
  bool ok = false;
  co_await c.socket->connect(net_.hosts[static_cast<size_t>(h)]->cpu(), p, ok);
  if (!ok) {
    // A RST answered the SYN, or the SYNs went unanswered until TCP gave up.
    out = c.tcp->segments_received() > 0 ? -ECONNREFUSED : -ETIMEDOUT;
    c.closed = true;
    co_return;
  }
  out = static_cast<int64_t>(id);
}

Task KernelSockets::send(Process& p, uint64_t id, std::span<const char> data, int64_t& ret) {
  Conn* c = conn(id);
  if (!c) {
    ret = -EBADF;
    co_return;
  }
  if (c->socket->is_closed()) {
    ret = -EPIPE;
    co_return;
  }
  bool ok = false;
  co_await c->socket->send(net_.hosts[static_cast<size_t>(c->host)]->cpu(), p, std::as_bytes(data), ok);
  ret = ok ? static_cast<int64_t>(data.size()) : -EPIPE;
}

Task KernelSockets::recv(Process& p, uint64_t id, size_t max, bool nonblocking, bool wait_all,
                         std::vector<char>& out, int64_t& ret) {
  out.clear();
  Conn* c = conn(id);
  if (!c) {
    ret = -EBADF;
    co_return;
  }
  StreamSocket& s = *c->socket;
  if (max == 0 || (nonblocking && s.queued() == 0 && !s.is_closed() && !s.is_peer_closed())) {
    ret = max == 0 ? 0 : -EAGAIN;
    co_return;
  }
  Cpu& cpu = net_.hosts[static_cast<size_t>(c->host)]->cpu();
  out.resize(max);
  size_t have = 0;
  do {
    size_t got = 0;
    co_await s.recv(cpu, p, std::as_writable_bytes(std::span(out)).subspan(have), got);
    if (got == 0) break;  // the peer closed (or the connection is gone)
    have += got;
  } while (wait_all && have < max);
  out.resize(have);
  ret = static_cast<int64_t>(have);
}

void KernelSockets::close(uint64_t id, bool listener) {
  if (listener) {
    if (!listeners_.is_open(id)) return;
    kernels_[static_cast<size_t>(listeners_.host(id))]->unlisten(listeners_.port(id));
    // inet_csk_listen_stop: connections nobody accepted are reset.
    for (uint64_t c : listeners_.close(id)) {
      conns_.at(c)->closed = true;
      conns_.at(c)->tcp->abort();
    }
    return;
  }
  Conn* c = conn(id);
  if (!c) return;
  c->closed = true;
  c->tcp->close();  // the FIN, after what it still has to send
}

}  // namespace rdmasim
