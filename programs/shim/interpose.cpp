// What the library takes over from the C library in a program rdmasim runs
// (docs/programs.md): the clocks, sleeps, the TSC (rdtsc traps, and the
// handler answers from the simulated clock), getpid (a fixed number, so that
// what a program seeds from it is the same every run), and the stream
// sockets of the out-of-band exchange, which go through rdmasim's side
// channel. Calls on anything else pass straight to the kernel.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "programs/shim/channel.hpp"
#include "programs/shim/memory_watch.hpp"

#define RDMASIM_EXPORT extern "C" __attribute__((visibility("default")))

using rdmasim::attach::Op;
using rdmasim::shim::attached;
using rdmasim::shim::call;
using rdmasim::shim::charge;
using rdmasim::shim::interrupted_by_alarm;
using rdmasim::shim::state;

namespace {

// The simulated clocks: CLOCK_REALTIME starts at kEpoch, the others at kBoot.
constexpr uint64_t kEpochS = 1700000000;
constexpr uint64_t kBootS = 1000;

uint64_t clock_read() {
  const uint64_t t = charge(state().hello.cost_clock_ps);
  rdmasim::shim::check_alarm();  // a program spinning on the clock sees its alarm
  return t;
}

timespec to_timespec(uint64_t ps, uint64_t base_s) {
  const uint64_t ns = ps / 1000;
  return {static_cast<time_t>(base_s + ns / 1000000000), static_cast<long>(ns % 1000000000)};
}

long ret_errno(long r) {
  if (r >= 0) return r;
  errno = static_cast<int>(-r);
  return -1;
}

// A simulated stream socket, by fd.
enum class Sock : uint8_t { none, fresh, listener, connection };
struct SimSocket {
  Sock kind = Sock::none;
  uint16_t port = 0;  // bound
  uint64_t id = 0;    // rdmasim's listener or connection
  bool nonblocking = false;
  uint64_t rcvtimeo_ns = 0, sndtimeo_ns = 0;  // SO_RCVTIMEO, SO_SNDTIMEO (0: none)
  bool connecting = false;                    // a connect the alarm interrupted goes on
};
constexpr int kMaxFd = 4096;
SimSocket g_socks[kMaxFd];

SimSocket* sim_socket(int fd) {
  if (!attached() || fd < 0 || fd >= kMaxFd || g_socks[fd].kind == Sock::none) return nullptr;
  return &g_socks[fd];
}

// IPv4 of a sockaddr (v4, or v4-mapped v6), host order; 0 if neither.
uint32_t ipv4_of(const sockaddr* a, uint16_t* port) {
  if (a->sa_family == AF_INET) {
    const auto* s = reinterpret_cast<const sockaddr_in*>(a);
    *port = ntohs(s->sin_port);
    return ntohl(s->sin_addr.s_addr);
  }
  if (a->sa_family == AF_INET6) {
    const auto* s = reinterpret_cast<const sockaddr_in6*>(a);
    *port = ntohs(s->sin6_port);
    if (IN6_IS_ADDR_V4MAPPED(&s->sin6_addr)) {
      uint32_t v;
      std::memcpy(&v, s->sin6_addr.s6_addr + 12, 4);
      return ntohl(v);
    }
    if (IN6_IS_ADDR_UNSPECIFIED(&s->sin6_addr)) return 0;
    return 0xFFFFFFFF;  // a real IPv6 address: no host has one on the side channel
  }
  return 0xFFFFFFFF;
}

// A socket call that may wait. rdmasim ends the wait when the alarm is due (-EINTR; the reply delivers
// SIGALRM) or the socket's timeout passes; after the handler the call goes on, as Linux restarts it,
// unless the handler lacks SA_RESTART or the socket has a timeout (signal(7)).
long socket_wait(Op op, uint64_t a, uint64_t b, uint64_t timeout_ns, void* out = nullptr,
                 size_t out_max = 0) {
  for (;;) {
    const long r =
        call(op, a, b, timeout_ns ? &timeout_ns : nullptr, timeout_ns ? sizeof timeout_ns : 0, out, out_max)
            .ret;
    if (r != -EINTR || interrupted_by_alarm(timeout_ns == 0)) return r;
  }
}

ssize_t sock_send(SimSocket& s, const void* buf, size_t n) {
  if (s.kind != Sock::connection) return ret_errno(-ENOTCONN);
  return ret_errno(call(Op::sock_send, s.id, 0, buf, n).ret);
}

ssize_t sock_recv(SimSocket& s, void* buf, size_t n, int flags) {
  if (s.kind != Sock::connection) return ret_errno(-ENOTCONN);
  const uint64_t mode = ((flags & MSG_DONTWAIT) || s.nonblocking ? 1u : 0u) | (flags & MSG_WAITALL ? 2u : 0u);
  return ret_errno(socket_wait(Op::sock_recv, s.id, n | mode << 56, s.rcvtimeo_ns, buf, n));
}

// rdtsc and rdtscp trap (PR_TSC_SIGSEGV): answer from the simulated clock.
void on_segv(int sig, siginfo_t* info, void* ctx) {
  auto* uc = static_cast<ucontext_t*>(ctx);
  auto* rip = reinterpret_cast<const unsigned char*>(uc->uc_mcontext.gregs[REG_RIP]);
  int len = 0;
  if (rip[0] == 0x0F && rip[1] == 0x31) len = 2;                    // rdtsc
  if (rip[0] == 0x0F && rip[1] == 0x01 && rip[2] == 0xF9) len = 3;  // rdtscp
  if (len == 0 && attached() && rdmasim::shim::watched_access(info->si_addr, uc)) return;
  if (len == 0 || !attached()) {
    // A real fault: let it kill the program as it would have.
    signal(sig, SIG_DFL);
    return;
  }
  const uint64_t ps = clock_read();
  const unsigned __int128 ticks =
      static_cast<unsigned __int128>(ps) * state().hello.tsc_hz / 1000000000000ull;
  const uint64_t t = static_cast<uint64_t>(ticks);
  uc->uc_mcontext.gregs[REG_RAX] = static_cast<greg_t>(t & 0xFFFFFFFF);
  uc->uc_mcontext.gregs[REG_RDX] = static_cast<greg_t>(t >> 32);
  if (len == 3) uc->uc_mcontext.gregs[REG_RCX] = 0;  // TSC_AUX: CPU 0
  uc->uc_mcontext.gregs[REG_RIP] += len;
}

__attribute__((constructor)) void attach_to_rdmasim() {
  const char* e = std::getenv(rdmasim::attach::kFdEnv);
  if (!e) return;
  state().fd = std::atoi(e);
  rdmasim::attach::HelloReply h{};
  call(Op::hello, rdmasim::attach::kMagic, 0, nullptr, 0, &h, sizeof h);
  state().hello = h;
  struct sigaction sa {};
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigaction(SIGSEGV, &sa, nullptr);
  rdmasim::shim::install_trap_handler();
  // As on a terminal: what a program printed before rdmasim killed it (at `stop`, or silent) is in its .out.
  setvbuf(stdout, nullptr, _IOLBF, 0);
  prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
}

}  // namespace

