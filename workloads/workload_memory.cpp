#include "workloads/workload_memory.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "fabrics/registry.hpp"

namespace rdmasim {

DataRate fastest_host_link(const ExperimentConfig& x) {
  DataRate r;
  const std::unordered_set<std::string_view> hosts(x.topology.hosts.begin(), x.topology.hosts.end());
  for (const LinkSpec& l : x.topology.links)
    if (hosts.contains(l.a) || hosts.contains(l.b)) r = std::max(r, l.config.bandwidth);
  return r;
}

uint64_t message_buffer_bytes(const ExperimentConfig& x, const WorkloadConfig& w, uint64_t pairs) {
  const uint64_t senders = w.from.size();
  const uint64_t size = is_atomic(*from_string<WorkloadKind>(w.op)) ? 8 : w.size.count();
  const uint64_t outstanding = std::max<uint32_t>(w.outstanding, 1);
  uint64_t slots = std::max<uint64_t>(1, std::min(w.count, outstanding));
  const uint64_t recvs = std::clamp<uint64_t>(std::min(w.count, 2 * outstanding + 16), 1, kMaxRecvDepth);
  uint64_t landing = slots;
  if (w.kind == WorkloadKind::pingpong)
    landing = 2 * recvs;
  else if (w.op == "send" || w.op == "send_imm")
    landing = w.post_recvs ? recvs : 0;
  if (w.computed_payload)
    landing = slots = 0;  // payload: pattern stores nothing (a stream's copy: the estimate)
  // A sender writes a slot whole as it posts its message, and posts a
  // window of them at once: its slots are touched however soon `stop` comes
  // (counting them as what it could send by then gave 140 MiB for a run
  // that took 2 GiB). Where they land, `stop` bounds it.
  const uint64_t at_senders = sat_mul(pairs, sat_mul(size, slots));
  const uint64_t landed = sat_mul(pairs, sat_mul(size, landing));
  if (!x.stop) return sat_add(at_senders, landed);
  if (*x.stop <= w.start) return 0;
  const long double sendable =
      static_cast<long double>(fastest_host_link(x).bps()) / 8 * (*x.stop - w.start).to_s();
  const long double by_stop = static_cast<long double>(senders) * (sendable + static_cast<long double>(size));
  return sat_add(at_senders,
                 by_stop < static_cast<long double>(landed) ? static_cast<uint64_t>(by_stop) : landed);
}

uint64_t stream_buffer_bytes(const ExperimentConfig& x, uint64_t posted) {
  const Fabric& f = fabric_of(x);
  const uint64_t doubled = sat_mul(posted, 2);
  if (f.host_nic().verbs) return std::min(doubled, f.memory_costs().stream_buffer_limit);
  const uint64_t snd = x.host.kernel.sndbuf, rcv = x.host.kernel.rcvbuf;
  // The receive queue is a ring that doubles as it fills (StreamSocket):
  // up to twice the window it holds.
  return sat_add(sat_add(std::min(doubled, snd), std::min(doubled, sat_mul(rcv, 2))),
                 std::min(posted, sat_mul(rcv, 2)));
}

}  // namespace rdmasim
