// Event engine throughput: K independent chains, each event rescheduling
// itself after a uniformly random delay of 1 to 100 ns, until N events have
// run. K is the number of pending events the heap holds throughout.
//
//   bench_engine --events 50000000 --pending 1000 [--repeat 3]
//
// Runs `repeat` times (default 3; the machine's other tenants move a single
// run by tens of percent) and prints key=value lines, the last one
// `events_per_s=<number>`: the median run's.
#include "core/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string_view>
#include <vector>

#include "core/random.hpp"

using namespace rdmasim;

namespace {

struct Chains {
  Simulator sim;
  Rng rng{1};
  uint64_t scheduled = 0;
  uint64_t target = 0;

  void schedule(uint32_t chain) {
    ++scheduled;
    sim.after(Time::ps(static_cast<int64_t>(rng.between(1'000, 100'000))), [this, chain] { step(chain); });
  }
  void step(uint32_t chain) {
    if (scheduled < target) schedule(chain);
  }
};

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "bench_engine: %s\nusage: bench_engine [--events N] [--pending K] [--repeat R]\n",
               why);
  std::exit(2);
}

uint64_t parse_count(const char* text) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || v == 0) usage("expected a positive whole number");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t events = 10'000'000;
  uint64_t pending = 1'000;
  uint64_t repeat = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (i + 1 >= argc) usage("missing value");
    if (arg == "--events") {
      events = parse_count(argv[++i]);
    } else if (arg == "--pending") {
      pending = parse_count(argv[++i]);
    } else if (arg == "--repeat") {
      repeat = parse_count(argv[++i]);
    } else {
      usage("unknown option");
    }
  }
  if (pending > events) usage("--pending must not exceed --events");

  std::vector<double> rates;
  for (uint64_t run = 0; run < repeat; ++run) {
    auto* c = new Chains;  // on the heap: the Simulator is large-ish and main's frame need not hold it
    c->target = events;
    for (uint32_t k = 0; k < pending; ++k) c->schedule(k);

    const double cpu0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    c->sim.run();
    const auto t1 = std::chrono::steady_clock::now();
    const double secs = std::chrono::duration<double>(t1 - t0).count();
    const double cpu = cpu_seconds() - cpu0;

    if (c->sim.events_run() != events) {
      std::fprintf(stderr, "bench_engine: ran %llu events, expected %llu\n",
                   static_cast<unsigned long long>(c->sim.events_run()),
                   static_cast<unsigned long long>(events));
      return 1;
    }
    // Wall-clock rate; cpu_seconds shows how much of it the process had
    // (the machine may be shared).
    std::printf("run=%llu sim_time_ps=%lld seconds=%.3f cpu_seconds=%.3f events_per_s=%.0f\n",
                static_cast<unsigned long long>(run + 1), static_cast<long long>(c->sim.now().count()), secs,
                cpu, static_cast<double>(events) / secs);
    rates.push_back(static_cast<double>(events) / secs);
    delete c;
  }
  std::sort(rates.begin(), rates.end());
  std::printf("events=%llu\npending=%llu\nruns=%llu\nevents_per_s=%.0f\n",
              static_cast<unsigned long long>(events), static_cast<unsigned long long>(pending),
              static_cast<unsigned long long>(repeat), rates[rates.size() / 2]);
  return 0;
}
