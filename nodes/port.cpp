#include "nodes/port.hpp"

#include <algorithm>
#include <stdexcept>

#include "nodes/node.hpp"

namespace rdmasim {

void EgressGate::remote_update(Time, uint64_t, uint8_t, uint64_t) {
  throw std::logic_error("a flow-control update from another engine for a gate that takes none");
}

void Port::connect(Port& a, Port& b, const LinkParams& params, uint64_t seed) {
  a.peer_ = &b;
  b.peer_ = &a;
  a.params_ = b.params_ = params;
  a.last_tx_bytes_ = b.last_tx_bytes_ = SIZE_MAX;
  a.loss_rng_ = Rng::stream(seed, "loss:" + a.owner_.name() + ":" + std::to_string(a.index_));
  b.loss_rng_ = Rng::stream(seed, "loss:" + b.owner_.name() + ":" + std::to_string(b.index_));
}

void Port::set_link_up(Port& a, bool up) {
  for (Port* p : {&a, a.peer_}) {
    if (!p) continue;
    const bool changed = p->up_ != up;
    p->up_ = up;
    if (!up)
      for (size_t i = 0; i < p->wire_.size(); ++i) p->wire_[i].lost = true;
    if (changed) p->owner_.link_changed(*p, up);
  }
}

bool Port::send(Packet p, Time ready) {
  p.pad_to(params_.min_frame);
  const uint8_t cls = class_of(p);
  const size_t n = p.size();
  if (!peer_ || queued_bytes_ + n > params_.buffer_bytes) {
    drop(p, !peer_);
    return false;
  }
  const Time start = std::max(sim_.now(), ready);  // when it may start
  p.meta().enqueued = start;
  queued_bytes_ += n;
  stats_.max_queue_bytes = std::max(stats_.max_queue_bytes, queued_bytes_);
  ++queued_frames_;
  class_bytes_[cls] += n;
  p.park();  // it waits: without room for a payload nobody has read yet
  queues_[cls].push_back({std::move(p), start});
  nonempty_ |= static_cast<uint8_t>(1u << cls);
  if (!busy())
    start_next();
  else
    arm_tx_done();
  return true;
}

void Port::send_control(Packet p) {
  p.pad_to(params_.min_frame);
  if (!peer_) {
    drop(p, true);
    return;
  }
  control_.push_back(std::move(p));
  if (!busy())
    start_next();
  else
    arm_tx_done();
}

void Port::start_next() {
  if (!control_.empty()) {
    Packet p = control_.take_front();
    control_.shrink_if_empty(0);  // PFC frames: rare, one at a time
    transmit(std::move(p));
    return;
  }
  if (nonempty_ == 0) return;
  const Time now = sim_.now();
  Time earliest = Time::max();
  bool gated = false;
  // Strict-priority classes first, the highest first.
  for (uint8_t pending = nonempty_ & strict_; pending;) {
    const auto cls = static_cast<uint8_t>(31 - __builtin_clz(pending));
    if (try_class(cls, now, earliest, gated)) return;
    pending &= static_cast<uint8_t>(~(1u << cls));
  }
  // Round robin from rr_next_ over the other classes with frames queued.
  const auto rr = static_cast<uint8_t>(nonempty_ & ~strict_);
  const uint8_t rotated = static_cast<uint8_t>(rr >> rr_next_ | rr << (kClasses - rr_next_));
  for (uint8_t pending = rotated; pending; pending &= static_cast<uint8_t>(pending - 1)) {
    const uint8_t cls = static_cast<uint8_t>((rr_next_ + __builtin_ctz(pending)) % kClasses);
    if (try_class(cls, now, earliest, gated)) return;
  }
  if (earliest != Time::max()) wake_at(earliest);
  if (gated) note_blocked(true);  // frames wait, but flow control holds them back
}

bool Port::try_class(uint8_t cls, Time now, Time& earliest, bool& gated) {
  auto& q = queues_[cls];
  if (q.front().ready > now) {
    earliest = std::min(earliest, q.front().ready);
    return false;
  }
  const size_t n = q.front().packet.size();
  if (gate_ && !gate_->may_send(cls, n)) {
    gated = true;
    return false;
  }
  if (gate_) gate_->sent(cls, n);
  Packet p = std::move(q.take_front().packet);
  if (q.empty()) {
    nonempty_ &= static_cast<uint8_t>(~(1u << cls));
    q.shrink_if_empty(kKeptQueue);
  } else {
    q.front().packet.prefetch();
  }
  queued_bytes_ -= n;
  --queued_frames_;
  class_bytes_[cls] -= n;
  if (!(strict_ >> cls & 1)) rr_next_ = static_cast<uint8_t>((cls + 1) % kClasses);
  transmit(std::move(p));
  return true;
}

void Port::wake_at(Time t) {
  if (wake_ && wake_time_ <= t) return;
  sim_.cancel(wake_);
  wake_time_ = t;
  wake_ = sim_.at(t, [this] {
    wake_ = {};
    if (!busy()) start_next();
  });
}

void Port::note_blocked(bool blocked) {
  if (blocked == blocked_) return;
  blocked_ = blocked;
  if (blocked)
    blocked_since_ = sim_.now();
  else
    stats_.credit_wait += sim_.now() - blocked_since_;
}

void Port::transmit(Packet p) {
  // A node another engine runs (parallel/): code that set up the experiment
  // on every engine may have sent from it. That engine sends the frame.
  // (The split test first: a whole network's port need not read its node.)
  if (sim_.split() && !sim_.runs(owner_.context())) return;
  note_blocked(false);
  ++stats_.tx_frames;
  stats_.tx_bytes += p.size();
  for (auto& f : tx_observers_) f(sim_.now(), p);
  const Time t = tx_time(p.size());
  const bool lost = !up_ || loss_rng_.chance(params_.loss);
  busy_until_ = sim_.now() + t;
  // The end of this frame matters only to someone waiting: queued frames or
  // a NIC with more to send. An idle port schedules nothing for it.
  if (queued_frames_ > 0 || !control_.empty() || want_ready_) arm_tx_done();
  // The arrival runs as the receiving node, keyed by this one: its place
  // among the receiver's events at that instant is the sender's to give.
  const Time at = sim_.now() + t + params_.delay;
  const uint64_t order = sim_.next_order();
  if (!remote_) p.park();  // another rank's frames are read as they leave (parallel/)
  wire_.push_back({std::move(p), lost, at, order});
  if (remote_)
    remote_->sent(*this);
  else if (wire_.size() == 1)
    schedule_arrival();
}

void Port::put_on_wire(InFlight f) {
  wire_.push_back(std::move(f));
  if (wire_.size() == 1) schedule_arrival();
}

// Only the oldest frame on a wire has its arrival scheduled; it schedules
// the next when it arrives. A wire delivers in the order it was fed and
// each frame keeps the key it was given when it left, so events run in
// exactly the order one event per frame gave, while the engine holds one
// entry per busy wire instead of one per frame in flight (at k = 32, some
// 600,000 entries and their slots).
void Port::schedule_arrival() {
  const InFlight& f = wire_.front();
  sim_.place(f.at, f.order, peer_->owner_.context(), [this] { arrive(); });
}

void Port::arm_tx_done() {
  if (tx_done_pending_ || !busy()) return;
  tx_done_pending_ = true;
  sim_.at(busy_until_, [this] { tx_done(); });
}

void Port::tx_done() {
  tx_done_pending_ = false;
  // A frame sent at this very instant may have started already (send()
  // found the wire free): then the wire is taken, and its end needs an event.
  if (busy())
    arm_tx_done();
  else
    start_next();
  if (tx_ready_ && want_ready_) tx_ready_();
}

void Port::arrive() {
  auto [p, lost, at, order] = wire_.take_front();
  if (!wire_.empty()) {
    wire_.front().packet.prefetch();
    schedule_arrival();
  } else {
    wire_.shrink_if_empty(kKeptQueue);
  }
  if (lost) {
    drop(p, true);
    if (peer_->meter_) peer_->meter_->lost(peer_->class_of(p), p.size());
    return;
  }
  Port& in = *peer_;
  ++in.stats_.rx_frames;
  in.stats_.rx_bytes += p.size();
  p.meta().ingress_port = in.index_;
  if (in.meter_) in.meter_->hold(in.class_of(p), p.size());
  for (auto& obs : in.rx_observers_) obs(sim_.now(), p);
  in.owner_.receive(in, std::move(p));
}

size_t Port::drain(uint8_t cls) {
  auto& q = queues_[cls];
  size_t n = 0;
  while (!q.empty()) {
    Packet p = std::move(q.take_front().packet);
    queued_bytes_ -= p.size();
    --queued_frames_;
    class_bytes_[cls] -= p.size();
    drop(p);
    ++n;
  }
  nonempty_ &= static_cast<uint8_t>(~(1u << cls));
  return n;
}

void Port::drop(Packet& p, bool on_link) {
  ++stats_.drops;
  if (on_link) ++stats_.link_drops;
  for (auto& f : drop_observers_) f(sim_.now(), p);
}

}  // namespace rdmasim
