#include "nodes/host/kernel/stream_socket.hpp"

#include <algorithm>
#include <cstring>

namespace rdmasim {

StreamSocket::StreamSocket(Simulator& sim, const KernelConfig& k)
    : k_(k), state_(sim), writable_(sim), readable_(sim) {}

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
  co_await cpu.run(p, CpuUse::syscall, k_.syscall);
  if (transport_) transport_->connect();
  while (!established_ && !closed_) co_await state_;
  ok = established_ && !closed_;
}

Task StreamSocket::accept(Cpu& cpu, Process& p, bool& ok) {
  while (!established_ && !closed_) co_await state_;
  co_await cpu.run(p, CpuUse::syscall, k_.syscall);
  ok = established_ && !closed_;
}

Task StreamSocket::send(Cpu& cpu, Process& p, std::span<const std::byte> data, bool& ok) {
  ++stats_.sends;
  co_await cpu.run(p, CpuUse::syscall, k_.syscall);
  size_t done = 0;
  while (done < data.size() && !closed_) {
    const size_t n = transport_ ? std::min(transport_->room(), data.size() - done) : 0;
    if (n == 0) {
      // sk_stream_wait_memory: sleep until ACKs free send buffer.
      ++stats_.send_waits;
      co_await writable_;
      continue;
    }
    // copy_from_user into the skbs, then each segment down the stack; the
    // segments are on their way when that CPU time is over.
    const uint64_t segments = transport_->segments(n);
    co_await cpu.run(p, CpuUse::syscall, k_.copy_bandwidth.tx_time(n) + k_.transport_tx * segments);
    stats_.segments_pushed += segments;
    for (size_t left = n; left > 0 && !closed_;) {
      const size_t took = transport_->push(data.subspan(done, left));
      done += took;
      left -= took;
      stats_.bytes_sent += took;
      if (left > 0 && took == 0) co_await writable_;
    }
  }
  ok = done == data.size();
}

Task StreamSocket::recv(Cpu& cpu, Process& p, std::span<std::byte> out, size_t& got) {
  ++stats_.recvs;
  got = 0;
  co_await cpu.run(p, CpuUse::syscall, k_.syscall);
  while (rx_size_ == 0 && !closed_) {
    ++stats_.recv_waits;
    co_await readable_;  // sk_wait_data
  }
  const size_t n = std::min(out.size(), rx_size_);
  if (n == 0) co_return;
  for (size_t i = 0; i < n;) {
    const size_t run = std::min(n - i, rx_.size() - rx_head_);
    std::memcpy(out.data() + i, rx_.data() + rx_head_, run);
    rx_head_ = (rx_head_ + run) % rx_.size();
    i += run;
  }
  rx_size_ -= n;
  // copy_to_user; then the freed buffer may open the window (tcp_cleanup_rbuf).
  co_await cpu.run(p, CpuUse::syscall, k_.copy_bandwidth.tx_time(n));
  got = n;
  if (transport_) transport_->consumed(n);
}

}  // namespace rdmasim
