// /proc/cpuinfo as a program rdmasim runs reads it: the simulated host's
// cores, each at the TSC's rate ("cpu MHz"), whatever machine rdmasim runs
// on. perftest compares that figure with the rate it measures of rdtsc
// against gettimeofday (both simulated), and the real machine's would make
// its results depend on the machine. Opened through fopen or open; any
// other path passes through.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include "programs/shim/channel.hpp"

#define RDMASIM_EXPORT extern "C" __attribute__((visibility("default")))

using rdmasim::shim::attached;
using rdmasim::shim::state;

namespace {

bool is_cpuinfo(const char* path) { return attached() && path && std::strcmp(path, "/proc/cpuinfo") == 0; }

// A memfd holding the text, read from its start; -1 with errno on failure.
int cpuinfo_fd() {
  const auto& h = state().hello;
  const uint64_t khz = h.tsc_hz / 1000;
  char mhz[32];
  std::snprintf(mhz, sizeof mhz, "%lu.%03lu", static_cast<unsigned long>(khz / 1000),
                static_cast<unsigned long>(khz % 1000));
  std::string text;
  const uint32_t cores = h.cores ? h.cores : 1;
  for (uint32_t c = 0; c < cores; ++c) {
    const std::string n = std::to_string(c);
    text += "processor\t: " + n +
            "\nvendor_id\t: rdmasim\nmodel name\t: rdmasim simulated core\ncpu MHz\t\t: " + mhz +
            "\nphysical id\t: 0\ncore id\t\t: " + n + "\ncpu cores\t: " + std::to_string(cores) +
            "\nflags\t\t: fpu tsc constant_tsc nonstop_tsc rdtscp\n\n";
  }
  const int fd = static_cast<int>(syscall(SYS_memfd_create, "cpuinfo", 1u /* MFD_CLOEXEC */));
  if (fd < 0) return -1;
  for (size_t at = 0; at < text.size();) {
    const ssize_t w = syscall(SYS_write, fd, text.data() + at, text.size() - at);
    if (w <= 0) {
      syscall(SYS_close, fd);
      return -1;
    }
    at += static_cast<size_t>(w);
  }
  syscall(SYS_lseek, fd, 0, SEEK_SET);
  return fd;
}

FILE* open_file(const char* name, const char* path, const char* mode) {
  if (is_cpuinfo(path)) {
    const int fd = cpuinfo_fd();
    return fd < 0 ? nullptr : fdopen(fd, "r");
  }
  using Fopen = FILE* (*)(const char*, const char*);
  const auto real = reinterpret_cast<Fopen>(dlsym(RTLD_NEXT, name));
  return real ? real(path, mode) : nullptr;
}

int open_at(int dir, const char* path, int flags, mode_t mode) {
  if (is_cpuinfo(path)) return cpuinfo_fd();
  return static_cast<int>(syscall(SYS_openat, dir, path, flags, mode));
}

mode_t mode_of(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? static_cast<mode_t>(va_arg(ap, int)) : 0;
}

}  // namespace

RDMASIM_EXPORT FILE* fopen(const char* path, const char* mode) { return open_file("fopen", path, mode); }
RDMASIM_EXPORT FILE* fopen64(const char* path, const char* mode) { return open_file("fopen64", path, mode); }

// open(2)'s mode argument is there only when the flags create a file.
#define RDMASIM_OPEN_AT(dir)           \
  va_list ap;                          \
  va_start(ap, flags);                 \
  const mode_t m = mode_of(flags, ap); \
  va_end(ap);                          \
  return open_at(dir, path, flags, m)

RDMASIM_EXPORT int open(const char* path, int flags, ...) { RDMASIM_OPEN_AT(AT_FDCWD); }
RDMASIM_EXPORT int open64(const char* path, int flags, ...) __attribute__((alias("open")));
RDMASIM_EXPORT int openat(int dir, const char* path, int flags, ...) { RDMASIM_OPEN_AT(dir); }
