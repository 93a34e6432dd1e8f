// An L3 switch (roce_v2, iwarp): forwards IPv4/IPv6 on the destination
// address it reads from each frame, spreading equal-cost next hops by a hash
// of the 5-tuple (ECMP), decrements TTL / hop limit, rewrites the MACs, and
// marks ECN-capable packets CE when the egress queue is deep (RED-style).
#pragma once

#include <map>
#include <vector>

#include "core/random.hpp"
#include "fabrics/ethernet/wire/ethernet.hpp"
#include "fabrics/ip/route_ranges.hpp"
#include "fabrics/ip/wire/address.hpp"
#include "nodes/node.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

class L3Switch final : public Node {
 public:
  L3Switch(Simulator& sim, std::string name, uint32_t mac_base, const SwitchConfig& cfg, const EcnConfig& ecn,
           uint64_t seed);

  // Routes: the egress ports towards a host address (ECMP set, ascending).
  // A switch keeps each distinct set once (a fat tree's switch has a handful:
  // one up-group shared by every remote host, one port per local one), and
  // its routes as ranges of consecutive addresses with the same set
  // (fabrics/ip/route_ranges.hpp).
  // A set's number, the same for the same ports, for add_route.
  uint32_t ecmp_set(std::vector<uint16_t> ports);
  void add_route(const Ipv4Address& dst, uint32_t set);
  void add_route(const Ipv6Address& dst, uint32_t set);
  // To every address from `first` to `last` (a leaf's hosts).
  void add_route(const Ipv4Address& first, const Ipv4Address& last, uint32_t set);
  void add_route(const Ipv6Address& first, const Ipv6Address& last, uint32_t set);
  // The ECMP set towards an address; null when there is no route.
  const std::vector<uint16_t>* route(const Ipv4Address& dst) const;
  const std::vector<uint16_t>* route(const Ipv6Address& dst) const;
  // Every route is in: gives back the room the tables grew beyond it.
  void routes_done();
  // The MAC of the neighbour on a port (host NIC or the next switch's port).
  void set_neighbor(uint16_t port, const MacAddress& mac);
  MacAddress port_mac(uint16_t port) const;

  void receive(Port& in, Packet p) override;
  // HPCC: each frame that carries the telemetry option gets this switch's
  // sample as it starts to leave an egress port (Li et al. 2019, 3.1: the
  // egress port's queue, bytes sent and rate at dequeue). Call once the
  // ports are wired, before captures attach, so that they see the sample.
  void enable_telemetry();
  // ecn.at dequeue: frames are marked as they start to leave (call as
  // enable_telemetry is called).
  void enable_dequeue_marking();

  struct Stats {
    uint64_t forwarded = 0, no_route = 0, ttl_expired = 0, ecn_marked = 0, not_ip = 0, telemetry_full = 0;
    uint64_t group = 0;  // to a multicast or broadcast MAC: this model routes no multicast
  };
  const Stats& stats() const { return stats_; }
  // RFC 1812 5.2.7.1 (no route: no ICMP unreachable is modelled), 5.3.1
  // (TTL or hop limit at 1: no ICMP time exceeded either).
  std::vector<std::pair<std::string_view, uint64_t>> discards() const override {
    return {{"no_route", stats_.no_route}, {"ttl_expired", stats_.ttl_expired}};
  }
  // Heap bytes of the forwarding state: the ECMP sets and the routes.
  size_t route_bytes() const;

 private:
  void forward(Port& in, uint16_t out, Packet p);
  bool mark(const Port& out, uint8_t cls);
  void set_ce(Port& out, Packet& p);
  void stamp(const Port& port, Packet& p);

  SwitchConfig cfg_;
  EcnConfig ecn_;
  uint32_t mac_base_;
  Rng rng_;
  uint64_t ecmp_salt_;                                     // this switch's own ECMP hash salt
  std::vector<std::vector<uint16_t>> groups_;              // ECMP sets, each once
  std::map<std::vector<uint16_t>, uint32_t> group_index_;  // set -> its index in groups_
  RouteRanges<uint32_t> v4_;                               // address -> group
  RouteRanges<unsigned __int128> v6_;
  std::vector<MacAddress> neighbors_;
  std::vector<Time> last_ready_;  // per egress port: keeps frames in order
  Stats stats_;
};

}  // namespace rdmasim
