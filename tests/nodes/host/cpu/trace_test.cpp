#include "nodes/host/cpu/trace.hpp"

#include <doctest/doctest.h>

#include <algorithm>

#include "core/task.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

// Polls 50ns, spins until `until`, polls once more.
Task spinner(Cpu& cpu, Process& p, Trigger& until) {
  co_await cpu.run(p, CpuUse::user, 50_ns);
  cpu.spin(p);
  co_await until;
  co_await cpu.run(p, CpuUse::user, 50_ns);
}

Task burst(Cpu& cpu, Process& p, Time t) { co_await cpu.run(p, CpuUse::user, t); }

}  // namespace

// `kind: flows` runs a program a flow, many on a core: when one that ran
// leaves the core while others spin, the core polls with no process's
// context loaded. The SVG looked that segment's process up and threw
// ("internal error: map::at" at the end of a flows run with cpu_trace).
TEST_CASE("cpu trace: polling in no process's context") {
  Simulator sim;
  Cpu cpu(sim, 1, 1_us);
  std::vector<CpuSegment> trace;
  cpu.trace_into(&trace);
  Process& spinning = cpu.spawn("spinning", Process::Kind::io);
  Process& leaving = cpu.spawn("leaving", Process::Kind::io);
  Trigger cqe(sim);
  spinner(cpu, spinning, cqe);
  burst(cpu, leaving, 1_us);
  sim.at(20_us, [&] { cqe.notify(); });
  sim.run();
  cpu.end_trace();
  // spinning: switch, 50ns, spins; leaving: switch, 1us, ends; the core
  // polls for nobody until the CQE at 20us; spinning switches back in.
  const auto nobody = std::find_if(trace.begin(), trace.end(), [](const CpuSegment& s) {
    return s.use == CpuUse::poll && s.process == nullptr;
  });
  REQUIRE(nobody != trace.end());
  CHECK(nobody->start == 1_us + 50_ns + 1_us + 1_us);
  CHECK(nobody->end == 20_us);
  const std::string svg = cpu_trace_svg("h", 1, trace, Time{}, sim.now());
  CHECK(svg.find("polling, no process's context loaded") != std::string::npos);
  CHECK(svg.find("spinning (pale: polling, p)") != std::string::npos);
  CHECK(cpu_trace_json("h", 1, trace).find("\"name\": \"poll\", \"cat\": \"poll\"") != std::string::npos);
}

// A flows run's hosts have hundreds of programs: the legend names twelve.
TEST_CASE("cpu trace: the legend names the first twelve processes") {
  Simulator sim;
  Cpu cpu(sim, 1, 1_us);
  std::vector<CpuSegment> trace;
  cpu.trace_into(&trace);
  for (int i = 0; i < 20; ++i) burst(cpu, cpu.spawn("p" + std::to_string(i), Process::Kind::io), 1_us);
  sim.run();
  cpu.end_trace();
  const std::string svg = cpu_trace_svg("h", 1, trace, Time{}, sim.now());
  CHECK(svg.find(">p11 (pale") != std::string::npos);
  CHECK(svg.find(">p12 (pale") == std::string::npos);
  CHECK(svg.find("... and 8 more processes") != std::string::npos);
}
