// A host's CPU: cores that each run one thing at a time, so that time a
// core spends on one thing is time something else waits for it.
//
// What runs on a core, in the order a free core picks it (docs/host.md):
//   1. hard IRQs (an interrupt handler preempts whatever runs, and runs to
//      its end; IRQs queue behind one another in arrival order);
//   1b. the core's softirq context (deferred interrupt work raised by a
//      handler, Linux's do_softirq on IRQ exit): it runs before any process,
//      IRQs preempt it;
//   2. a burst preempted by an IRQ resumes where it stopped, unless it is a
//      compute process's and an I/O process has become ready meanwhile;
//   3. ready I/O processes (the programs that post and wait for work), in
//      the order they became ready; one runs until it waits, none preempts
//      another, except that `fair` ones (kernel-socket programs and
//      ksoftirqd) share by CPU time as CFS does: at the end of a burst one
//      gives way to a ready fair process that has had less by more than
//      CFS's wakeup granularity (1ms); one that wakes gets CFS's sleeper
//      credit (3ms behind the least runtime of the others);
//   4. polling: while an I/O process spins on a completion queue the core
//      does nothing else (poll time), but a ready I/O process runs;
//   5. compute processes, round robin, a chunk at a time; an I/O process
//      that becomes ready preempts a chunk (wake-up preemption), which
//      resumes afterwards;
//   6. idle.
// A process is pinned to the core with the fewest processes when it is
// created (ties: the lowest number). Giving the core to a process whose
// context is not loaded (it slept, or another process ran) costs a context
// switch first, charged as kernel time (`syscall`). Everything is driven by
// one engine event per burst; idle and polling cost no events.
#pragma once

#include <array>
#include <coroutine>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "core/ring.hpp"
#include "core/units.hpp"

namespace rdmasim {

// What a core spends its time on: the results' per-core categories.
enum class CpuUse : uint8_t { user, syscall, softirq, irq, poll, idle };
inline constexpr size_t kCpuUses = 6;
// Their names in results.json (`<name>_ps`) and in traces.
const char* cpu_use_name(CpuUse u);

using CpuTimes = std::array<Time, kCpuUses>;

// A program on a host. Created by Cpu::spawn, which pins it to a core.
class Process {
 public:
  enum class Kind { io, compute, softirq };
  const std::string& name() const { return name_; }
  Kind kind() const { return kind_; }
  int core() const { return core_; }
  // CPU time it has had (CFS's vruntime for a fair process).
  Time runtime() const { return runtime_; }

 private:
  friend class Cpu;
  enum class State { off, ready, running, holding, spinning, waiting_irq };
  Process(std::string name, Kind kind, int core) : name_(std::move(name)), kind_(kind), core_(core) {}

  std::string name_;
  Kind kind_;
  int core_;
  State state_ = State::off;
  CpuUse use_ = CpuUse::user;  // the burst asked for
  Time left_;                  // ... and how much of it is still to run
  Time switch_left_;           // context switch still to run before it
  std::coroutine_handle<> waiter_;
  uint64_t requests_ = 0;  // CPU requests made (a burst's end sees whether its process asked for more)
  bool fair_ = false;      // shares its core with other fair processes by CPU time
  Time runtime_;           // CPU time had (vruntime)
};

// What a hard IRQ handler does when it ends (the NIC driver's receive path).
class IrqSink {
 public:
  virtual void irq_handled() = 0;

 protected:
  ~IrqSink() = default;
};

// One segment of a core's time, for a CPU trace.
struct CpuSegment {
  int core;
  CpuUse use;
  // Whose context: null for IRQs, softirqs and idle, and for polling while
  // no process's is loaded (the last to run left the core; others spin).
  const Process* process;
  Time start, end;
};

class Cpu {
 public:
  Cpu(Simulator& sim, int cores, Time context_switch);
  ~Cpu();
  Cpu(const Cpu&) = delete;
  Cpu& operator=(const Cpu&) = delete;

  int cores() const { return static_cast<int>(cores_.size()); }
  // `core` >= 0 pins it there (a per-CPU kernel thread) without counting
  // it in the balance by which programs are placed.
  Process& spawn(std::string name, Process::Kind kind, bool fair = false, int core = -1);
  // Takes core `c` out of the balance (isolcpus): processes spawned
  // without a core go elsewhere; for a DPDK poll-mode core. Not all of them.
  void isolate(int c);
  // The softirq context of core `c`: co_await run(softirq_context(c),
  // CpuUse::softirq, t) runs `t` of deferred interrupt work ahead of every
  // process on that core, in no process's context (no context switch).
  Process& softirq_context(int c);