// ---- clocks and sleeps ----

RDMASIM_EXPORT int clock_gettime(clockid_t clk, timespec* ts) {
  if (!attached()) return static_cast<int>(ret_errno(syscall(SYS_clock_gettime, clk, ts) < 0 ? -errno : 0));
  *ts = to_timespec(clock_read(), clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE ? kEpochS : kBootS);
  return 0;
}

RDMASIM_EXPORT int gettimeofday(timeval* tv, void* tz) {
  if (!attached()) return static_cast<int>(syscall(SYS_gettimeofday, tv, tz));
  const timespec t = to_timespec(clock_read(), kEpochS);
  if (tv) *tv = {t.tv_sec, t.tv_nsec / 1000};
  return 0;
}

RDMASIM_EXPORT time_t time(time_t* out) {
  time_t t;
  if (attached())
    t = to_timespec(clock_read(), kEpochS).tv_sec;
  else
    t = static_cast<time_t>(syscall(SYS_time, nullptr));
  if (out) *out = t;
  return t;
}

RDMASIM_EXPORT int nanosleep(const timespec* req, timespec* rem) {
  if (!attached()) return static_cast<int>(syscall(SYS_nanosleep, req, rem));
  if (!req || req->tv_nsec < 0 || req->tv_nsec >= 1000000000 || req->tv_sec < 0) {
    errno = EINVAL;
    return -1;
  }
  // The sleep ends early when the alarm comes first and its handler runs (EINTR, the rest in `rem`).
  const uint64_t until =
      state().now_ps +
      (static_cast<uint64_t>(req->tv_sec) * 1000000000ull + static_cast<uint64_t>(req->tv_nsec)) * 1000;
  while (state().now_ps < until) {
    const uint64_t fired = state().alarms;
    call(Op::sleep, (until - state().now_ps + 999) / 1000);
    if (state().alarms != fired && state().now_ps < until && interrupted_by_alarm(false)) {
      if (rem) *rem = to_timespec(until - state().now_ps, 0);
      errno = EINTR;
      return -1;
    }
  }
  if (rem) *rem = {0, 0};
  return 0;
}

