// What a socket call costs a program, by the stack that serves it: the
// kernel's (a system call, copies both ways, sleeping until woken) or a
// DPDK-style user-space stack's (a function call, a copy into mbufs on
// send, the payload read in place on receive, spinning to wait: with no
// interrupts there is nothing to wake a sleeper).
#pragma once

#include "core/units.hpp"
#include "nodes/host/cpu/cpu.hpp"
#include "nodes/host/host_config.hpp"

namespace rdmasim {

struct SocketCosts {
  CpuUse use = CpuUse::syscall;  // where the stack's time in the program's context goes
  Time call;                     // per call: the system call, or the call into the stack
  DataRate copy;                 // the copy of a send's bytes, and of a kernel recv's
  bool copy_on_receive = true;   // false: zero-copy, the program reads the mbufs in place
  Time tx_segment;               // per segment a send makes: protocol output and the driver
  bool spin_to_wait = false;     // a program that waits spins (no interrupt wakes it)

  static SocketCosts of(const HostConfig& h) {
    if (h.stack == NetStack::dpdk)
      return {CpuUse::user, h.dpdk.api_call, h.kernel.copy_bandwidth, false, h.dpdk.tx_segment, true};
    return {CpuUse::syscall, h.kernel.syscall, h.kernel.copy_bandwidth, true, h.kernel.transport_tx, false};
  }
};

}  // namespace rdmasim