  // co_await cpu.run(p, use, t): `p` needs `t` of CPU time on its core in
  // category `use`; resumes when it has had it. If `p` holds its core (its
  // last burst just ended) it goes on at once; else it waits its turn.
  struct RunAwaiter {
    Cpu& cpu;
    Process& p;
    CpuUse use;
    Time t;
    bool await_ready() const { return false; }
    void await_suspend(std::coroutine_handle<> h) { cpu.request(p, use, t, h); }
    void await_resume() const {}
  };
  RunAwaiter run(Process& p, CpuUse use, Time t) { return {*this, p, use, t}; }

  // `p`, holding its core, spins polling for something (a CQE): the core
  // polls until stop_spin(p); a ready I/O process still runs meanwhile.
  void spin(Process& p);
  // `p` stops spinning without running: it goes to sleep (hybrid polling).
  void stop_spin(Process& p);

  // co_await cpu.interrupt(p, cost, use, t): a hard IRQ on `p`'s core whose
  // handler takes `cost` and wakes `p`, which then runs `t` in `use`.
  struct IrqAwaiter {
    Cpu& cpu;
    Process& p;
    Time cost;
    CpuUse use;
    Time t;
    bool await_ready() const { return false; }
    void await_suspend(std::coroutine_handle<> h) { cpu.raise_irq(p, cost, use, t, h); }
    void await_resume() const {}
  };
  IrqAwaiter interrupt(Process& p, Time cost, CpuUse use, Time t) { return {*this, p, cost, use, t}; }
  // A hard IRQ on core `c` whose handler takes `cost`; `sink.irq_handled()`
  // runs when it ends, before anything else runs on the core.
  void irq(int c, Time cost, IrqSink& sink);

  // Time per category of core `c` from 0 to now(); they add up to now().
  CpuTimes times(int c) const;
  // Every category but idle, over all cores.
  Time busy() const;
  uint64_t context_switches() const { return context_switches_; }

  // Records the segments of core time that overlap [from, to) into `out`,
  // from now on (null: stop). Back-to-back segments of the same kind merge.
  void trace_into(std::vector<CpuSegment>* out, Time from = Time{}, Time to = Time::max()) {
    trace_ = out;
    trace_from_ = from;
    trace_to_ = to;
  }
  // Records the segments still open at now() and stops tracing.
  void end_trace();

 private:
  struct Irq {
    Time cost;
    Process* wake;
    IrqSink* sink;
  };
  struct Core {
    int index = 0;
    Process* running = nullptr;  // the process whose burst runs, is held or was preempted by an IRQ
    Process* paused = nullptr;   // a compute burst an I/O process preempted (it resumes first)
    Process* owner = nullptr;    // whose context is loaded
    bool in_irq = false;
    Process* softirq = nullptr;  // the softirq context, once asked for
    bool in_softirq = false;     // it runs, is held, or an IRQ preempted it
    Irq irq{};
    EventId done;  // end of the running burst or IRQ
    Time started;  // when it (or its current phase) started
    Ring<Irq> irqs;
    Ring<Process*> ready;    // I/O processes
    Ring<Process*> compute;  // compute processes
    uint32_t spinners = 0;
    uint32_t processes = 0;
    bool isolated = false;       // no process is placed here unless pinned
    std::vector<Process*> fair;  // its fair processes
    // Accounting: the open segment and the closed totals.
    CpuUse use = CpuUse::idle;
    const Process* seg_process = nullptr;
    Time seg_start;
    CpuTimes time{};
  };

  void request(Process& p, CpuUse use, Time t, std::coroutine_handle<> h);
  void raise_irq(Process& p, Time cost, CpuUse use, Time t, std::coroutine_handle<> h);
  void make_ready(Process& p);
  void request_softirq(Core& c, Process& s);
  void run_softirq(Core& c);
  void softirq_done(Core& c);
  // A fair process that just ran gives way to a ready one that had less.
  bool should_yield(const Core& c, const Process& p) const;
  // A fair process waking from sleep starts at the least runtime of the
  // others runnable on its core (CFS's min_vruntime), not behind it.
  void place(Core& c, Process& p);
  // Core `c` has nothing running: picks what runs next (the order above).
  void dispatch(Core& c);
  void start(Core& c, Process& p);
  void run_phase(Core& c);
  void phase_done(Core& c);
  void start_irq(Core& c);
  void irq_done(Core& c);
  // Stops the running burst (an IRQ or an I/O process takes the core).
  void preempt(Core& c);
  bool busy_now(const Core& c) const { return c.in_irq || c.in_softirq || (c.running && c.done); }
  // Closes the open accounting segment and opens one of `use`.
  void account(Core& c, CpuUse use, const Process* p);
  void record(const Core& c, Time now);

  Simulator& sim_;
  Time context_switch_;
  std::vector<std::unique_ptr<Core>> cores_;
  std::vector<std::unique_ptr<Process>> processes_;
  std::vector<CpuSegment>* trace_ = nullptr;
  Time trace_from_, trace_to_;
  uint64_t context_switches_ = 0;
};

}  // namespace rdmasim