RDMASIM_EXPORT int clock_nanosleep(clockid_t clk, int flags, const timespec* req, timespec* rem) {
  if (!attached())
    return static_cast<int>(syscall(SYS_clock_nanosleep, clk, flags, req, rem) < 0 ? errno : 0);
  if (flags & TIMER_ABSTIME) {
    const uint64_t base = clk == CLOCK_REALTIME ? kEpochS : kBootS;
    const uint64_t want = (static_cast<uint64_t>(req->tv_sec) - base) * 1000000000ull + req->tv_nsec;
    const uint64_t now = state().now_ps / 1000;
    if (want <= now) return 0;
    const timespec rel{static_cast<time_t>((want - now) / 1000000000),
                       static_cast<long>((want - now) % 1000000000)};
    return nanosleep(&rel, nullptr) == 0 ? 0 : errno;
  }
  return nanosleep(req, rem) == 0 ? 0 : errno;
}

RDMASIM_EXPORT int usleep(useconds_t us) {
  const timespec t{static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
  return nanosleep(&t, nullptr);
}

RDMASIM_EXPORT unsigned sleep(unsigned s) {
  const timespec t{static_cast<time_t>(s), 0};
  timespec rem{};
  if (nanosleep(&t, &rem) == 0) return 0;
  return static_cast<unsigned>(rem.tv_sec + (rem.tv_nsec > 0 ? 1 : 0));
}

// ---- the real-time interval timer (ITIMER_REAL), on the simulated clock ----

RDMASIM_EXPORT int getitimer(int which, itimerval* v) {
  if (!attached() || which != ITIMER_REAL) return static_cast<int>(syscall(SYS_getitimer, which, v));
  const rdmasim::shim::State& s = state();
  const uint64_t left = s.alarm_ps > s.now_ps ? s.alarm_ps - s.now_ps : 0;
  // A running timer never reads 0 (the kernel rounds its remainder up to a microsecond).
  const uint64_t left_us = s.alarm_ps == 0 ? 0 : std::max<uint64_t>((left + 999999) / 1000000, 1);
  const uint64_t period_us = s.interval_ps / 1000000;
  v->it_value = {static_cast<time_t>(left_us / 1000000), static_cast<suseconds_t>(left_us % 1000000)};
  v->it_interval = {static_cast<time_t>(period_us / 1000000), static_cast<suseconds_t>(period_us % 1000000)};
  return 0;
}

RDMASIM_EXPORT int setitimer(int which, const itimerval* v, itimerval* old) {
  if (!attached() || which != ITIMER_REAL) return static_cast<int>(syscall(SYS_setitimer, which, v, old));
  if (!v || v->it_value.tv_usec < 0 || v->it_value.tv_usec >= 1000000 || v->it_interval.tv_usec < 0 ||
      v->it_interval.tv_usec >= 1000000 || v->it_value.tv_sec < 0 || v->it_interval.tv_sec < 0) {
    errno = EINVAL;
    return -1;
  }
  if (old) getitimer(ITIMER_REAL, old);
  auto ps = [](const timeval& t) {
    return (static_cast<uint64_t>(t.tv_sec) * 1000000 + static_cast<uint64_t>(t.tv_usec)) * 1000000;
  };
  rdmasim::shim::State& s = state();
  const uint64_t value = ps(v->it_value);
  s.alarm_ps = value == 0 ? 0 : s.now_ps + value;
  s.interval_ps = value == 0 ? 0 : ps(v->it_interval);
  call(Op::set_alarm, s.alarm_ps);
  return 0;
}

RDMASIM_EXPORT unsigned alarm(unsigned seconds) {
  if (!attached()) return static_cast<unsigned>(syscall(SYS_alarm, seconds));
  const itimerval v{{0, 0}, {static_cast<time_t>(seconds), 0}};
  itimerval old{};
  setitimer(ITIMER_REAL, &v, &old);
  // As glibc's alarm: the old remainder to the nearest second, and a running one is never 0.
  unsigned left = static_cast<unsigned>(old.it_value.tv_sec);
  if ((left == 0 && old.it_value.tv_usec > 0) || old.it_value.tv_usec >= 500000) ++left;
  return left;
}

RDMASIM_EXPORT useconds_t ualarm(useconds_t value, useconds_t interval) {
  const itimerval v{{static_cast<time_t>(interval / 1000000), static_cast<suseconds_t>(interval % 1000000)},
                    {static_cast<time_t>(value / 1000000), static_cast<suseconds_t>(value % 1000000)}};
  itimerval old{};
  if (setitimer(ITIMER_REAL, &v, &old) < 0) return static_cast<useconds_t>(-1);
  return static_cast<useconds_t>(old.it_value.tv_sec * 1000000 + old.it_value.tv_usec);
}

RDMASIM_EXPORT pid_t getpid() {
  if (!attached()) return static_cast<pid_t>(syscall(SYS_getpid));
  return static_cast<pid_t>(state().hello.vpid);
}

// ---- the side channel's stream sockets ----

RDMASIM_EXPORT int socket(int domain, int type, int protocol) {
  const int fd = static_cast<int>(syscall(SYS_socket, domain, type, protocol));
  if (fd < 0 || !attached() || fd >= kMaxFd) return fd;
  if ((domain == AF_INET || domain == AF_INET6) && (type & 0xF) == SOCK_STREAM)
    g_socks[fd] = {Sock::fresh, 0, 0, (type & SOCK_NONBLOCK) != 0};
  return fd;
}

RDMASIM_EXPORT int bind(int fd, const sockaddr* addr, socklen_t len) {
  SimSocket* s = sim_socket(fd);
  if (!s) return static_cast<int>(syscall(SYS_bind, fd, addr, len));
  uint16_t port = 0;
  ipv4_of(addr, &port);
  s->port = port;
  return 0;
}

RDMASIM_EXPORT int listen(int fd, int backlog) {
  SimSocket* s = sim_socket(fd);
  if (!s) return static_cast<int>(syscall(SYS_listen, fd, backlog));
  const long r = call(Op::sock_listen, s->port).ret;
  if (r < 0) return static_cast<int>(ret_errno(r));
  s->kind = Sock::listener;
  s->id = static_cast<uint64_t>(r);
  return 0;
}

RDMASIM_EXPORT int accept4(int fd, sockaddr* addr, socklen_t* len, int flags) {
  SimSocket* s = sim_socket(fd);
  if (!s) return static_cast<int>(syscall(SYS_accept4, fd, addr, len, flags));
  if (s->kind != Sock::listener) return static_cast<int>(ret_errno(-EINVAL));
  uint32_t peer[2] = {};  // IPv4 (host order), port
  const long r = socket_wait(Op::sock_accept, s->id, 0, s->rcvtimeo_ns, peer, sizeof peer);
  if (r < 0) return static_cast<int>(ret_errno(r));
  const int nfd = static_cast<int>(syscall(SYS_socket, AF_INET, SOCK_STREAM | (flags & SOCK_CLOEXEC), 0));
  if (nfd < 0 || nfd >= kMaxFd) return -1;
  g_socks[nfd] = {Sock::connection, s->port, static_cast<uint64_t>(r), (flags & SOCK_NONBLOCK) != 0};
  if (addr && len) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(peer[1]));
    a.sin_addr.s_addr = htonl(peer[0]);
    std::memcpy(addr, &a, *len < sizeof a ? *len : sizeof a);
    *len = sizeof a;
  }
  return nfd;
}

