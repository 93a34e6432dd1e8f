#include "programs/shim/channel.hpp"

#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "programs/shim/memory_watch.hpp"

namespace rdmasim::shim {

State& state() {
  static State s;
  return s;
}

namespace {

std::mutex& lock() {
  static std::mutex m;
  return m;
}

bool g_in_call = false;

[[noreturn]] void lost() {
  // rdmasim went away (it was killed, or it ended the run): so does the program.
  syscall(SYS_exit_group, 125);
  __builtin_unreachable();
}

void write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const long w = syscall(SYS_write, fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) lost();
    c += w;
    n -= static_cast<size_t>(w);
  }
}

void read_all(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    const long r = syscall(SYS_read, fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) lost();
    c += r;
    n -= static_cast<size_t>(r);
  }
}

attach::Reply call_locked(attach::Op op, uint64_t a, uint64_t b, const void* in, size_t in_len, void* out,
                          size_t out_max, int send_fd) {
  State& s = state();
  std::lock_guard<std::mutex> g(lock());
  attach::Request r{op, static_cast<uint32_t>(in_len), s.local_ps, a, b};
  s.local_ps = 0;
  if (send_fd >= 0) {
    // The header goes with the descriptor; the payload follows.
    attach::FdMessage fm(&r, sizeof r);
    msghdr& m = fm.m;
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &send_fd, sizeof(int));
    long w;
    do w = syscall(SYS_sendmsg, s.fd, &m, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    if (w != static_cast<long>(sizeof r)) lost();
  } else {
    write_all(s.fd, &r, sizeof r);
  }
  // The program's bytes pass through a buffer of the library's: the kernel
  // cannot read or write watched pages (memory_watch.hpp), a copy can.
  char bounce[4096];
  for (size_t at = 0; at < in_len;) {
    const size_t n = std::min(in_len - at, sizeof bounce);
    std::memcpy(bounce, static_cast<const char*>(in) + at, n);
    write_all(s.fd, bounce, n);
    at += n;
  }
  attach::Reply rep{};
  read_all(s.fd, &rep, sizeof rep);
  size_t left = rep.len;
  for (size_t at = 0; left > 0;) {
    const size_t n = std::min(left, sizeof bounce);
    read_all(s.fd, bounce, n);
    if (at < out_max) std::memcpy(static_cast<char*>(out) + at, bounce, std::min(n, out_max - at));
    at += n;
    left -= n;
  }
  s.now_ps = rep.now_ps;
  return rep;
}

}  // namespace

attach::Reply call(attach::Op op, uint64_t a, uint64_t b, const void* in, size_t in_len, void* out,
                   size_t out_max, int send_fd) {
  forget_last_read();
  g_in_call = true;
  const attach::Reply rep = call_locked(op, a, b, in, in_len, out, out_max, send_fd);
  g_in_call = false;
  check_alarm();
  return rep;
}

bool in_call() { return g_in_call; }

void check_alarm() {
  State& s = state();
  static bool firing = false;  // the re-arming's own call does not fire again
  if (firing || !attached() || s.alarm_ps == 0 || s.now_ps < s.alarm_ps) return;
  firing = true;
  if (s.interval_ps == 0) {
    s.alarm_ps = 0;
  } else {
    // Periods that passed unseen coalesce into one signal, as the kernel's do.
    s.alarm_ps += (s.now_ps - s.alarm_ps) / s.interval_ps * s.interval_ps + s.interval_ps;
  }
  ++s.alarms;
  call_locked(attach::Op::set_alarm, s.alarm_ps, 0, nullptr, 0, nullptr, 0, -1);
  firing = false;
  raise(SIGALRM);
}

bool interrupted_by_alarm(bool restartable) {
  struct sigaction sa {};
  sigaction(SIGALRM, nullptr, &sa);
  sigset_t mask;
  sigprocmask(SIG_BLOCK, nullptr, &mask);
  if (sigismember(&mask, SIGALRM) || sa.sa_handler == SIG_IGN || sa.sa_handler == SIG_DFL) return false;
  return !(restartable && (sa.sa_flags & SA_RESTART));
}

void unsupported(const char* verb) {
  if (attached()) call(attach::Op::unsupported, 0, 0, verb, std::strlen(verb));
}

}  // namespace rdmasim::shim
