#include "fabrics/ethernet/pfc.hpp"

#include <algorithm>

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

void PfcPort::add(uint8_t cls, uint64_t bytes) {
  cls &= 7;
  if (!(s_.classes >> cls & 1)) return;
  held_[cls] += bytes;
  stats_.max_held = std::max(stats_.max_held, held_[cls]);
  if (held_[cls] >= s_.xoff && !pausing_peer(cls)) {
    pausing_ |= static_cast<uint8_t>(1u << cls);
    send_pfc(cls, s_.pause_quanta);
  }
}

void PfcPort::remove(uint8_t cls, uint64_t bytes) {
  cls &= 7;
  if (!(s_.classes >> cls & 1)) return;
  held_[cls] -= std::min(held_[cls], bytes);
  if (pausing_peer(cls) && held_[cls] <= s_.xon) {
    pausing_ &= static_cast<uint8_t>(~(1u << cls));
    port_.owner().sim().cancel(refresh_[cls]);
    refresh_[cls] = {};
    send_pfc(cls, 0);
  }
}

// One priority per frame, as a switch's per-priority state machine sends them.
void PfcPort::send_pfc(uint8_t cls, uint16_t quanta) {
  PfcFrame f;
  f.class_enable = static_cast<uint8_t>(1u << cls);
  f.quanta[cls] = quanta;
  Packet p = pool_.make(0);
  f.emit_frame(p.push_back(kPfcFrameLen), mac_);
  ++port_.stats().pause_frames;
  if (quanta) {
    ++stats_.xoff_sent;
    // Renew the pause before it runs out, while the bytes stay above XON.
    const Time t = pfc_quanta_to_time(quanta, port_.params().rate) / 2;
    refresh_[cls] = port_.owner().sim().after(t, [this, cls] { refresh(cls); });
  } else {
    ++stats_.xon_sent;
  }
  port_.send_control(std::move(p));
}

void PfcPort::refresh(uint8_t cls) {
  refresh_[cls] = {};
  if (pausing_peer(cls)) send_pfc(cls, s_.pause_quanta);
}

void PfcPort::on_pfc(const PfcFrame& f) {
  ++stats_.received;
  ++port_.stats().pause_frames;
  Simulator& sim = port_.owner().sim();
  for (uint8_t cls = 0; cls < 8; ++cls) {
    // Only priorities that are lossless here honour PFC (802.1Q 36.1.2).
    if (!(f.class_enable >> cls & 1) || !(s_.classes >> cls & 1)) continue;
    sim.cancel(expire_[cls]);
    expire_[cls] = {};
    if (f.quanta[cls] == 0) {
      resume(cls);
      continue;
    }
    paused_ |= static_cast<uint8_t>(1u << cls);
    expire_[cls] =
        sim.after(pfc_quanta_to_time(f.quanta[cls], port_.params().rate), [this, cls] { expire(cls); });
  }
}

void PfcPort::expire(uint8_t cls) {
  expire_[cls] = {};
  resume(cls);
}

void PfcPort::resume(uint8_t cls) {
  if (!paused(cls)) return;
  paused_ &= static_cast<uint8_t>(~(1u << cls));
  port_.kick();
}

// ---------------------------------------------------------------- PfcNode

PfcNode& PfcNode::attach(Node& node, PacketPool& pool, const PfcSettings& s, PfcAccounting accounting,
                         const std::function<MacAddress(uint16_t port)>& port_mac) {
  auto pfc = std::make_shared<PfcNode>(accounting);
  for (size_t i = 0; i < node.port_count(); ++i) {
    Port& port = node.port(i);
    const auto index = static_cast<uint16_t>(i);
    pfc->ports_.push_back(std::make_unique<PfcPort>(port, pool, port_mac(index), s));
    port.set_gate(pfc->ports_.back().get());
    if (accounting == PfcAccounting::until_released) port.set_meter(pfc->ports_.back().get());
  }
  // The observers own the PfcNode: it goes when the last port does.
  for (size_t i = 0; i < node.port_count(); ++i) {
    Port& port = node.port(i);
    const auto index = static_cast<uint16_t>(i);
    port.on_rx([pfc, index](Time, Packet& p) { pfc->on_rx(index, p); });
    if (accounting == PfcAccounting::until_departed) {
      port.on_tx([pfc](Time, Packet& p) { pfc->on_gone(p); });
      port.on_drop([pfc](Time, Packet& p) { pfc->on_gone(p); });
    }
  }
  return *pfc;
}

void PfcNode::on_rx(uint16_t port, const Packet& p) {
  if (is_pfc_frame(p.raw_bytes())) {
    auto eth = ConstEthernetView::check(p.raw_bytes());
    ports_[port]->on_pfc(PfcFrame::parse(*ConstPfcView::check(eth->payload())));
    return;
  }
  if (accounting_ != PfcAccounting::until_departed) return;
  const uint8_t cls = p.meta().priority & 7;
  if (!(ports_[port]->settings().classes >> cls & 1)) return;
  held_[p.meta().id] = {port, cls, static_cast<uint32_t>(p.size())};
  ports_[port]->add(cls, p.size());
}

void PfcNode::on_gone(const Packet& p) {
  auto it = held_.find(p.meta().id);
  if (it == held_.end()) return;  // not held here: a PFC frame, a flood copy, the node's own
  const Held h = it->second;
  held_.erase(it);
  ports_[h.port]->remove(h.cls, h.bytes);
}

void PfcNode::discarded(const Packet& p) { on_gone(p); }

// ---------------------------------------------------------------- a network

std::vector<PfcNode*> enable_pfc(Network& net,
                                 const std::function<MacAddress(int node, uint16_t port)>& port_mac) {
  const PfcSettings configured = pfc_settings(net.cfg.pfc_config);
  uint32_t mtu = net.cfg.link.mtu;
  for (const LinkSpec& l : net.cfg.topology.links) mtu = std::min(mtu, l.config.mtu);
  const uint32_t max_frame = mtu + kFrameOverhead;
  std::vector<PfcNode*> out(net.nodes.size(), nullptr);
  for (int n = 0; n < net.graph.size(); ++n) {
    Node& node = *net.nodes[n];
    const bool host = net.graph.is_host(n);
    const PfcSettings s = host ? configured : lossless_thresholds(configured, node, max_frame);
    out[n] = &PfcNode::attach(node, net.pool, s,
                              host ? PfcAccounting::until_released : PfcAccounting::until_departed,
                              [&port_mac, n](uint16_t p) { return port_mac(n, p); });
  }
  return out;
}

}  // namespace rdmasim
