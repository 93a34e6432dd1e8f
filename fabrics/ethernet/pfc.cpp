#include "fabrics/ethernet/pfc.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "fabrics/network.hpp"

namespace rdmasim {

namespace {
// The largest frame an IBA path MTU makes on Ethernet: the payload plus at
// most Ethernet, 802.1Q, IPv6 or GRH, UDP, BTH, RETH and ICRC (< 128 bytes).
constexpr uint32_t kFrameOverhead = 128;

uint64_t bytes_in(DataRate rate, Time t) {
  const unsigned __int128 bits =
      static_cast<unsigned __int128>(rate.bps()) * static_cast<uint64_t>(t.count());
  return static_cast<uint64_t>((bits + 8'000'000'000'000u - 1) / 8'000'000'000'000u);
}
}  // namespace

bool is_pfc_frame(std::span<const std::byte> frame) {
  auto eth = ConstEthernetView::check(frame);
  if (!eth || eth->ethertype() != ethertype::kMacControl) return false;
  auto pfc = ConstPfcView::check(eth->payload());
  return pfc && pfc->valid();
}

PfcSettings pfc_settings(const PfcConfig& c) {
  PfcSettings s;
  s.classes = static_cast<uint8_t>(1u << (c.priority & 7));
  s.xoff = c.xoff.count();
  s.xon = c.xon.count();
  s.watchdog = c.watchdog_detect;
  s.watchdog_restore = c.watchdog_restore > Time{} ? c.watchdog_restore : c.watchdog_detect;
  return s;
}

uint64_t pfc_headroom(const LinkParams& link, uint32_t max_frame) {
  const uint64_t frame = max_frame + link.wire_overhead;
  return bytes_in(link.rate, link.delay * 2) + 2 * frame + kPfcFrameLen + link.wire_overhead;
}

PfcSettings lossless_thresholds(const PfcSettings& configured, const Node& node, uint32_t max_frame) {
  PfcSettings s = configured;
  const size_t n = node.port_count();
  if (n < 2) return s;
  uint64_t buffer = UINT64_MAX, headroom = 0;
  for (size_t i = 0; i < n; ++i) {
    buffer = std::min(buffer, node.port(i).params().buffer_bytes);
    headroom = std::max(headroom, pfc_headroom(node.port(i).params(), max_frame));
  }
  // A port's held bytes pass XOFF by less than a frame before it reacts,
  // then grow by at most the headroom.
  const uint64_t share = buffer / (n - 1), reserve = headroom + max_frame;
  const uint64_t limit = std::max<uint64_t>(share > reserve ? share - reserve : 0, max_frame);
  if (limit < s.xoff) {
    s.xon = static_cast<uint64_t>(static_cast<unsigned __int128>(s.xon) * limit / s.xoff);
    s.xoff = limit;
  }
  return s;
}

// ---------------------------------------------------------------- PfcPort

PfcPort::PfcPort(Port& port, PacketPool& pool, const MacAddress& mac, const PfcSettings& s)
    : port_(port), pool_(pool), mac_(mac), s_(s) {}

// Shared buffer (switch-mmu.cc UpdateIngressAdmission, CheckShouldPause):
// the bytes past the reserve are shared until they would pass the
// threshold, then the headroom's.
bool PfcPort::over_threshold(uint8_t cls) const {
  const uint64_t past = held_[cls] - hdrm_[cls];
  const uint64_t used = past > shared_->reserve ? past - shared_->reserve : 0;
  return hdrm_[cls] > 0 || used >= shared_->threshold(shift_);
}

// CheckShouldResume: nothing in the headroom, and the shared bytes
// resume_offset below the threshold (or none).
bool PfcPort::under_resume(uint8_t cls) const {
  const uint64_t past = held_[cls] - hdrm_[cls];
  const uint64_t used = past > shared_->reserve ? past - shared_->reserve : 0;
  return hdrm_[cls] == 0 && (used == 0 || used + shared_->resume_offset <= shared_->threshold(shift_));
}

void PfcPort::add(uint8_t cls, uint64_t bytes) {
  cls &= 7;
  if (!(s_.classes >> cls & 1)) return;
  if (shared_) {
    const uint64_t in = held_[cls] - hdrm_[cls], now_in = in + bytes;
    if (now_in > shared_->reserve && now_in - shared_->reserve > shared_->threshold(shift_))
      hdrm_[cls] += bytes;
    else if (now_in > shared_->reserve)
      shared_->used_add(std::min(bytes, now_in - shared_->reserve));
  }
  held_[cls] += bytes;
  stats_.max_held = std::max(stats_.max_held, held_[cls]);
  if (!pausing_peer(cls) && (shared_ ? over_threshold(cls) : held_[cls] >= s_.xoff)) {
    pausing_ |= static_cast<uint8_t>(1u << cls);
    send_pfc(cls, s_.pause_quanta);
  }
}

void PfcPort::remove(uint8_t cls, uint64_t bytes) {
  cls &= 7;
  if (!(s_.classes >> cls & 1)) return;
  if (shared_) {  // RemoveFromIngressAdmission: the headroom's bytes first
    const uint64_t from_hdrm = std::min(hdrm_[cls], bytes);
    const uint64_t in = held_[cls] - hdrm_[cls];
    const uint64_t from_shared =
        std::min(bytes - from_hdrm, in > shared_->reserve ? in - shared_->reserve : 0);
    hdrm_[cls] -= from_hdrm;
    shared_->shared_used -= std::min(shared_->shared_used, from_shared);
  }
  held_[cls] -= std::min(held_[cls], bytes);
  if (pausing_peer(cls) && (shared_ ? under_resume(cls) : held_[cls] <= s_.xon)) {
    pausing_ &= static_cast<uint8_t>(~(1u << cls));
    port_.owner().sim().cancel(timers(cls).refresh);
    timers(cls).refresh = {};
    send_pfc(cls, 0);
  }
}

// One priority per frame, as a switch's per-priority state machine sends them.
void PfcPort::send_pfc(uint8_t cls, uint16_t quanta) {
  PfcFrame f;
  f.class_enable = static_cast<uint8_t>(1u << cls);
  f.quanta[cls] = quanta;
  Packet p = pool_.make(0, kPfcFrameLen);
  f.emit_frame(p.push_back(kPfcFrameLen), mac_);
  ++port_.stats().pause_frames;
  if (quanta) {
    ++stats_.xoff_sent;
    // Renew the pause before it runs out, while the bytes stay above XON.
    const Time t = pfc_quanta_to_time(quanta, port_.params().rate) / 2;
    timers(cls).refresh = port_.owner().sim().after(t, [this, cls] { refresh(cls); });
  } else {
    ++stats_.xon_sent;
  }
  port_.send_control(std::move(p));
}

void PfcPort::refresh(uint8_t cls) {
  timers(cls).refresh = {};
  if (pausing_peer(cls)) send_pfc(cls, s_.pause_quanta);
}

void PfcPort::on_pfc(const PfcFrame& f) {
  ++stats_.received;
  ++port_.stats().pause_frames;
  Simulator& sim = port_.owner().sim();
  for (uint8_t cls = 0; cls < 8; ++cls) {
    // Only priorities that are lossless here honour PFC (802.1Q 36.1.2).
    if (!(f.class_enable >> cls & 1) || !(s_.classes >> cls & 1)) continue;
    if (watchdog_active(cls)) {  // the watchdog ignores it; a pause still says the storm goes on
      if (f.quanta[cls]) timers(cls).last_ignored = sim.now();
      continue;
    }
    sim.cancel(timers(cls).expire);
    timers(cls).expire = {};
    if (f.quanta[cls] == 0) {
      resume(cls);
      continue;
    }
    const bool began = !paused(cls);
    if (began) {
      timers(cls).paused_since = sim.now();
      arm_watchdog(cls);
    }
    paused_ |= static_cast<uint8_t>(1u << cls);
    if (began && cls == stuck_cls_) arm_stuck_check();
    timers(cls).expire =
        sim.after(pfc_quanta_to_time(f.quanta[cls], port_.params().rate), [this, cls] { expire(cls); });
  }
}

void PfcPort::expire(uint8_t cls) {
  timers(cls).expire = {};
  resume(cls);
}

void PfcPort::resume(uint8_t cls) {
  if (!paused(cls)) return;
  paused_ &= static_cast<uint8_t>(~(1u << cls));
  port_.owner().sim().cancel(timers(cls).watchdog);
  timers(cls).watchdog = {};
  stop_stuck_check(cls);
  port_.kick();
}

// ---- the PFC watchdog, as switches run it (e.g. SONiC's pfcwd, Arista's
// and NVIDIA's): a queue paused for the detection time with frames waiting
// is in a storm or a deadlock. Action drop: its frames are dropped, each a
// whole frame through the port's drop signal (a loss to the transport,
// counted in `drops`), and PFC frames for it are ignored until none has
// come for the restore time; then PFC holds again.

void PfcPort::arm_watchdog(uint8_t cls) {
  if (s_.watchdog <= Time{}) return;
  timers(cls).watchdog = port_.owner().sim().after(s_.watchdog, [this, cls] { watchdog_check(cls); });
}

// Paused since at least the detection time (a resume cancels the check);
// with nothing waiting it is not stuck: looked at again a detection time on.
void PfcPort::watchdog_check(uint8_t cls) {
  timers(cls).watchdog = {};
  if (!paused(cls)) return;
  if (port_.queued_bytes(cls) == 0) {
    arm_watchdog(cls);
    return;
  }
  Simulator& sim = port_.owner().sim();
  sim.cancel(timers(cls).expire);
  timers(cls).expire = {};
  paused_ &= static_cast<uint8_t>(~(1u << cls));
  stop_stuck_check(cls);
  ignoring_ |= static_cast<uint8_t>(1u << cls);
  timers(cls).last_ignored = sim.now();
  const size_t dropped = port_.drain(cls);
  ++stats_.watchdog_events;
  stats_.watchdog_drops += dropped;
  if (watchdog_fired_) watchdog_fired_(cls, dropped);
  timers(cls).restore = sim.after(s_.watchdog_restore, [this, cls] { restore_check(cls); });
  port_.kick();
}

void PfcPort::restore_check(uint8_t cls) {
  Simulator& sim = port_.owner().sim();
  const Time quiet_until = timers(cls).last_ignored + s_.watchdog_restore;
  if (sim.now() < quiet_until) {
    timers(cls).restore = sim.at(quiet_until, [this, cls] { restore_check(cls); });
    return;
  }
  timers(cls).restore = {};
  ignoring_ &= static_cast<uint8_t>(~(1u << cls));
}

Time PfcPort::stuck_since(uint8_t cls) const {
  if (!paused(cls) || port_.queued_bytes(cls) == 0) return Time::max();
  return timers_[timer_index(cls & 7)].paused_since;  // paused: a PFC frame came, so it has them
}

void PfcPort::watch_stuck(uint8_t cls, Time detect, Time every, std::function<void()> stuck) {
  stuck_cls_ = cls & 7;
  stuck_detect_ = detect;
  stuck_every_ = every;
  stuck_ = std::move(stuck);
}

// The next grid time at least the detection time into the pause, and
// after now. Only while paused: the check adds no event to a port that is
// not, and none that outlasts the pause (the run's end is unchanged).
void PfcPort::arm_stuck_check() {
  Simulator& sim = port_.owner().sim();
  const int64_t due =
      std::max(timers(stuck_cls_).paused_since + stuck_detect_, sim.now() + Time::ps(1)).count();
  const int64_t every = stuck_every_.count();
  stuck_check_ = sim.at(Time::ps((due + every - 1) / every * every), [this] { stuck_check(); });
}

void PfcPort::stuck_check() {
  stuck_check_ = {};
  const Time now = port_.owner().sim().now();
  const Time since = stuck_since(stuck_cls_);
  if (since != Time::max() && now - since >= stuck_detect_) stuck_();
  arm_stuck_check();
}

void PfcPort::stop_stuck_check(uint8_t cls) {
  if (cls != stuck_cls_) return;
  port_.owner().sim().cancel(stuck_check_);
  stuck_check_ = {};
}

// ---------------------------------------------------------------- PfcNode

PfcNode::PfcNode(Node& node, PacketPool& pool, const PfcSettings& s, PfcAccounting accounting,
                 const std::function<MacAddress(uint16_t port)>& port_mac)
    : accounting_(accounting), settings_(s), count_(node.port_count()) {
  ports_ = std::allocator<PfcPort>().allocate(count_);
  size_t built = 0;
  try {
    for (; built < count_; ++built)
      std::construct_at(ports_ + built, node.port(built), pool, port_mac(static_cast<uint16_t>(built)),
                        settings_);
  } catch (...) {  // the destructor does not run for a constructor that throws
    std::destroy_n(ports_, built);
    std::allocator<PfcPort>().deallocate(ports_, count_);
    throw;
  }
}

PfcNode::~PfcNode() {
  std::destroy_n(ports_, count_);
  std::allocator<PfcPort>().deallocate(ports_, count_);
}

PfcNode& PfcNode::attach(Node& node, PacketPool& pool, const PfcSettings& s, PfcAccounting accounting,
                         const std::function<MacAddress(uint16_t port)>& port_mac) {
  auto owned = std::make_shared<PfcNode>(node, pool, s, accounting, port_mac);
  PfcNode* const pfc = owned.get();
  node.keep(std::move(owned));
  // The signals hold a plain pointer: small enough for std::function to
  // keep in place, so a frame's signal reaches the node without a further
  // allocation to read (and two allocations fewer a port).
  for (size_t i = 0; i < node.port_count(); ++i) {
    Port& port = node.port(i);
    const auto index = static_cast<uint16_t>(i);
    port.set_gate(&pfc->ports_[i]);
    if (accounting == PfcAccounting::until_released) port.set_meter(&pfc->ports_[i]);
    port.on_rx([pfc, index](Time, Packet& p) { pfc->on_rx(index, p); });
    if (accounting == PfcAccounting::until_departed) {
      port.on_tx([pfc](Time, Packet& p) { pfc->on_gone(p); });
      port.on_drop([pfc](Time, Packet& p) { pfc->on_gone(p); });
    }
  }
  return *pfc;
}

void PfcNode::on_rx(uint16_t port, Packet& p) {
  if (is_pfc_frame(p.header_bytes())) {  // headers only: a parked frame stays parked
    auto eth = ConstEthernetView::check(p.raw_bytes());
    ports_[port].on_pfc(PfcFrame::parse(*ConstPfcView::check(eth->payload())));
    return;
  }
  if (accounting_ != PfcAccounting::until_departed) return;
  const uint8_t cls = p.meta().priority & 7;
  if (!(settings_.classes >> cls & 1)) return;
  PacketMeta& m = p.meta();
  m.pfc_class = cls;
  m.pfc_port = port;
  m.pfc_bytes = static_cast<uint32_t>(p.size());
  ports_[port].add(cls, p.size());
}

void PfcNode::on_gone(Packet& p) {
  PacketMeta& m = p.meta();
  if (m.pfc_bytes == 0) return;  // not held here: a PFC frame, a flood copy, the node's own
  ports_[m.pfc_port].remove(m.pfc_class, m.pfc_bytes);
  m.pfc_bytes = 0;
}

void PfcNode::discarded(const Packet& p) {
  // The node frees the frame; only its count needs undoing.
  const PacketMeta& m = p.meta();
  if (m.pfc_bytes != 0) ports_[m.pfc_port].remove(m.pfc_class, m.pfc_bytes);
}

// ---------------------------------------------------------------- a network

void detect_pfc_deadlocks(Network& net, const std::vector<PfcNode*>& nodes) {
  const PfcConfig& c = net.cfg.pfc_config;
  const Time every = std::max(Time::ns(1), c.deadlock_detect / 4);
  // Each port's callback names the network, its node and itself in 16
  // bytes, which std::function keeps in place: no allocation a port.
  for (size_t n = 0; n < nodes.size(); ++n)
    for (size_t i = 0; nodes[n] && i < nodes[n]->port_count(); ++i)
      nodes[n]->port(i).watch_stuck(c.priority & 7, c.deadlock_detect, every,
                                    [&net, node = static_cast<int>(n), port = static_cast<uint16_t>(i)] {
                                      net.pfc_stuck.push_back({net.sim.now(), node, port});
                                    });
}

void share_buffer(PfcNode& pfc, Node& node, const PfcConfig& c, uint64_t host_rate) {
  SharedBuffer b;
  b.size = c.shared_buffer.count();
  if (c.shared_buffer_per.bps() && host_rate)
    b.size =
        static_cast<uint64_t>(static_cast<unsigned __int128>(b.size) * host_rate / c.shared_buffer_per.bps());
  b.reserve = c.reserve.count();
  b.resume_offset = c.resume_offset.count();
  for (size_t i = 0; i < node.port_count(); ++i) {
    const LinkParams& l = node.port(i).params();
    b.total_headroom += 3 * bytes_in(l.rate, l.delay);  // third.cc: rate x delay / 8 x 3
    b.total_reserve += b.reserve;
  }
  pfc.share(b);
  for (size_t i = 0; i < node.port_count(); ++i) {
    Port& port = node.port(i);
    uint32_t shift = c.alpha_shift;
    for (uint64_t r = port.params().rate.bps(); r > host_rate && shift > 0; r /= 2) --shift;
    pfc.port(i).share(pfc.shared(), shift);
    // Egress queues take what the shared buffer admits (switch-mmu.cc
    // CheckEgressAdmission admits all).
    port.set_buffer_bytes(std::max(port.params().buffer_bytes, b.size));
  }
}

std::vector<PfcNode*> enable_pfc(Network& net,
                                 const std::function<MacAddress(int node, uint16_t port)>& port_mac) {
  const PfcSettings configured = pfc_settings(net.cfg.pfc_config);
  uint32_t mtu = net.cfg.link.mtu;
  for (const LinkSpec& l : net.cfg.topology.links) mtu = std::min(mtu, l.config.mtu);
  const uint32_t max_frame = mtu + kFrameOverhead;
  const PfcConfig& c = net.cfg.pfc_config;
  // The hosts' rate: the shared buffer's size and each port's alpha scale with it (run.py, third.cc).
  uint64_t host_rate = 0;
  for (int h = 0; h < net.graph.host_count(); ++h)
    for (size_t i = 0; i < net.nodes[h]->port_count(); ++i)
      host_rate = std::max(host_rate, net.nodes[h]->port(i).params().rate.bps());
  std::vector<PfcNode*> out(net.nodes.size(), nullptr);
  for (int n = 0; n < net.graph.size(); ++n) {
    Node& node = *net.nodes[n];
    const bool host = net.graph.is_host(n);
    const bool shared = !host && c.shared_buffer.count() > 0;
    PfcSettings s = host || shared ? configured : lossless_thresholds(configured, node, max_frame);
    if (host) s.watchdog = Time{};  // the watchdog is the switches'
    out[n] = &PfcNode::attach(node, net.pool, s,
                              host ? PfcAccounting::until_released : PfcAccounting::until_departed,
                              [&port_mac, n](uint16_t p) { return port_mac(n, p); });
    if (shared) share_buffer(*out[n], node, c, host_rate);
    for (size_t i = 0; s.watchdog > Time{} && i < out[n]->port_count(); ++i)
      out[n]->port(i).on_watchdog([&net, &node, i](uint8_t, size_t dropped) {
        net.pfc_watchdog.push_back({net.sim.now(), node.name(), static_cast<uint16_t>(i), dropped});
      });
  }
  detect_pfc_deadlocks(net, out);
  return out;
}

}  // namespace rdmasim
