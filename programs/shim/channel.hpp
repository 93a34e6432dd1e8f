// The program's end of the attach channel (programs/protocol.hpp): one call
// at a time, through raw system calls (the library interposes read and
// write), and the program's simulated clock, which the replies set and the
// calls answered in place (clock reads, the TSC) advance.
#pragma once

#include <cstddef>
#include <cstdint>

#include "programs/protocol.hpp"

namespace rdmasim::shim {

// Set by the library's constructor from the hello's reply.
struct State {
  int fd = -1;  // the channel; -1: not run by rdmasim (every call passes through)
  attach::HelloReply hello{};
  uint64_t now_ps = 0;    // the program's simulated time
  uint64_t local_ps = 0;  // CPU time of calls answered in place since the last request
  // The ITIMER_REAL timer (alarm, setitimer) on the simulated clock: its deadline (0: disarmed),
  // its period, and how many times it has fired.
  uint64_t alarm_ps = 0, interval_ps = 0, alarms = 0;
};
State& state();

inline bool attached() { return state().fd >= 0; }

// A call answered in place costs `ps` of CPU time and returns the time after it.
inline uint64_t charge(uint64_t ps) {
  State& s = state();
  s.local_ps += ps;
  s.now_ps += ps;
  return s.now_ps;
}

// One request and its reply. `out` gets up to `out_max` bytes of the
// reply's payload (the rest is discarded); `send_fd` >= 0 goes with the
// request (SCM_RIGHTS). A broken channel ends the program (rdmasim is gone).
attach::Reply call(attach::Op op, uint64_t a = 0, uint64_t b = 0, const void* in = nullptr, size_t in_len = 0,
                   void* out = nullptr, size_t out_max = 0, int send_fd = -1);

// Whether a call is under way (the library's own accesses to watched
// memory, memory_watch.hpp, ask rdmasim nothing).
bool in_call();

// Fires the timer if the program's simulated time has reached its deadline:
// re-arms a periodic one (and tells rdmasim), then sends the program
// SIGALRM, which the kernel delivers as the program asked (its handler,
// ignored, or the default: the end of the program). Every intercepted call
// checks on its return.
void check_alarm();

// Whether the SIGALRM that just fired interrupts a blocking call, as the
// kernel's would (signal(7)): it is caught and not blocked, and, for a call
// that SA_RESTART restarts (`restartable`), its handler lacks SA_RESTART.
bool interrupted_by_alarm(bool restartable);

// Tells rdmasim that the program called a verb the model does not implement.
void unsupported(const char* verb);

}  // namespace rdmasim::shim
