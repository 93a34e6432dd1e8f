#include "workloads/socket_flow.hpp"

#include <cstring>
#include <stdexcept>

#include "nodes/host/host.hpp"

namespace rdmasim {

bool has_kernel_stack(Host& h) { return h.nic().fabric().sockets() != nullptr; }

std::unique_ptr<PairFlow> make_pair_flow(WorkloadEnv& env, const WorkloadConfig& w, Host& a, Host& b,
                                         WorkloadKind op, bool pingpong, uint64_t index, uint64_t seed) {
  if (has_kernel_stack(a)) return std::make_unique<SocketFlow>(env, w, a, b, pingpong, index, seed);
  return std::make_unique<Flow>(env, w, a, b, op, pingpong, index, seed);
}

SocketFlow::SocketFlow(WorkloadEnv& env, const WorkloadConfig& w, Host& a, Host& b, bool pingpong,
                       uint64_t index, uint64_t seed)
    : PairFlow(env, w, a, b, pingpong, index, seed) {}

SocketFlow::~SocketFlow() = default;

void SocketFlow::single_message(uint64_t size, Time at) {
  size_ = size;
  count_ = 1;
  start_ = at;
}

// Both sockets and their connection; the server's end listens at once.
void SocketFlow::setup() {
  SocketStack& na = socket_stack_of(a_, "a socket flow");
  SocketStack& nb = socket_stack_of(b_, "a socket flow");
  ca_.socket = std::make_unique<StreamSocket>(env_.sim, SocketCosts::of(a_.config()));
  sb_.socket = std::make_unique<StreamSocket>(env_.sim, SocketCosts::of(b_.config()));
  const auto client_iss = static_cast<uint32_t>(rng_.next());
  const auto server_iss = static_cast<uint32_t>(rng_.next());
  std::tie(ca_.tcp, sb_.tcp) = na.connect(*ca_.socket, nb, *sb_.socket, client_iss, server_iss);
  {
    Simulator::Scope as(env_.sim, b_.context());
    sb_.tcp->listen();
  }
  // Socket programs are fair processes, as every program is under CFS.
  ca_.process = &a_.spawn(w_.name + (pingpong_ ? " ping" : " sender"), Process::Kind::io, /*fair=*/true);
  sb_.process = &b_.spawn(w_.name + (pingpong_ ? " pong" : " receiver"), Process::Kind::io, /*fair=*/true);
  if (pingpong_) {  // the server echoes what it read; the client compares the echo
    ca_.buf.resize(size_);
    sb_.buf.resize(size_);
    ca_.echo.resize(size_);
    return;
  }
  // A stream's client sends from the pattern (StreamSocket::send makes the
  // bytes as the send buffer takes them) and its server reads into a
  // buffer larger than all the socket can hold (its window, SO_RCVBUF):
  // each recv returns what it would with the whole message's room, and a
  // message costs no memory of its size at either end.
  sb_.buf.resize(std::min<uint64_t>(size_, 2 * std::max<uint64_t>(b_.config().kernel.rcvbuf, 65536)));
}

// Each program runs as its host (core/engine.hpp: contexts), whoever
// starts it: a run split over ranks runs each on its host's rank only.
void SocketFlow::start() {
  running_ = 2;
  {
    Simulator::Scope as(env_.sim, a_.context());
    client(start_);
  }
  Simulator::Scope as(env_.sim, b_.context());
  server();
}

void SocketFlow::failed(const char* why) {
  ++stats_.completions[why];
  stats_.data_verified = false;
}

Task SocketFlow::read_message(Host& h, End& e, std::span<std::byte> into, uint64_t k, bool check, bool& ok) {
  size_t have = 0;
  ok = true;
  while (have < size_) {
    // The message whole into a buffer of its size, else from the start of a smaller one.
    const size_t at = into.size() >= size_ ? have : 0;
    const std::span<std::byte> room = into.subspan(at, std::min<size_t>(size_ - have, into.size() - at));
    size_t n = 0;
    co_await e.socket->recv(h.cpu(), *e.process, room, n);
    if (n == 0) {
      ok = false;
      co_return;
    }
    if (check && !pattern_.matches(message_id(k), have, room.first(n))) {
      stats_.data_verified = false;
      stats_.data_mismatch = true;
    }
    have += n;
  }
}

Task SocketFlow::client(Time t0) {
  Simulator& sim = env_.sim;
  co_await sleep_until(sim, t0);
  Cpu& cpu = a_.cpu();
  Process& p = *ca_.process;
  stats_.start = sim.now();
  bool ok = false;
  co_await ca_.socket->connect(cpu, p, ok);
  for (uint64_t k = 0; ok && k < count_; ++k) {
    const Time t = sim.now();
    if (!pingpong_) {
      sent_at_.push_back(t);
      if (tell_b_) tell_b_(t);  // the server runs on another rank
      const MessagePattern message(pattern_, message_id(k));
      co_await ca_.socket->send(cpu, p, Payload(&message, 0, size_), ok);
      continue;
    }
    pattern_.fill(message_id(k), 0, ca_.buf);
    co_await ca_.socket->send(cpu, p, ca_.buf, ok);
    if (!ok) continue;
    co_await read_message(a_, ca_, ca_.echo, k, false, ok);
    if (!ok) break;
    if (std::memcmp(ca_.echo.data(), ca_.buf.data(), size_) != 0) {
      stats_.data_verified = false;
      stats_.data_mismatch = true;
    }
    ++received_;
    ++stats_.ops;
    stats_.bytes += size_;
    stats_.latency_ps.push_back((sim.now() - t).count() / 2);
    stats_.end = sim.now();
  }
  if (!ok) failed(ca_.socket->is_established() ? "ECONNRESET" : "ECONNREFUSED");
  program_ended();
}

Task SocketFlow::server() {
  Simulator& sim = env_.sim;
  Cpu& cpu = b_.cpu();
  Process& p = *sb_.process;
  bool ok = false;
  co_await sb_.socket->accept(cpu, p, ok);
  for (uint64_t k = 0; ok && k < count_; ++k) {
    co_await read_message(b_, sb_, sb_.buf, k, true, ok);
    if (!ok) break;
    if (pingpong_) {  // the same bytes back
      co_await sb_.socket->send(cpu, p, sb_.buf, ok);
      continue;
    }
    // A split run tells the server's rank when the client sent it before
    // it can arrive: its bytes cross a cut link, a lookahead or more
    // later, and the note is read at the end of the window it was sent in.
    if (sent_at_.empty()) throw std::logic_error("a socket flow's message read whole before it was sent");
    ++received_;
    ++stats_.ops;
    stats_.bytes += size_;
    stats_.latency_ps.push_back((sim.now() - sent_at_.front()).count());
    sent_at_.pop_front();
    stats_.end = sim.now();
  }
  program_ended();
}

FlowStats SocketFlow::result() {
  FlowStats s = stats_;
  s.finished = finished();
  s.planned_ops = count_;
  s.retransmitted_packets = ca_.tcp->retransmits() + sb_.tcp->retransmits();
  // Messages are checked as they are read: a run the stop cut off keeps
  // the verdict on those; one that ended short failed (failed()).
  if (s.ops < count_ && s.finished) s.data_verified = false;
  s.undelivered_bytes = (count_ - std::min(count_, s.ops)) * size_;
  if (s.end < s.start) s.end = s.start;
  return s;
}

void SocketFlow::release_buffers() {
  for (End* e : {&ca_, &sb_}) {
    std::vector<std::byte>().swap(e->buf);
    std::vector<std::byte>().swap(e->echo);
  }
}

}  // namespace rdmasim
