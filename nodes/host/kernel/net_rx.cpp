#include "nodes/host/kernel/net_rx.hpp"

#include <algorithm>

namespace rdmasim {

namespace {
// A coalescing frame threshold with no delay is bounded, as NICs bound it
// (the same bound as the RNIC's CQ moderation, docs/host.md).
constexpr Time kCoalesceBound = Time::us(8);
}  // namespace

NetRx::NetRx(Simulator& sim, Cpu& cpu, const HostConfig& cfg, int irq_core)
    : sim_(sim),
      cpu_(cpu),
      cfg_(cfg),
      napi_(cfg.completion == Completion::napi),
      core_(irq_core),
      ksoftirqd_(
          &cpu.spawn((napi_ && cfg.kernel.threaded_napi ? "napi/" : "ksoftirqd/") + std::to_string(irq_core),
                     Process::Kind::io, /*fair=*/true, irq_core)) {
  cpu_.softirq_context(core_);
}

NetRx::~NetRx() { sim_.cancel(coalesce_); }

void NetRx::drop(const Packet& p, Drop why) {
  ++(why == Drop::ring ? stats_.ring_drops : stats_.backlog_drops);
  if (on_drop_) on_drop_(p, why);
}

void NetRx::receive(Packet p) {
  if (ring_.size() >= cfg_.kernel.rx_ring) {
    drop(p, Drop::ring);  // no free descriptor: the NIC discards it (rx_missed)
    return;
  }
  ++stats_.frames;
  ring_.push_back(std::move(p));
  maybe_interrupt();
}

// The NIC raises an interrupt for frames in the ring unless one is already
// on its way or NAPI has it masked; moderation (ethtool rx-frames /
// rx-usecs) waits for `frames` of them or `delay` after the first.
void NetRx::maybe_interrupt() {
  if (masked_ || irq_raised_ || ring_.empty()) return;
  const auto& co = cfg_.interrupt_coalescing;
  if (ring_.size() >= co.frames) {
    raise_interrupt();
    return;
  }
  if (!coalesce_) {
    const Time wait = co.delay > Time{} ? co.delay : kCoalesceBound;
    coalesce_ = sim_.after(wait, [this] {
      coalesce_ = {};
      if (!masked_ && !irq_raised_ && !ring_.empty()) raise_interrupt();
    });
  }
}

void NetRx::raise_interrupt() {
  sim_.cancel(coalesce_);
  coalesce_ = {};
  irq_raised_ = true;
  ++stats_.interrupts;
  // The MSI-X message is a posted PCIe write.
  sim_.after(cfg_.pcie.latency, [this] {
    Time cost = cfg_.interrupt_cost;
    if (!napi_) {
      // The driver's receive routine runs inside the handler, for every
      // frame the ring holds now (later ones wait for the next interrupt).
      irq_frames_ = static_cast<uint32_t>(ring_.size());
      cost += cfg_.kernel.driver_rx * irq_frames_;
    }
    cpu_.irq(core_, cost, *this);
  });
}

void NetRx::irq_handled() {
  irq_raised_ = false;
  if (napi_) {
    // napi_schedule: the interrupt stays off until the poll completes.
    masked_ = true;
    pending_ = true;
    raise_softirq();
    return;
  }
  // netif_rx: into the backlog, or dropped when it is full.
  for (uint32_t i = 0; i < irq_frames_ && !ring_.empty(); ++i) {
    Packet p = ring_.take_front();
    if (backlog_.size() >= cfg_.kernel.max_backlog)
      drop(p, Drop::backlog);
    else
      backlog_.push_back(std::move(p));
  }
  irq_frames_ = 0;
  if (!backlog_.empty()) {
    pending_ = true;
    raise_softirq();
  }
  maybe_interrupt();  // frames that came while the handler ran
}

void NetRx::raise_softirq() {
  // Threaded NAPI: the poll is the kthread's, always.
  if (napi_ && cfg_.kernel.threaded_napi) {
    if (!ksoftirqd_running_) run_ksoftirqd();
    return;
  }
  // While ksoftirqd is runnable, IRQ exits leave softirq work to it
  // (kernel/softirq.c, "let ksoftirqd do its job").
  if (ksoftirqd_running_ || softirq_running_) return;
  do_softirq();
}

// __do_softirq on IRQ exit: rounds of net_rx_action until no work is left,
// or until it has run softirq_time or softirq_restarts rounds, when it
// wakes ksoftirqd and returns.
Task NetRx::do_softirq() {
  softirq_running_ = true;
  const Time start = sim_.now();
  uint32_t restarts = cfg_.kernel.softirq_restarts;
  while (pending_ && !ksoftirqd_running_) {
    co_await net_rx_action(cpu_.softirq_context(core_));
    if (pending_ && (sim_.now() - start >= cfg_.kernel.softirq_time || --restarts == 0)) {
      ++stats_.ksoftirqd_wakeups;
      run_ksoftirqd();
      break;
    }
  }
  softirq_running_ = false;
}

// ksoftirqd: rounds of net_rx_action as a process, until no work is left.
Task NetRx::run_ksoftirqd() {
  ksoftirqd_running_ = true;
  while (pending_) co_await net_rx_action(*ksoftirqd_);
  ksoftirqd_running_ = false;
}

// One net_rx_action: polls of up to napi_budget frames (NAPI: off the ring,
// with the driver's work; else: off the backlog) until about netdev_budget frames
// or netdev_budget_time, or no work is left. The frames of a poll are
// taken when it starts and reach the protocols when its CPU time is over.
Task NetRx::net_rx_action(Process& ctx) {
  const KernelConfig& k = cfg_.kernel;
  uint32_t budget = k.netdev_budget;
  const Time until = sim_.now() + k.netdev_budget_time;
  while (pending_ && budget > 0 && sim_.now() < until) {
    Ring<Packet>& from = napi_ ? ring_ : backlog_;
    const uint32_t weight = cfg_.napi_budget;
    const Time per_frame = (napi_ ? k.driver_rx : Time{}) + k.ip_rx + k.transport_rx;
    // One poll walks the ring up to its weight, frames that arrive while
    // it runs included (each poll may take its whole weight; the last may
    // overshoot the budget, as napi_poll's does). The frames it finds at
    // once are processed as one stretch and reach the protocols together.
    ++stats_.polls;
    uint32_t n = 0;
    while (n < weight && !from.empty()) {
      const uint32_t got = static_cast<uint32_t>(std::min<size_t>(weight - n, from.size()));
      for (uint32_t i = 0; i < got; ++i) batch_.push_back(from.take_front());
      co_await cpu_.run(ctx, CpuUse::softirq, per_frame * got);
      n += got;
      stats_.processed += got;
      while (!batch_.empty()) {
        Packet p = batch_.take_front();
        if (deliver_) deliver_(std::move(p));
      }
    }
    budget -= std::min(budget, std::max<uint32_t>(n, 1));
    if (napi_) {
      if (n < weight) {
        // napi_complete_done: the ring ran dry; the interrupt is re-enabled.
        pending_ = false;
        masked_ = false;
        maybe_interrupt();
      }
    } else if (backlog_.empty()) {
      pending_ = false;
    }
  }
}

}  // namespace rdmasim