RDMASIM_EXPORT int accept(int fd, sockaddr* addr, socklen_t* len) { return accept4(fd, addr, len, 0); }

RDMASIM_EXPORT int connect(int fd, const sockaddr* addr, socklen_t len) {
  SimSocket* s = sim_socket(fd);
  if (!s) return static_cast<int>(syscall(SYS_connect, fd, addr, len));
  uint16_t port = 0;
  const uint32_t ip = ipv4_of(addr, &port);
  // A second connect after one the alarm interrupted waits for that one's handshake, as on Linux.
  const long r = socket_wait(Op::sock_connect, ip, port | static_cast<uint64_t>(fd) << 16, s->sndtimeo_ns);
  s->connecting = r == -EINTR || r == -EINPROGRESS;
  if (r < 0) return static_cast<int>(ret_errno(r));
  s->kind = Sock::connection;
  s->id = static_cast<uint64_t>(r);
  return 0;
}

RDMASIM_EXPORT int setsockopt(int fd, int level, int name, const void* value, socklen_t len) {
  SimSocket* s = sim_socket(fd);
  if (s && level == SOL_SOCKET && (name == SO_RCVTIMEO || name == SO_SNDTIMEO) && value &&
      len >= sizeof(timeval)) {
    const auto* t = static_cast<const timeval*>(value);
    if (t->tv_usec < 0 || t->tv_usec >= 1000000) return static_cast<int>(ret_errno(-EDOM));
    const uint64_t ns =
        t->tv_sec < 0
            ? 0
            : (static_cast<uint64_t>(t->tv_sec) * 1000000 + static_cast<uint64_t>(t->tv_usec)) * 1000;
    (name == SO_RCVTIMEO ? s->rcvtimeo_ns : s->sndtimeo_ns) = ns;
  }
  return static_cast<int>(syscall(SYS_setsockopt, fd, level, name, value, len));
}

