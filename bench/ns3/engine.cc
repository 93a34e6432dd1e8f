// bench/engine.cpp's benchmark written for Debian's ns-3 (libns3-dev): K
// independent chains of events, each event scheduling its successor a
// uniformly random 1 to 100 ns later, until N events have run; K is the
// number of events pending throughout. The delays come from rdmasim's own
// Rng (core/random.hpp, seed 1), so both engines see the same schedule and
// the figure is the scheduler's and the event's cost, not a random
// variable's. The scheduler is ns-3's
// SchedulerType (Map, Heap, Calendar, PriorityQueue, List). Time resolution
// is picoseconds, as rdmasim's. Prints key=value lines, the last
// `events_per_s` (the median of --repeat runs, wall clock).
//
//   g++ -O2 -I. -o ns3_engine bench/ns3/engine.cc $(pkg-config --cflags --libs ns3-core)   # from the source root
//   ./ns3_engine --scheduler=ns3::HeapScheduler --events=10000000 --pending=1000
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/random.hpp"  // rdmasim's generator: the same delays as bench_engine's
#include "ns3/core-module.h"

using namespace ns3;

namespace {

rdmasim::Rng g_rng{1};
uint64_t g_scheduled = 0;
uint64_t g_target = 0;

void step();
void schedule() {
  ++g_scheduled;
  Simulator::Schedule(PicoSeconds(g_rng.between(1'000, 100'000)), &step);
}
void step() {
  if (g_scheduled < g_target) schedule();
}

double one_run(const std::string& scheduler, uint64_t events, uint64_t pending) {
  g_rng = rdmasim::Rng{1};
  g_scheduled = 0;
  g_target = events;
  ObjectFactory factory;
  factory.SetTypeId(scheduler);
  Simulator::SetScheduler(factory);
  for (uint64_t k = 0; k < pending; ++k) schedule();
  const auto t0 = std::chrono::steady_clock::now();
  Simulator::Run();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Simulator::Destroy();
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Time::SetResolution(Time::PS);
  std::string scheduler = "ns3::MapScheduler";
  uint64_t events = 10'000'000, pending = 1'000, repeat = 3;
  CommandLine cmd;
  cmd.AddValue("scheduler", "ns-3 scheduler TypeId", scheduler);
  cmd.AddValue("events", "events to run", events);
  cmd.AddValue("pending", "events pending throughout", pending);
  cmd.AddValue("repeat", "runs (the median is printed last)", repeat);
  cmd.Parse(argc, argv);
  std::vector<double> rates;
  for (uint64_t r = 0; r < repeat; ++r) {
    const double s = one_run(scheduler, events, pending);
    rates.push_back(static_cast<double>(events) / s);
    std::printf("run=%llu wall_s=%.3f events_per_s=%.0f\n", static_cast<unsigned long long>(r), s, rates.back());
  }
  std::sort(rates.begin(), rates.end());
  std::printf("scheduler=%s pending=%llu events=%llu\nevents_per_s=%.0f\n", scheduler.c_str(),
              static_cast<unsigned long long>(pending), static_cast<unsigned long long>(events),
              rates[rates.size() / 2]);
}
