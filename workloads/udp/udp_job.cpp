#include "workloads/udp/udp_job.hpp"

#include <stdexcept>

namespace rdmasim {

UdpJob::UdpJob(Simulator& sim, Host& from, Host& to, const WorkloadConfig& w)
    : sim_(sim),
      from_(from),
      to_(to),
      w_(w),
      tx_(socket_stack_of(from, "udp")),
      rx_(socket_stack_of(to, "udp")),
      socket_(sim, to.config().kernel.socket_buffer),
      process_(to.spawn(w.name, Process::Kind::io, /*fair=*/true)),
      port_(rx_.bind_udp(socket_)),
      gap_(w.rate.tx_time(w.size.count())) {
  paced_source_ = true;
}

UdpJob::~UdpJob() { from_.nic().forget(*this); }

void UdpJob::start() {
  next_ = w_.start;
  end_ = w_.start + w_.duration;
  {
    Simulator::Scope as(sim_, to_.context());
    receiver();
  }
  Simulator::Scope as(sim_, from_.context());
  from_.nic().wake(*this);
}

bool UdpJob::has_tx() const { return next_ < end_; }

Packet UdpJob::next_frame() {
  if (first_ == Time::max()) first_ = sim_.now();
  // A generator that fell behind (the link is slower than `rate`) sends
  // back to back: the link caps the offered load.
  next_ = std::max(next_, sim_.now()) + gap_;
  const uint16_t sport = static_cast<uint16_t>(49152 + port_ % 16384);
  return tx_.udp_frame(rx_, sport, port_, static_cast<uint32_t>(w_.size.count()), offered_++);
}

// The receiving program: recvmsg in a loop. An empty socket puts it to
// sleep until the softirq queues a datagram (sk_data_ready wakes it).
// With a user-space stack (host.stack: dpdk) the loop polls the stack
// instead: a call that finds the datagram in place, spinning while none is.
Task UdpJob::receiver() {
  const SocketCosts k = SocketCosts::of(to_.config());
  Cpu& cpu = to_.cpu();
  if (k.spin_to_wait) co_await cpu.run(process_, k.use, k.call);  // the first poll: the core is the loop's
  for (;;) {
    if (socket_.empty() && k.spin_to_wait) cpu.spin(process_);
    while (socket_.empty()) co_await socket_.readable();
    const UdpSocket::Datagram d = socket_.take();
    // recvmsg: the system call, then copy_to_user of the payload.
    co_await cpu.run(process_, k.use, k.call + (k.copy_on_receive ? k.copy.tx_time(d.bytes) : Time{}));
    if (w_.app_cost > Time{}) co_await cpu.run(process_, CpuUse::user, w_.app_cost);
    ++delivered_;
    if (sim_.now() <= end_) ++delivered_in_time_;
    delivered_bytes_ += d.bytes;
    last_ = sim_.now();
    if (w_.size.count() >= 16)
      latency_ps_.push_back((sim_.now() - d.sent).count());  // the send time rides in the payload
  }
}

UdpJob::Counts UdpJob::counts() const {
  Counts c;
  c.offered = offered_;
  const auto& st = rx_.udp_stats(port_);
  c.received = st.received;
  c.ring_drops = st.ring_drops;
  c.backlog_drops = st.backlog_drops;
  c.socket_drops = socket_.drops();
  c.delivered = delivered_;
  c.delivered_in_time = delivered_in_time_;
  return c;
}

// Finished once started (end_ is set, duration being above 0), with every
// datagram offered and each delivered or dropped: the run may go idle before
// `end_` when the last datagram, offered one gap before it, is delivered
// sooner than that gap.
bool UdpJob::finished() const {
  const Counts c = counts();
  return end_ > Time{} && !has_tx() && c.delivered + c.dropped() >= c.offered;
}

}  // namespace rdmasim
