// A program that waits by reading memory (ib_write_lat's `while (*poll_buf
// != n);`) makes no call that would tell rdmasim to let simulated time
// pass. The pages that every region the peer may write (registered with
// IBV_ACCESS_REMOTE_WRITE) covers whole are therefore kept inaccessible
// (PROT_NONE; the kernel cannot reach them either: a system call given
// them fails with EFAULT, except the library's own, which copy): an
// access traps (SIGSEGV), the page is opened for that one instruction (the
// trap flag single-steps it) and closed again (SIGTRAP). A write outside a
// call opens its page until the next intercepted call instead: perftest
// fills its buffers after registering them, a byte at a time (rand()), and a
// trap a byte took minutes for a 1 MiB region. A read of such an open page
// goes unseen, so rdmasim, after a while of real time with no call, sends
// the nudge (SIGTRAP, sigqueue'd with kNudge) that closes them again: a
// program spinning on a byte it wrote itself is then seen. An access costs
// nothing and asks rdmasim nothing, except a read of the same address in a
// region as the read before it with no intercepted call between: the
// program is spinning on that byte, and rdmasim answers when a message has
// been placed into the program's memory since (or after the spin a poll is
// allowed), as it answers an empty ibv_poll_cq. (docs/programs.md)
#pragma once

#include <signal.h>
#include <ucontext.h>

#include <cstdint>

namespace rdmasim::shim {

// A region the peer may write: its pages are kept closed from now on.
void watch(uint64_t addr, uint64_t length);
// The region is deregistered: its pages open again (unless another watched region shares them).
void unwatch(uint64_t addr, uint64_t length);
// From the SIGSEGV handler: whether the fault at `addr` was an access to a
// watched page, now handled (the instruction runs again, single-stepped).
bool watched_access(void* addr, ucontext_t* uc);
// An intercepted call was made: the next read is not a spin's.
void forget_last_read();
// At attach: the SIGTRAP handler (single steps, and rdmasim's nudge).
void install_trap_handler();

}  // namespace rdmasim::shim
