#include "nodes/host/dpdk/poll_mode_driver.hpp"

#include <algorithm>
#include <string>

namespace rdmasim {

PollModeDriver::PollModeDriver(Simulator& sim, Cpu& cpu, const DpdkConfig& cfg)
    : sim_(sim), cpu_(cpu), cfg_(cfg) {
  for (uint32_t c = 0; c < cfg_.cores; ++c) {
    cpu_.isolate(static_cast<int>(c));
    queues_.push_back(std::make_unique<Queue>(sim_));
    Queue& q = *queues_.back();
    q.lcore =
        &cpu_.spawn("lcore/" + std::to_string(c), Process::Kind::io, /*fair=*/false, static_cast<int>(c));
    poll_loop(q);
  }
}

void PollModeDriver::receive(Packet p, uint32_t hash) {
  Queue& q = *queues_[hash % queues_.size()];
  if (q.ring.size() >= cfg_.rx_ring) {
    ++stats_.ring_drops;
    if (on_drop_) on_drop_(p);
    return;
  }
  ++stats_.frames;
  q.ring.push_back(std::move(p));
  q.arrived.notify();
}

// The lcore's loop. Spinning costs no engine events: while the queue is
// empty the core spins (poll time) until a frame arrives; the burst that
// finds it then runs. Frames that arrive during a burst wait for the next.
Task PollModeDriver::poll_loop(Queue& q) {
  Process& p = *q.lcore;
  co_await cpu_.run(p, CpuUse::poll, cfg_.poll);  // the first, empty burst: the core is the loop's
  std::vector<Packet> burst;
  for (;;) {
    if (q.ring.empty()) {
      cpu_.spin(p);
      while (q.ring.empty()) co_await q.arrived;
    }
    const size_t n = std::min<size_t>(q.ring.size(), cfg_.burst);
    for (size_t i = 0; i < n; ++i) burst.push_back(q.ring.take_front());
    ++stats_.bursts;
    stats_.largest_burst = std::max<uint64_t>(stats_.largest_burst, n);
    co_await cpu_.run(p, CpuUse::user, cfg_.poll + cfg_.rx_frame * static_cast<int64_t>(n));
    stats_.processed += n;
    for (Packet& f : burst)
      if (deliver_) deliver_(std::move(f));
    burst.clear();
  }
}

}  // namespace rdmasim
