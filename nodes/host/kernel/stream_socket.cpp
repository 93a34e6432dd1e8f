#include "nodes/host/kernel/stream_socket.hpp"

#include <algorithm>
#include <cstring>

namespace rdmasim {

StreamSocket::StreamSocket(Simulator& sim, const SocketCosts& costs)
    : k_(costs), state_(sim), writable_(sim), readable_(sim) {}

void StreamSocket::established() {
  established_ = true;
  state_.notify();
}

void StreamSocket::closed() {
  closed_ = true;
  state_.notify();
  writable_.notify();
  readable_.notify();
}

void StreamSocket::peer_closed() {
  peer_closed_ = true;
  readable_.notify();
}

void StreamSocket::write_space() { writable_.notify(); }

void StreamSocket::received(std::span<const std::byte> bytes) {
  if (bytes.empty()) return;
  if (rx_size_ + bytes.size() > rx_.size()) {
    // Grow, unrolling the ring to the front.
    std::vector<std::byte> next(std::max(rx_.size() * 2, rx_size_ + bytes.size()));
    for (size_t i = 0; i < rx_size_; ++i) next[i] = rx_[(rx_head_ + i) % rx_.size()];
    rx_.swap(next);
    rx_head_ = 0;
  }
  size_t tail = (rx_head_ + rx_size_) % rx_.size();
  size_t done = 0;
  while (done < bytes.size()) {
    const size_t n = std::min(bytes.size() - done, rx_.size() - tail);
    std::memcpy(rx_.data() + tail, bytes.data() + done, n);
    done += n;
    tail = (tail + n) % rx_.size();
  }
  rx_size_ += bytes.size();
  stats_.bytes_received += bytes.size();
  readable_.notify();  // sk_data_ready
}

Task StreamSocket::connect(Cpu& cpu, Process& p, bool& ok) {
  co_await cpu.run(p, k_.use, k_.call);
  if (transport_) transport_->connect();
  if (k_.spin_to_wait && !established_ && !closed_) cpu.spin(p);
  while (!established_ && !closed_) co_await state_;
  ok = established_ && !closed_;
}

Task StreamSocket::accept(Cpu& cpu, Process& p, bool& ok) {
  co_await cpu.run(p, k_.use, k_.call);
  if (k_.spin_to_wait && !established_ && !closed_) cpu.spin(p);
  while (!established_ && !closed_) co_await state_;
  ok = established_ && !closed_;
}

size_t StreamSocket::push(const Payload& bytes) {
  if (!bytes.computed()) return transport_->push(bytes.stored());
  // The bytes go straight into the transport's send buffer: one scratch
  // serves every socket (a run is one thread), where each socket kept one
  // as large as the most it ever pushed at once.
  static thread_local std::vector<std::byte> made;
  made.resize(bytes.size());
  bytes.copy_to(made);
  return transport_->push(made);
}

Task StreamSocket::send(Cpu& cpu, Process& p, Payload data, bool& ok) {
  ++stats_.sends;
  co_await cpu.run(p, k_.use, k_.call);
  size_t done = 0;
  while (done < data.size() && !closed_) {
    const size_t n = transport_ ? std::min(transport_->room(), data.size() - done) : 0;
    if (n == 0) {
      // sk_stream_wait_memory: sleep (or spin) until ACKs free send buffer.
      ++stats_.send_waits;
      if (k_.spin_to_wait) cpu.spin(p);
      co_await writable_;
      if (k_.spin_to_wait) co_await cpu.run(p, k_.use, k_.call);  // the spin ends in a call that finds room
      continue;
    }
    // copy_from_user into the skbs, then each segment down the stack; the
    // segments are on their way when that CPU time is over.
    const uint64_t segments = transport_->segments(n);
    co_await cpu.run(p, k_.use, k_.copy.tx_time(n) + k_.tx_segment * static_cast<int64_t>(segments));
    stats_.segments_pushed += segments;
    for (size_t left = n; left > 0 && !closed_;) {
      const size_t took = push(data.subspan(done, left));
      done += took;
      left -= took;
      stats_.bytes_sent += took;
      if (left > 0 && took == 0) {
        if (k_.spin_to_wait) cpu.spin(p);
        co_await writable_;
        if (k_.spin_to_wait) co_await cpu.run(p, k_.use, k_.call);
      }
    }
  }
  ok = done == data.size();
}

Task StreamSocket::recv(Cpu& cpu, Process& p, std::span<std::byte> out, size_t& got) {
  ++stats_.recvs;
  got = 0;
  co_await cpu.run(p, k_.use, k_.call);
  const bool waited = rx_size_ == 0 && !closed_ && !peer_closed_;
  if (waited) {
    ++stats_.recv_waits;
    if (k_.spin_to_wait) cpu.spin(p);  // polling the stack until data comes
  }
  while (rx_size_ == 0 && !closed_ && !peer_closed_) co_await readable_;  // sk_wait_data
  const size_t n = std::min(out.size(), rx_size_);
  if (n == 0) co_return;
  for (size_t i = 0; i < n;) {
    const size_t run = std::min(n - i, rx_.size() - rx_head_);
    std::memcpy(out.data() + i, rx_.data() + rx_head_, run);
    rx_head_ = (rx_head_ + run) % rx_.size();
    i += run;
  }
  rx_size_ -= n;
  if (rx_size_ == 0 && rx_.size() > kKeptReceiveBytes) {
    // Read empty after a burst: the queue's memory goes back, as a kernel's
    // freed skbs do; what a steady reader reuses stays.
    std::vector<std::byte>().swap(rx_);
    rx_head_ = 0;
  }
  // copy_to_user (a user-space stack hands the mbufs over in place, but
  // the call that finds them ends the spin); then the freed buffer may
  // open the window (tcp_cleanup_rbuf).
  if (k_.copy_on_receive)
    co_await cpu.run(p, k_.use, k_.copy.tx_time(n));
  else if (waited)
    co_await cpu.run(p, k_.use, k_.call);
  got = n;
  if (transport_) transport_->consumed(n);
}

}  // namespace rdmasim
