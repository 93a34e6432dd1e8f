#include "nodes/host/host.hpp"

namespace rdmasim {

// From the NIC's MSI-X to the program running again (wake-up and scheduling).
constexpr Time kInterruptLatency = Time::us(1);

Host::Host(Simulator& sim, PacketPool& pool, std::string name, const NicConfig& nic, const HostConfig& cfg)
    : Node(sim, std::move(name)), cfg_(cfg) {
  Port& port = add_port();
  nic_ = std::make_unique<Rnic>(sim, pool, memory_, port, nic);
}

Host::~Host() = default;

void Host::receive(Port& in, Packet p) {
  // The NIC takes the frame off the wire into its own buffers at once.
  in.release_ingress(p);
  nic_->receive(std::move(p));
}

void Host::charge_post(uint64_t inline_bytes) {
  cpu_busy_ += cfg_.post_cost;
  if (inline_bytes) cpu_busy_ += cfg_.pcie.bandwidth.tx_time(inline_bytes);
}

Task Host::wait(verbs::CompletionQueue& cq) {
  const Time t0 = sim_.now();
  if (cq.depth() > 0) {
    cpu_busy_ += cfg_.poll_cost;
    co_return;
  }
  cq.set_moderation({cfg_.interrupt_coalescing.frames, cfg_.interrupt_coalescing.delay, kInterruptLatency});
  switch (cfg_.completion) {
    case Completion::polling:
      // Spinning on ibv_poll_cq: the core is busy until the CQE lands.
      co_await cq.next();
      cpu_busy_ += sim_.now() - t0 + cfg_.poll_cost;
      co_return;
    case Completion::interrupt:
      co_await cq.interrupt();
      ++interrupts_;
      cpu_busy_ += cfg_.interrupt_cost + cfg_.poll_cost;
      co_return;
    case Completion::hybrid: {
      // Spin for a while; if nothing comes, arm the interrupt and sleep.
      bool came = false;
      co_await cq.next_within(cfg_.hybrid_spin, came);
      if (came) {
        cpu_busy_ += sim_.now() - t0 + cfg_.poll_cost;
        co_return;
      }
      cpu_busy_ += cfg_.hybrid_spin;
      co_await cq.interrupt();
      ++interrupts_;
      cpu_busy_ += cfg_.interrupt_cost + cfg_.poll_cost;
      co_return;
    }
  }
}

}  // namespace rdmasim
