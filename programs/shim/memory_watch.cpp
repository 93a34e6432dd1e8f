#include "programs/shim/memory_watch.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include "programs/shim/channel.hpp"

namespace rdmasim::shim {

namespace {

struct Region {
  uint64_t addr, length;
  uint64_t first, end;  // the pages it covers whole: those closed
};
// Watched, as registered; not on the heap, whose pages may be the watched ones the handler is about.
constexpr int kMaxRegions = 256;
Region g_regions[kMaxRegions];
int g_count = 0;
// The pages opened for the instruction being single-stepped.
constexpr int kMaxOpen = 8;
uint64_t g_open[kMaxOpen];
int g_opened = 0;
// The pages a write outside a call opened, until the next call (or the nudge) closes them.
constexpr int kMaxWritten = 8;
uint64_t g_written[kMaxWritten];
int g_written_count = 0;
// The address of the last read of a region since the last intercepted call (0: none).
uint64_t g_last_read = 0;
constexpr greg_t kTrapFlag = 0x100;  // EFLAGS.TF: a debug trap after the next instruction

uint64_t page_size() {
  static const auto p = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return p;
}
uint64_t page_of(uint64_t a) { return a / page_size() * page_size(); }

void set_pages(const Region& r, int prot) {
  if (r.end > r.first) mprotect(reinterpret_cast<void*>(r.first), r.end - r.first, prot);
}

bool in_region(uint64_t a) {
  return std::any_of(g_regions, g_regions + g_count,
                     [a](const Region& r) { return a >= r.addr && a < r.addr + r.length; });
}

bool on_watched_page(uint64_t page) {
  return std::any_of(g_regions, g_regions + g_count,
                     [page](const Region& r) { return page >= r.first && page < r.end; });
}

void close_written() {
  for (int i = 0; i < g_written_count; ++i)
    if (on_watched_page(g_written[i]))
      mprotect(reinterpret_cast<void*>(g_written[i]), page_size(), PROT_NONE);
  g_written_count = 0;
}

void open_written(uint64_t page) {
  if (g_written_count == kMaxWritten) close_written();
  g_written[g_written_count++] = page;
  mprotect(reinterpret_cast<void*>(page), page_size(), PROT_READ | PROT_WRITE);
}

// After the single-stepped instruction: its pages close again. Or rdmasim's nudge.
void on_trap(int sig, siginfo_t* info, void* ctx) {
  if (info->si_code == SI_QUEUE && info->si_value.sival_int == attach::kNudge) {
    close_written();
    return;
  }
  if (g_opened == 0) {  // not ours: as it would have been without the library
    signal(sig, SIG_DFL);
    return;
  }
  for (int i = 0; i < g_opened; ++i) mprotect(reinterpret_cast<void*>(g_open[i]), page_size(), PROT_NONE);
  g_opened = 0;
  static_cast<ucontext_t*>(ctx)->uc_mcontext.gregs[REG_EFL] &= ~kTrapFlag;
}

}  // namespace

void install_trap_handler() {
  struct sigaction sa {};
  sa.sa_sigaction = on_trap;
  sa.sa_flags =
      SA_SIGINFO | SA_NODEFER | SA_RESTART;  // the nudge does not cut the program's own system calls
  sigaction(SIGTRAP, &sa, nullptr);
}

void watch(uint64_t addr, uint64_t length) {
  if (g_count == kMaxRegions) return;  // beyond: not watched (a program spinning on it is reported as silent)
  // Only the pages the region covers whole: the others hold the program's other data too (a small
  // malloc'd region shares its page with the heap, stdio's buffers...), which the kernel must reach.
  const uint64_t first = page_of(addr + page_size() - 1), end = page_of(addr + length);
  g_regions[g_count] = {addr, length, first, std::max(first, end)};
  set_pages(g_regions[g_count++], PROT_NONE);
}

void unwatch(uint64_t addr, uint64_t length) {
  Region* const end = g_regions + g_count;
  Region* const it =
      std::find_if(g_regions, end, [&](const Region& r) { return r.addr == addr && r.length == length; });
  if (it == end) return;
  const Region gone = *it;
  std::copy(it + 1, end, it);
  --g_count;
  set_pages(gone, PROT_READ | PROT_WRITE);
  for (int i = 0; i < g_count; ++i) set_pages(g_regions[i], PROT_NONE);
}

bool watched_access(void* at, ucontext_t* uc) {
  const auto addr = reinterpret_cast<uint64_t>(at);
  const uint64_t page = page_of(addr);
  if (!on_watched_page(page) || g_opened == kMaxOpen) return false;
  const bool write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;  // the page fault's W/R bit
  if (write && !in_call()) {
    open_written(page);
    return true;
  }
  if (!write && !in_call() && in_region(addr)) {
    // The same byte again with no call between: the program spins on it.
    if (addr == g_last_read) call(attach::Op::mem_wait, addr);
    g_last_read = addr;
  }
  g_open[g_opened++] = page;
  mprotect(reinterpret_cast<void*>(page), page_size(), PROT_READ | PROT_WRITE);
  uc->uc_mcontext.gregs[REG_EFL] |= kTrapFlag;
  return true;
}

void forget_last_read() {
  g_last_read = 0;
  if (g_written_count > 0) close_written();
}

}  // namespace rdmasim::shim
