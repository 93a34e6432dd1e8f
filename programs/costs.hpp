// What a call of a program rdmasim runs costs its host's CPU model
// (docs/programs.md, "What a call costs"). The verbs data path takes the
// host's own settings (host.post_cost, host.poll_cost: the same as the
// workloads pay); the rest are fixed figures of current hardware.
#pragma once

#include "core/units.hpp"
#include "nodes/host/host_config.hpp"
#include "programs/protocol.hpp"

namespace rdmasim {

// A clock read answered in place (clock_gettime through the vDSO, rdtsc): ~20 ns.
inline constexpr Time kClockRead = Time::ns(20);
// A control verb (create or modify a QP, register memory, ...): a uverbs
// ioctl and the device's firmware command, ~5 us on a ConnectX.
inline constexpr Time kControlVerb = Time::us(5);
// A query verb answered from the driver's cache (query_port, query_gid): ~1 us.
inline constexpr Time kQueryVerb = Time::us(1);
// The TSC's rate the programs see (rdtsc, and /proc/cpuinfo's MHz).
inline constexpr uint64_t kTscHz = 2'000'000'000;
// A poll that finds nothing is answered when a completion comes, or after this long of spinning.
inline constexpr Time kPollSpin = Time::us(1000);
// The hop limit of the kernel's IPv4 routes (net.ipv4.ip_default_ttl), which a RoCE v2 address takes.
inline constexpr uint8_t kRouteHopLimit = 64;
// The socket stack of each end of a side-channel message (a TCP send or receive on Linux: ~5 us).
inline constexpr Time kSideChannelStack = Time::us(5);

inline Time call_cost(attach::Op op, const HostConfig& h) {
  using attach::Op;
  switch (op) {
    case Op::hello:
    case Op::unsupported:
      return Time{};
    case Op::post_send:
    case Op::post_recv:
    case Op::post_srq_recv:
      return h.post_cost;
    case Op::poll_cq:
    case Op::req_notify_cq:
    case Op::mem_wait:  // a read of the byte it spins on that found nothing new
      return h.poll_cost;
    case Op::query_device:
    case Op::query_port:
    case Op::query_gid:
    case Op::query_gid_type:
    case Op::query_pkey:
    case Op::query_qp:
    case Op::query_srq:
      return kQueryVerb;
    case Op::get_cq_event:
    case Op::get_async_event:
    case Op::sock_listen:
    case Op::sock_accept:
    case Op::sock_connect:
    case Op::sock_send:
    case Op::sock_recv:
    case Op::sock_close:
    case Op::sock_poll:
    case Op::sleep:
    case Op::set_alarm:
      return h.kernel.syscall;
    default:
      return kControlVerb;
  }
}

}  // namespace rdmasim
