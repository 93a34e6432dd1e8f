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
  if (w.computed_payload) {  // payload: pattern stores nothing but a sender's copy into its stream
    landing = 0;
    if (!fabric_of(x).memory_costs().sender_copies_payload) slots = 0;
  }
  const uint64_t all = sat_mul(pairs, sat_mul(size, slots + landing));
  if (!x.stop || *x.stop <= w.start) return x.stop ? 0 : all;
  const long double sendable =
      static_cast<long double>(fastest_host_link(x).bps()) / 8 * (*x.stop - w.start).to_s();
  const long double by_stop =
      2 * static_cast<long double>(senders) * (sendable + static_cast<long double>(size));
  return by_stop < static_cast<long double>(all) ? static_cast<uint64_t>(by_stop) : all;
}

}  // namespace rdmasim