RDMASIM_EXPORT ssize_t write(int fd, const void* buf, size_t n) {
  if (SimSocket* s = sim_socket(fd)) return sock_send(*s, buf, n);
  return syscall(SYS_write, fd, buf, n);
}

RDMASIM_EXPORT ssize_t send(int fd, const void* buf, size_t n, int flags) {
  if (SimSocket* s = sim_socket(fd)) return sock_send(*s, buf, n);
  return syscall(SYS_sendto, fd, buf, n, flags, nullptr, 0);
}

RDMASIM_EXPORT ssize_t sendto(int fd, const void* buf, size_t n, int flags, const sockaddr* a, socklen_t l) {
  if (SimSocket* s = sim_socket(fd)) return sock_send(*s, buf, n);
  return syscall(SYS_sendto, fd, buf, n, flags, a, l);
}

RDMASIM_EXPORT ssize_t read(int fd, void* buf, size_t n) {
  if (SimSocket* s = sim_socket(fd)) return sock_recv(*s, buf, n, 0);
  return syscall(SYS_read, fd, buf, n);
}

RDMASIM_EXPORT ssize_t recv(int fd, void* buf, size_t n, int flags) {
  if (SimSocket* s = sim_socket(fd)) return sock_recv(*s, buf, n, flags);
  return syscall(SYS_recvfrom, fd, buf, n, flags, nullptr, nullptr);
}

RDMASIM_EXPORT ssize_t recvfrom(int fd, void* buf, size_t n, int flags, sockaddr* a, socklen_t* l) {
  if (SimSocket* s = sim_socket(fd)) return sock_recv(*s, buf, n, flags);
  return syscall(SYS_recvfrom, fd, buf, n, flags, a, l);
}

RDMASIM_EXPORT int shutdown(int fd, int how) {
  if (sim_socket(fd)) return 0;
  return static_cast<int>(syscall(SYS_shutdown, fd, how));
}

RDMASIM_EXPORT int close(int fd) {
  if (fd == state().fd && attached()) {
    errno = EBADF;  // the channel is the library's, not the program's
    return -1;
  }
  if (SimSocket* s = sim_socket(fd)) {
    if (s->kind == Sock::listener || s->kind == Sock::connection)
      call(Op::sock_close, s->id, s->kind == Sock::listener ? 1 : 0);
    else if (s->connecting)
      call(Op::sock_close, static_cast<uint64_t>(fd), 2);  // the connect that goes on
    *s = {};
  }
  return static_cast<int>(syscall(SYS_close, fd));
}
