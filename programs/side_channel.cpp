#include "programs/side_channel.hpp"

#include <cerrno>

namespace rdmasim {

SideChannel::SideChannel(Simulator& sim, std::vector<uint32_t> addresses,
                         std::function<Time(int, int)> one_way)
    : sim_(sim), addresses_(std::move(addresses)), one_way_(std::move(one_way)), listeners_(sim) {}

std::string SideChannel::dotted(uint32_t a) {
  return std::to_string(a >> 24) + "." + std::to_string(a >> 16 & 0xFF) + "." +
         std::to_string(a >> 8 & 0xFF) + "." + std::to_string(a & 0xFF);
}

int64_t SideChannel::listen(int h, uint16_t port) {
  if (listeners_.in_use(h, port)) return -EADDRINUSE;
  const uint64_t id = next_id_++;
  listeners_.open(id, h, port);
  return static_cast<int64_t>(id);
}

Task SideChannel::accept(Process&, uint64_t listener, int64_t& out, uint32_t& peer_addr,
                         uint16_t& peer_port) {
  co_await listeners_.next(listener, out);
  if (out < 0) co_return;
  const End& e = ends_.at(static_cast<uint64_t>(out));
  const End& peer = ends_.at(e.peer);
  peer_addr = address(peer.host);
  peer_port = peer.port;
}

Task SideChannel::connect(Process&, int h, uint32_t addr, uint16_t port, int64_t& out) {
  int to = -1;
  for (size_t i = 0; i < addresses_.size(); ++i)
    if (addresses_[i] == addr) to = static_cast<int>(i);
  const uint64_t lid = listeners_.on(to, port);
  if (to < 0) {
    // No host has that address: SYNs go unanswered; connect gives up as Linux does after its retries,
    // which a simulation need not wait for.
    out = -ENETUNREACH;
    co_return;
  }
  const Time there = one_way_(h, to);
  if (!lid) {
    co_await sleep(sim_, there + one_way_(to, h));  // SYN, then RST
    out = -ECONNREFUSED;
    co_return;
  }
  const uint64_t mine = next_id_++, theirs = next_id_++;
  End& a = ends_[mine];
  a.host = h;
  a.port = next_port_++;
  a.peer = theirs;
  a.readable = std::make_unique<Trigger>(sim_);
  End& b = ends_[theirs];
  b.host = to;
  b.port = port;
  b.peer = mine;
  b.readable = std::make_unique<Trigger>(sim_);
  // SYN there, SYN-ACK back: the connect returns; the ACK completes the accept.
  sim_.after(there + one_way_(to, h) + there, [this, lid, theirs] { listeners_.arrive(lid, theirs); });
  co_await sleep(sim_, there + one_way_(to, h));
  out = static_cast<int64_t>(mine);
}

Task SideChannel::send(Process&, uint64_t conn, std::span<const char> data, int64_t& ret) {
  ret = send_now(conn, data);
  co_return;
}

int64_t SideChannel::send_now(uint64_t conn, std::span<const char> data) {
  auto it = ends_.find(conn);
  if (it == ends_.end() || it->second.closed) return -EBADF;
  End& e = it->second;
  // Writing to a peer that has closed succeeds (TCP's CLOSE_WAIT); the peer
  // answers with an RST, after which writes fail with EPIPE (RFC 793, 3.4).
  if (e.reset) return -EPIPE;
  std::vector<char> bytes(data.begin(), data.end());
  const uint64_t peer = e.peer;
  sim_.after(one_way_(e.host, ends_.at(peer).host),
             [this, conn, peer, bytes = std::make_shared<std::vector<char>>(std::move(bytes))] {
               End& p = ends_.at(peer);
               if (p.closed) {
                 sim_.after(one_way_(p.host, ends_.at(conn).host), [this, conn] {
                   End& me = ends_.at(conn);
                   me.reset = me.peer_closed = true;
                   me.readable->notify();
                 });
                 return;
               }
               p.in.insert(p.in.end(), bytes->begin(), bytes->end());
               p.readable->notify();
             });
  return static_cast<int64_t>(data.size());
}

Task SideChannel::recv(Process&, uint64_t conn, size_t max, bool nonblocking, bool wait_all,
                       std::vector<char>& out, int64_t& ret) {
  auto it = ends_.find(conn);
  if (it == ends_.end() || it->second.closed) {
    ret = -EBADF;
    co_return;
  }
  End& e = it->second;
  out.clear();
  for (;;) {
    const size_t take = std::min(max - out.size(), e.in.size());
    out.insert(out.end(), e.in.begin(), e.in.begin() + static_cast<std::ptrdiff_t>(take));
    e.in.erase(e.in.begin(), e.in.begin() + static_cast<std::ptrdiff_t>(take));
    const bool enough = wait_all ? out.size() == max : !out.empty();
    if (enough || e.peer_closed || max == 0) break;
    if (nonblocking) {
      if (out.empty()) {
        ret = -EAGAIN;
        co_return;
      }
      break;
    }
    co_await *e.readable;
  }
  ret = static_cast<int64_t>(out.size());
}

void SideChannel::close(uint64_t id, bool listener) {
  if (listener) {
    listeners_.close(id);  // what nobody accepted stays unanswered
    return;
  }
  auto it = ends_.find(id);
  if (it == ends_.end() || it->second.closed) return;
  End& e = it->second;
  e.closed = true;
  const uint64_t peer = e.peer;
  sim_.after(one_way_(e.host, ends_.at(peer).host), [this, peer] {  // the FIN
    End& p = ends_.at(peer);
    p.peer_closed = true;
    p.readable->notify();
  });
}

}  // namespace rdmasim
