#include "programs/oob_sockets.hpp"

#include <cerrno>

namespace rdmasim {

bool OobListeners::in_use(int h, uint16_t port) const { return on(h, port) != 0; }

uint64_t OobListeners::on(int h, uint16_t port) const {
  for (const auto& [id, l] : listeners_)
    if (!l.closed && l.host == h && l.port == port) return id;
  return 0;
}

bool OobListeners::is_open(uint64_t id) const {
  auto it = listeners_.find(id);
  return it != listeners_.end() && !it->second.closed;
}

void OobListeners::open(uint64_t id, int h, uint16_t port) {
  Listener& l = listeners_[id];
  l.host = h;
  l.port = port;
  l.ready = std::make_unique<Trigger>(sim_);
}

void OobListeners::arrive(uint64_t id, uint64_t conn) {
  Listener& l = listeners_.at(id);
  l.backlog.push_back(conn);
  l.ready->notify();
}

Task OobListeners::next(uint64_t id, int64_t& out) {
  auto it = listeners_.find(id);
  if (it == listeners_.end()) {
    out = -EBADF;
    co_return;
  }
  Listener& l = it->second;
  while (l.backlog.empty() && !l.closed) co_await *l.ready;
  if (l.closed) {
    out = -EBADF;
    co_return;
  }
  out = static_cast<int64_t>(l.backlog.front());
  l.backlog.pop_front();
}

std::deque<uint64_t> OobListeners::close(uint64_t id) {
  auto it = listeners_.find(id);
  if (it == listeners_.end() || it->second.closed) return {};
  Listener& l = it->second;
  l.closed = true;
  l.ready->notify();
  return std::exchange(l.backlog, {});
}

}  // namespace rdmasim
