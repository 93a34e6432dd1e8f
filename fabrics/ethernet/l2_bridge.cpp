#include "fabrics/ethernet/l2_bridge.hpp"

#include <algorithm>

#include "fabrics/ethernet/wire/vlan.hpp"

namespace rdmasim {

namespace {
// 01:80:C2:00:00:00 .. 0F: never relayed by a bridge (802.1Q Table 8-1).
bool reserved_group(const MacAddress& m) {
  return m.octets[0] == 0x01 && m.octets[1] == 0x80 && m.octets[2] == 0xC2 && m.octets[3] == 0x00 &&
         m.octets[4] == 0x00 && m.octets[5] <= 0x0F;
}
}  // namespace

L2Bridge::L2Bridge(Simulator& sim, std::string name, uint32_t mac_base, const SwitchConfig& cfg, Time ageing)
    : Node(sim, std::move(name)), cfg_(cfg), mac_base_(mac_base), ageing_(ageing) {}

void L2Bridge::set_blocked(uint16_t port, bool blocked) {
  if (blocked_.size() <= port) blocked_.resize(port + 1, false);
  blocked_[port] = blocked;
}

void L2Bridge::set_access_vlan(uint16_t port, uint16_t vid) {
  if (access_vlan_.size() <= port) access_vlan_.resize(port + 1, 0);
  access_vlan_[port] = vid;
}

uint64_t L2Bridge::key(uint16_t vid, const MacAddress& m) {
  uint64_t k = vid & 0x0FFF;
  for (uint8_t o : m.octets) k = k << 8 | o;
  return k;
}

std::optional<uint16_t> L2Bridge::lookup(uint16_t vid, const MacAddress& mac) const {
  auto it = fdb_.find(key(vid, mac));
  if (it == fdb_.end() || sim_.now() - it->second.seen > ageing_) return std::nullopt;
  return it->second.port;
}

void L2Bridge::learn(uint16_t vid, const MacAddress& src, uint16_t port) {
  auto [it, fresh] = fdb_.try_emplace(key(vid, src), FdbEntry{port, sim_.now()});
  if (fresh || it->second.port != port || sim_.now() - it->second.seen > ageing_) ++stats_.learned;
  it->second = {port, sim_.now()};
}

void L2Bridge::discard(Port& in, Packet& p) {
  in.release_ingress(p);
  if (on_discard_) on_discard_(p);
}

void L2Bridge::receive(Port& in, Packet p) {
  auto eth = ConstEthernetView::check(p.raw_bytes());
  if (!eth) return discard(in, p);
  if (blocked(in.index())) {  // 802.1D 8.4: a blocking port discards what it receives
    ++stats_.blocked;
    return discard(in, p);
  }
  const MacAddress dst = eth->dst();
  if (reserved_group(dst)) {
    ++stats_.reserved;
    return discard(in, p);
  }
  uint16_t vid = 0;
  if (eth->ethertype() == ethertype::kVlan)
    if (auto tag = ConstVlanView::check(eth->payload())) vid = tag->vid();
  const MacAddress src = eth->src();
  if (!src.is_multicast()) learn(vid, src, in.index());

  if (!dst.is_multicast()) {
    if (auto out = lookup(vid, dst)) {
      if (*out == in.index()) {
        ++stats_.filtered;
        return discard(in, p);
      }
      ++stats_.forwarded;
      in.release_ingress(p);  // handed to its egress
      return relay(in, *out, std::move(p));
    }
  }
  // Flood: every forwarding port but the one it came in on.
  flood_.clear();
  for (size_t i = 0; i < port_count(); ++i) {
    const auto o = static_cast<uint16_t>(i);
    if (o != in.index() && !blocked(o) && port(o).connected() && carries(o, vid)) flood_.push_back(o);
  }
  if (flood_.empty()) return discard(in, p);
  ++stats_.flooded;
  in.release_ingress(p);
  for (size_t i = 0; i + 1 < flood_.size(); ++i) relay(in, flood_[i], p.clone());
  relay(in, flood_.back(), std::move(p));
}

void L2Bridge::relay(Port& in, uint16_t out, Packet p) {
  // Cut-through: the first bit leaves `latency` after the first bit came
  // in; the port model delivers at the last bit, so take back the ingress
  // serialisation time. Store-and-forward: `latency` after the last bit.
  Time delay = cfg_.latency;
  if (cfg_.mode == SwitchMode::cut_through) {
    const Time in_tx = in.tx_time(p.size());
    delay = std::max(Time{}, cfg_.latency - in_tx);
  }
  if (pipeline_.size() < port_count()) pipeline_.resize(port_count());
  Pending& q = pipeline_[out];
  const Time when = std::max(sim_.now() + delay, q.last);  // frames to one port keep their order
  q.last = when;
  q.frames.push_back(std::move(p));
  sim_.at(when, [this, out] { egress(out); });
}

void L2Bridge::egress(uint16_t out) {
  Packet p = std::move(pipeline_[out].frames.front());
  pipeline_[out].frames.pop_front();
  port(out).send(std::move(p));
}

}  // namespace rdmasim
