#include "fabrics/ethernet/neighbor_cache.hpp"

namespace rdmasim {

NeighborCache::NeighborCache(Simulator& sim, Params params, Solicit solicit)
    : sim_(sim), params_(params), solicit_(std::move(solicit)) {}

NeighborCache::~NeighborCache() {
  for (auto& [a, e] : entries_) sim_.cancel(e.timer);
}

std::optional<MacAddress> NeighborCache::lookup(const Ipv6Address& a) const {
  auto it = entries_.find(a);
  if (it == entries_.end()) return std::nullopt;
  return it->second.mac;
}

void NeighborCache::resolve(const Ipv6Address& a) {
  auto [it, fresh] = entries_.try_emplace(a);
  if (fresh) solicit(a, it->second);
}

bool NeighborCache::hold(const Ipv6Address& a, Packet p) {
  resolve(a);
  Entry& e = entries_.at(a);
  if (e.queued_bytes + p.size() > params_.hold_bytes) {
    ++stats_.dropped;
    return false;
  }
  ++stats_.held;
  e.queued_bytes += p.size();
  e.queue.push_back(std::move(p));
  return true;
}

std::deque<Packet> NeighborCache::learn(const Ipv6Address& a, const MacAddress& mac) {
  Entry& e = entries_[a];
  if (!e.mac) ++stats_.resolved;
  e.mac = mac;
  sim_.cancel(e.timer);
  e.timer = {};
  e.solicits_sent = 0;
  e.queued_bytes = 0;
  return std::exchange(e.queue, {});
}

// RFC 4861 7.2.2: multicast solicitations every RETRANS_TIMER until one is
// answered or MAX_MULTICAST_SOLICIT went unanswered.
void NeighborCache::solicit(const Ipv6Address& a, Entry& e) {
  ++e.solicits_sent;
  ++stats_.solicitations;
  e.timer = sim_.after(params_.retrans_timer, [this, a] { on_timer(a); });
  solicit_(a);
}

void NeighborCache::on_timer(const Ipv6Address& a) {
  auto it = entries_.find(a);
  if (it == entries_.end() || it->second.mac) return;
  Entry& e = it->second;
  e.timer = {};
  if (e.solicits_sent < params_.max_solicit) {
    solicit(a, e);
    return;
  }
  // RFC 4861 7.3.3: resolution failed; the queued frames are lost (their
  // senders learn of it as a transport timeout) and the entry goes away.
  ++stats_.failed;
  stats_.dropped += e.queue.size();
  entries_.erase(it);
}

}  // namespace rdmasim
