#include "fabrics/ip/l3_switch.hpp"

#include <algorithm>

#include "fabrics/ip/wire/int_option.hpp"
#include "fabrics/ip/wire/ipv4.hpp"
#include "fabrics/ip/wire/ipv6.hpp"

namespace rdmasim {

namespace {
// 5-tuple hash for ECMP: the transport ports sit right after the IP header
// for both UDP and TCP. `salt` is the switch's own: with one function at
// every tier, an aggregation switch would see only the flows whose hash
// chose it at the edge and send them all up one of its core links (ECMP
// polarization); real switches seed their hash per switch for that reason.
// The salt mixes in through mix64, so that the value modulo a small group
// size depends on every bit of both.
uint32_t five_tuple_hash(std::span<const std::byte> addrs, uint8_t proto, std::span<const std::byte> l4,
                         uint64_t salt) {
  uint32_t h = 2166136261u;
  for (std::byte b : addrs) h = (h ^ static_cast<uint8_t>(b)) * 16777619u;
  h = (h ^ proto) * 16777619u;
  for (size_t i = 0; i < 4 && i < l4.size(); ++i) h = (h ^ static_cast<uint8_t>(l4[i])) * 16777619u;
  return static_cast<uint32_t>(mix64((uint64_t{h} << 32 | h) ^ salt) >> 32);
}

// An IPv6 address as one number, so that consecutive addresses are consecutive keys.
unsigned __int128 key(const Ipv6Address& a) {
  unsigned __int128 k = 0;
  for (uint8_t o : a.octets) k = k << 8 | o;
  return k;
}
}  // namespace

L3Switch::L3Switch(Simulator& sim, std::string name, uint32_t mac_base, const SwitchConfig& cfg,
                   const EcnConfig& ecn, uint64_t seed)
    : Node(sim, std::move(name)),
      cfg_(cfg),
      ecn_(ecn),
      mac_base_(mac_base),
      rng_(Rng::stream(seed, "ecn:" + name_)),
      // From the name, not the experiment's seed: paths stay the same under
      // every seed (yaml.md, Randomness).
      ecmp_salt_(Rng::stream(0, "ecmp:" + name_).next()) {}

uint32_t L3Switch::ecmp_set(std::vector<uint16_t> ports) {
  const auto [it, fresh] = group_index_.try_emplace(ports, static_cast<uint32_t>(groups_.size()));
  if (fresh) groups_.push_back(std::move(ports));
  return it->second;
}

void L3Switch::add_route(const Ipv4Address& dst, uint32_t set) { v4_.set(dst.to_u32(), set); }
void L3Switch::add_route(const Ipv6Address& dst, uint32_t set) { v6_.set(key(dst), set); }

void L3Switch::add_route(const Ipv4Address& first, const Ipv4Address& last, uint32_t set) {
  v4_.set(first.to_u32(), last.to_u32(), set);
}
void L3Switch::add_route(const Ipv6Address& first, const Ipv6Address& last, uint32_t set) {
  v6_.set(key(first), key(last), set);
}

const std::vector<uint16_t>* L3Switch::route(const Ipv4Address& dst) const {
  const uint32_t* g = v4_.find(dst.to_u32());
  return g ? &groups_[*g] : nullptr;
}
const std::vector<uint16_t>* L3Switch::route(const Ipv6Address& dst) const {
  const uint32_t* g = v6_.find(key(dst));
  return g ? &groups_[*g] : nullptr;
}

void L3Switch::routes_done() {
  v4_.shrink();
  v6_.shrink();
}

size_t L3Switch::route_bytes() const {
  size_t n = v4_.bytes() + v6_.bytes() + groups_.capacity() * sizeof(groups_[0]);
  for (const auto& g : groups_) n += g.capacity() * sizeof(uint16_t);
  return n;
}

void L3Switch::set_neighbor(uint16_t port, const MacAddress& mac) {
  if (neighbors_.size() <= port) neighbors_.resize(port + 1);
  neighbors_[port] = mac;
}

MacAddress L3Switch::port_mac(uint16_t port) const { return MacAddress::switch_port(mac_base_, port); }

// A switch reads and rewrites headers only (header_bytes()): a frame whose
// payload waits in its sender's memory stays parked from the wire it came
// in on to the queue it leaves from.
void L3Switch::receive(Port& in, Packet p) {
  auto eth = EthernetView::check(p.header_bytes());
  const size_t ip_bytes = p.size() > EthernetView::kLen ? p.size() - EthernetView::kLen : 0;
  const std::vector<uint16_t>* ports = nullptr;
  uint32_t hash = 0;
  if (eth && eth->dst().is_multicast() && eth->ethertype() != ethertype::kMacControl) {
    ++stats_.group;  // to a group (neighbour discovery, ARP): not routed, and not lost either
  } else if (eth && eth->ethertype() == ethertype::kIpv4) {
    auto ip = Ipv4View::check(eth->payload());
    if (!ip || !ip->valid_in(ip_bytes)) {
      ++stats_.not_ip;
    } else if (ip->ttl() <= 1) {
      ++stats_.ttl_expired;  // RFC 1812 5.3.1 (no ICMP is modelled)
    } else if (const uint32_t* g = v4_.find(ip->dst().to_u32()); g && !groups_[*g].empty()) {
      ports = &groups_[*g];
      if (ports->size() > 1)
        hash = five_tuple_hash(ip->header().subspan(12, 8), ip->protocol(), ip->payload_start(), ecmp_salt_);
      ip->decrement_ttl();
    } else {
      ++stats_.no_route;
    }
  } else if (eth && eth->ethertype() == ethertype::kIpv6) {
    auto ip = Ipv6View::check(eth->payload());
    if (!ip || !ip->valid_in(ip_bytes)) {
      ++stats_.not_ip;
    } else if (ip->hop_limit() <= 1) {
      ++stats_.ttl_expired;
    } else if (const uint32_t* g = v6_.find(key(ip->dst())); g && !groups_[*g].empty()) {
      ports = &groups_[*g];
      if (ports->size() > 1)
        hash =
            five_tuple_hash(ip->header().subspan(8, 32), ip->next_header(), ip->payload_start(), ecmp_salt_);
      ip->set_hop_limit(static_cast<uint8_t>(ip->hop_limit() - 1));
    } else {
      ++stats_.no_route;
    }
  } else if (!eth || eth->ethertype() != ethertype::kMacControl) {  // PAUSE frames end at the MAC
    ++stats_.not_ip;
  }
  if (!ports) {
    in.release_ingress(p);
    return;
  }
  // DSCP says the traffic class (8p + x -> p), as the sender set it.
  const uint16_t out = (*ports)[hash % ports->size()];
  forward(in, out, std::move(p));
}

void L3Switch::forward(Port& in, uint16_t out, Packet p) {
  auto eth = EthernetView::check(p.header_bytes());
  eth->set_src(port_mac(out));
  if (out < neighbors_.size()) eth->set_dst(neighbors_[out]);
  // Cut-through: the frame's first bit leaves `latency` after its first bit
  // came in; the port model delivers at the last bit, so take back the
  // ingress serialisation time. Store-and-forward starts after the last bit.
  Time delay = cfg_.latency;
  if (cfg_.mode == SwitchMode::cut_through) {
    const Time in_tx = in.tx_time(p.size());
    delay = std::max(Time{}, cfg_.latency - in_tx);
  }
  in.release_ingress(p);
  ++stats_.forwarded;
  if (ecn_.enabled && ecn_.at == EcnAt::enqueue && mark(port(out), p.meta().priority & 7))
    set_ce(port(out), p);
  // The frame takes its place in the egress queue now and may start once
  // the forwarding latency has passed; per-port order is kept.
  if (last_ready_.size() < port_count()) last_ready_.resize(port_count());
  const Time ready = std::max(sim_.now() + delay, last_ready_[out]);
  last_ready_[out] = ready;
  port(out).send(std::move(p), ready);
}

// CE on an ECN-capable frame (RFC 3168 5); counted on the port.
void L3Switch::set_ce(Port& out, Packet& p) {
  auto eth = EthernetView::check(p.header_bytes());
  bool marked = false;
  if (eth->ethertype() == ethertype::kIpv4) {
    auto ip = Ipv4View::check(eth->payload());
    if (ip && is_ect(ip->ecn())) {
      ip->update_ecn(Ecn::Ce);
      marked = true;
    }
  } else if (eth->ethertype() == ethertype::kIpv6) {
    auto ip = Ipv6View::check(eth->payload());
    if (ip && is_ect(ip->ecn())) {
      ip->set_ecn(Ecn::Ce);
      marked = true;
    }
  }
  if (marked) {
    ++stats_.ecn_marked;
    ++out.stats().ecn_marks;
  }
}

void L3Switch::enable_dequeue_marking() {
  for (size_t i = 0; i < port_count(); ++i) {
    Port& out = port(i);
    out.on_tx([this, &out](Time, Packet& p) {
      if (mark(out, p.meta().priority & 7)) set_ce(out, p);
    });
  }
}

void L3Switch::enable_telemetry() {
  for (size_t i = 0; i < port_count(); ++i) {
    Port& out = port(i);
    out.on_tx([this, &out](Time, Packet& p) { stamp(out, p); });
  }
}

void L3Switch::stamp(const Port& out, Packet& p) {
  auto eth = EthernetView::check(p.header_bytes());
  if (!eth || eth->ethertype() != ethertype::kIpv4) return;
  auto ip = Ipv4View::check(eth->payload());
  if (!ip || ip->header_len() < Ipv4View::kLen + IntOption::kLen) return;
  auto opt = IntOption::find(ip->header().subspan(Ipv4View::kLen));
  if (!opt || opt->echo()) return;
  if (!opt->push(IntHop::sample(sim_.now(), out.stats().tx_bytes, out.queued_bytes(), out.params().rate))) {
    ++stats_.telemetry_full;  // a path longer than IntStack::kMaxHops switches
    return;
  }
  ip->fill_checksum();
  p.meta().crc_pending = true;  // the option is inside the ICRC: a capture after this hop seals it again
}

// RED on the instantaneous egress queue (as DCQCN switches configure it):
// the whole port's or the frame's priority's, at enqueue (before the frame
// joins it) or at dequeue (the bytes behind the frame, HPCC's simulator's
// SwitchMmu::ShouldSendCN); kmin and kmax per `rates_per` of the port's rate.
bool L3Switch::mark(const Port& out, uint8_t cls) {
  const uint64_t q = ecn_.per_priority ? out.queued_bytes(cls) : out.queued_bytes();
  uint64_t kmin = ecn_.kmin.count(), kmax = ecn_.kmax.count();
  if (ecn_.rates_per.bps()) {
    const auto scale = [&](uint64_t k) {
      return static_cast<uint64_t>(static_cast<unsigned __int128>(k) * out.params().rate.bps() /
                                   ecn_.rates_per.bps());
    };
    kmin = scale(kmin);
    kmax = scale(kmax);
  }
  if (q <= kmin) return false;
  if (q >= kmax) return true;
  const double p = ecn_.pmax * static_cast<double>(q - kmin) / static_cast<double>(kmax - kmin);
  return rng_.chance(p);
}

}  // namespace rdmasim
