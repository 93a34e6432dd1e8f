// A host's neighbour cache (RFC 4861 7.3): which MAC answers for an IPv6
// address on the link. Reduced to what a host needs before the first frame
// of a connection:
//  - an unknown address becomes INCOMPLETE and a solicitation goes out, again
//    every RETRANS_TIMER, MAX_MULTICAST_SOLICIT times (RFC 4861 7.2.2, 10);
//  - frames for an INCOMPLETE entry wait in a bounded queue (as Linux's
//    unres_qlen_bytes) and leave, in order, once the answer arrives;
//  - after the last unanswered solicitation the entry fails and its frames
//    are dropped (RFC 4861 7.3.3), so the next frame starts over.
// Entries never expire here: runs last milliseconds, REACHABLE_TIME is 30 s.
// The cache does not build frames; its owner sends solicitations when asked.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "core/engine.hpp"
#include "core/packet.hpp"
#include "fabrics/ethernet/wire/ethernet.hpp"
#include "fabrics/ip/wire/address.hpp"

namespace rdmasim {

class NeighborCache {
 public:
  struct Params {
    Time retrans_timer = Time::s(1);  // RFC 4861 10: RETRANS_TIMER
    int max_solicit = 3;              // RFC 4861 10: MAX_MULTICAST_SOLICIT
    uint64_t hold_bytes = 212992;     // per neighbour; Linux's default unres_qlen_bytes
  };
  // Asked to send one solicitation for the address.
  using Solicit = std::function<void(const Ipv6Address&)>;

  NeighborCache(Simulator& sim, Params params, Solicit solicit);
  NeighborCache(const NeighborCache&) = delete;
  NeighborCache& operator=(const NeighborCache&) = delete;
  ~NeighborCache();

  // The MAC of a resolved neighbour.
  std::optional<MacAddress> lookup(const Ipv6Address& a) const;
  // Starts resolving `a` unless it is resolved or being resolved.
  void resolve(const Ipv6Address& a);
  // Keeps `p` until `a` resolves (and starts resolving it). False when the
  // queue is full: the frame is dropped.
  bool hold(const Ipv6Address& a, Packet p);
  // `a` is at `mac` (an advertisement, or the source link-layer option of a
  // solicitation, RFC 4861 7.2.3 and 7.2.5). Returns the frames held for it,
  // oldest first; the caller addresses and sends them.
  std::deque<Packet> learn(const Ipv6Address& a, const MacAddress& mac);

  struct Stats {
    uint64_t solicitations = 0;  // asked of the owner, retransmissions included
    uint64_t resolved = 0;
    uint64_t held = 0;     // frames that waited for an answer
    uint64_t dropped = 0;  // frames dropped: queue full or resolution failed
    uint64_t failed = 0;   // resolutions given up
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Entry {
    std::optional<MacAddress> mac;  // set: REACHABLE; unset: INCOMPLETE
    int solicits_sent = 0;
    EventId timer;
    std::deque<Packet> queue;
    uint64_t queued_bytes = 0;
  };
  void solicit(const Ipv6Address& a, Entry& e);
  void on_timer(const Ipv6Address& a);

  Simulator& sim_;
  Params params_;
  Solicit solicit_;
  std::map<Ipv6Address, Entry> entries_;
  Stats stats_;
};

}  // namespace rdmasim
