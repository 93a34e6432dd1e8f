#include "nodes/host/cpu/cpu.hpp"

#include <algorithm>
#include <stdexcept>

namespace rdmasim {

const char* cpu_use_name(CpuUse u) {
  static constexpr const char* kNames[kCpuUses] = {"user", "syscall", "softirq", "irq", "poll", "idle"};
  return kNames[static_cast<size_t>(u)];
}

Cpu::Cpu(Simulator& sim, int cores, Time context_switch) : sim_(sim), context_switch_(context_switch) {
  if (cores < 1) throw std::invalid_argument("a CPU has at least one core");
  for (int i = 0; i < cores; ++i) {
    cores_.push_back(std::make_unique<Core>());
    cores_.back()->index = i;
  }
}

Cpu::~Cpu() {
  for (auto& c : cores_) sim_.cancel(c->done);
  // Programs still waiting for a core can never run now: drop them (and the
  // coroutines awaiting them), as core/task.hpp's lifetime rule says.
  for (auto& p : processes_)
    if (p->waiter_) std::exchange(p->waiter_, nullptr).destroy();
}

Process& Cpu::spawn(std::string name, Process::Kind kind, bool fair, int core) {
  if (kind == Process::Kind::softirq)
    throw std::logic_error("a softirq context comes from softirq_context()");
  Core* least = nullptr;
  if (core >= 0) {
    least = cores_.at(static_cast<size_t>(core)).get();
  } else {
    for (auto& c : cores_)
      if (!c->isolated && (!least || c->processes < least->processes)) least = c.get();
    ++least->processes;
  }
  processes_.push_back(std::unique_ptr<Process>(new Process(std::move(name), kind, least->index)));
  Process& p = *processes_.back();
  p.fair_ = fair;
  if (fair) least->fair.push_back(&p);
  return p;
}

void Cpu::isolate(int c) {
  Core& core = *cores_.at(static_cast<size_t>(c));
  if (!core.isolated &&
      std::count_if(cores_.begin(), cores_.end(), [](const auto& k) { return !k->isolated; }) == 1)
    throw std::logic_error("at least one core must stay for the programs");
  core.isolated = true;
}

Process& Cpu::softirq_context(int i) {
  Core& c = *cores_.at(static_cast<size_t>(i));
  if (!c.softirq) {
    processes_.push_back(std::unique_ptr<Process>(
        new Process("softirq/" + std::to_string(i), Process::Kind::softirq, c.index)));
    c.softirq = processes_.back().get();
  }
  return *c.softirq;
}

// ------------------------------------------------------------ requests

void Cpu::request(Process& p, CpuUse use, Time t, std::coroutine_handle<> h) {
  Core& c = *cores_[p.core_];
  ++p.requests_;
  p.use_ = use;
  p.left_ = t;
  p.waiter_ = h;
  if (p.kind_ == Process::Kind::softirq) {
    request_softirq(c, p);
    return;
  }
  if (p.state_ == Process::State::holding) {
    // Its last burst just ended: an I/O process goes on (a fair one unless
    // a fair process that had less waits); a compute process goes on too
    // unless others wait for the core (round robin per chunk).
    const bool goes_on = p.kind_ == Process::Kind::io ? !should_yield(c, p)
                                                      : c.ready.empty() && c.compute.empty() && !c.paused;
    if (goes_on) {
      p.state_ = Process::State::running;
      if (!busy_now(c)) run_phase(c);  // else it resumes when the IRQ or softirq ends (dispatch)
      return;
    }
    p.state_ = Process::State::off;
    c.running = nullptr;
  }
  if (p.state_ == Process::State::spinning) {
    --c.spinners;  // what it polled for came
  }
  make_ready(p);
  if (!busy_now(c) && !c.running) dispatch(c);
}

void Cpu::spin(Process& p) {
  Core& c = *cores_[p.core_];
  if (p.state_ != Process::State::holding) throw std::logic_error("a process spins only on a core it holds");
  ++p.requests_;
  p.state_ = Process::State::spinning;
  ++c.spinners;
  c.running = nullptr;
  dispatch(c);
}

void Cpu::stop_spin(Process& p) {
  Core& c = *cores_[p.core_];
  if (p.state_ != Process::State::spinning) return;
  p.state_ = Process::State::off;
  --c.spinners;
  if (c.owner == &p) c.owner = nullptr;  // it sleeps: waking costs a switch back
  if (!busy_now(c) && !c.running) dispatch(c);
}

void Cpu::raise_irq(Process& p, Time cost, CpuUse use, Time t, std::coroutine_handle<> h) {
  Core& c = *cores_[p.core_];
  ++p.requests_;
  if (p.state_ == Process::State::spinning) --c.spinners;
  p.state_ = Process::State::waiting_irq;
  p.use_ = use;
  p.left_ = t;
  p.waiter_ = h;
  c.irqs.push_back({cost, &p, nullptr});
  if (c.in_irq) return;  // it runs after the handlers before it
  preempt(c);
  start_irq(c);
}

void Cpu::irq(int i, Time cost, IrqSink& sink) {
  Core& c = *cores_.at(static_cast<size_t>(i));
  c.irqs.push_back({cost, nullptr, &sink});
  if (c.in_irq) return;
  preempt(c);
  start_irq(c);
}

void Cpu::request_softirq(Core& c, Process& s) {
  if (s.state_ == Process::State::holding && !c.in_irq) {
    s.state_ = Process::State::running;
    run_softirq(c);
    return;
  }
  s.state_ = Process::State::ready;
  if (c.in_irq || c.in_softirq) return;  // it runs when the handler ends (dispatch)
  preempt(c);
  dispatch(c);
}

// CFS's constants on one CPU (kernel/sched/fair.c): a task is preempted
// in favour of one that has run less by more than the wakeup granularity;
// a task that wakes starts half a scheduling latency behind the least
// runtime of the others (GENTLE_FAIR_SLEEPERS), so a program that sleeps
// between messages runs as soon as the one on the core reaches a point
// where it can be preempted (the end of its burst: a kernel thread's poll).
namespace {
constexpr Time kWakeupGranularity = Time::ms(1);  // sysctl_sched_wakeup_granularity
constexpr Time kSleeperCredit = Time::ms(3);      // sysctl_sched_latency / 2
}  // namespace

bool Cpu::should_yield(const Core& c, const Process& p) const {
  if (!p.fair_) return false;
  for (const Process* q : c.fair)
    if (q != &p && q->state_ == Process::State::ready && q->runtime_ + kWakeupGranularity < p.runtime_)
      return true;
  return false;
}

void Cpu::place(Core& c, Process& p) {
  Time least = Time::max();
  for (const Process* q : c.fair)
    if (q != &p && q->state_ != Process::State::off && q->state_ != Process::State::waiting_irq)
      least = std::min(least, q->runtime_);
  if (least == Time::max()) return;
  const Time start = least > kSleeperCredit ? least - kSleeperCredit : Time{};
  if (start > p.runtime_) p.runtime_ = start;
}

void Cpu::make_ready(Process& p) {
  Core& c = *cores_[p.core_];
  if (p.fair_ && (p.state_ == Process::State::off || p.state_ == Process::State::waiting_irq)) place(c, p);
  p.state_ = Process::State::ready;
  if (p.kind_ == Process::Kind::compute) {
    c.compute.push_back(&p);
    return;
  }
  c.ready.push_back(&p);
  // Wake-up preemption: an I/O process takes the core from a compute burst.
  if (!c.in_irq && !c.in_softirq && c.running && c.running->kind_ == Process::Kind::compute &&
      c.running->state_ == Process::State::running) {
    preempt(c);
    c.paused = std::exchange(c.running, nullptr);
    c.paused->state_ = Process::State::ready;
    dispatch(c);
  }
}

// ------------------------------------------------------------ scheduling

void Cpu::dispatch(Core& c) {
  if (c.in_irq || c.done) return;  // something runs already
  if (!c.irqs.empty()) {
    start_irq(c);
    return;
  }
  if (c.softirq) {
    switch (c.softirq->state_) {
      case Process::State::ready:
        c.softirq->state_ = Process::State::running;
        [[fallthrough]];
      case Process::State::running:  // raised, or an IRQ preempted it
        run_softirq(c);
        return;
      case Process::State::holding:
        return;  // deciding what it does next
      default:
        break;
    }
  }
  if (c.running) {
    if (c.running->state_ == Process::State::running) {
      if (c.running->kind_ == Process::Kind::io || c.ready.empty()) {
        run_phase(c);  // a burst an IRQ preempted goes on
        return;
      }
      c.paused = std::exchange(c.running, nullptr);
      c.paused->state_ = Process::State::ready;
    } else {
      return;  // held: its process is deciding what it does next
    }
  }
  if (!c.ready.empty()) {
    start(c, *c.ready.take_front());
    return;
  }
  if (c.spinners > 0) {
    account(c, CpuUse::poll, c.owner);
    return;
  }
  if (c.paused) {
    start(c, *std::exchange(c.paused, nullptr));
    return;
  }
  if (!c.compute.empty()) {
    start(c, *c.compute.take_front());
    return;
  }
  account(c, CpuUse::idle, nullptr);
}

void Cpu::start(Core& c, Process& p) {
  c.running = &p;
  p.state_ = Process::State::running;
  if (c.owner != &p) {
    p.switch_left_ = context_switch_;
    c.owner = &p;
    ++context_switches_;
  }
  run_phase(c);
}

// A burst runs in up to two phases: the context switch to it, then its work.
void Cpu::run_phase(Core& c) {
  Process& p = *c.running;
  const bool switching = p.switch_left_ > Time{};
  const Time len = switching ? p.switch_left_ : p.left_;
  account(c, switching ? CpuUse::syscall : p.use_, &p);
  c.started = sim_.now();
  c.done = sim_.after(len, [this, &c] { phase_done(c); });
}

void Cpu::run_softirq(Core& c) {
  c.in_softirq = true;
  account(c, CpuUse::softirq, nullptr);
  c.started = sim_.now();
  c.done = sim_.after(c.softirq->left_, [this, &c] { softirq_done(c); });
}

void Cpu::softirq_done(Core& c) {
  c.done = {};
  Process& s = *c.softirq;
  s.runtime_ += sim_.now() - c.started;
  s.left_ = Time{};
  s.state_ = Process::State::holding;
  const uint64_t asked = s.requests_;
  std::exchange(s.waiter_, nullptr).resume();
  if (s.requests_ == asked && s.state_ == Process::State::holding) s.state_ = Process::State::off;
  if (s.state_ != Process::State::running) {
    c.in_softirq = false;
    dispatch(c);
  }
}

void Cpu::phase_done(Core& c) {
  c.done = {};
  Process& p = *c.running;
  p.runtime_ += sim_.now() - c.started;
  if (p.switch_left_ > Time{}) {
    p.switch_left_ = Time{};
    run_phase(c);
    return;
  }
  p.left_ = Time{};
  p.state_ = Process::State::holding;
  const uint64_t asked = p.requests_;
  std::exchange(p.waiter_, nullptr).resume();
  // The process went on to something that is not CPU work (it sleeps on a
  // CQ event, waits for a timer, or ended): it leaves the core.
  if (p.requests_ == asked && p.state_ == Process::State::holding) {
    p.state_ = Process::State::off;
    c.running = nullptr;
    if (c.owner == &p) c.owner = nullptr;
    dispatch(c);
  }
}

void Cpu::preempt(Core& c) {
  if (c.in_softirq) {
    if (!c.done) return;
    sim_.cancel(c.done);
    c.done = {};
    const Time ran = sim_.now() - c.started;
    c.softirq->left_ -= ran;
    c.softirq->runtime_ += ran;
    return;
  }
  if (!c.running || !c.done) return;
  sim_.cancel(c.done);
  c.done = {};
  Process& p = *c.running;
  const Time ran = sim_.now() - c.started;
  p.runtime_ += ran;
  if (p.switch_left_ > Time{})
    p.switch_left_ -= ran;
  else
    p.left_ -= ran;
}

void Cpu::start_irq(Core& c) {
  c.irq = c.irqs.take_front();
  c.in_irq = true;
  account(c, CpuUse::irq, nullptr);
  c.done = sim_.after(c.irq.cost, [this, &c] { irq_done(c); });
}

void Cpu::irq_done(Core& c) {
  c.done = {};
  c.in_irq = false;
  const Irq irq = c.irq;
  if (irq.sink) irq.sink->irq_handled();  // may raise a softirq or the next IRQ
  if (Process* p = irq.wake) {
    // The handler woke it: it runs when its turn comes.
    if (c.owner == p) c.owner = nullptr;
    make_ready(*p);
  }
  dispatch(c);
}

// ------------------------------------------------------------ accounting

void Cpu::account(Core& c, CpuUse use, const Process* p) {
  const Time now = sim_.now();
  if (now > c.seg_start) {
    c.time[static_cast<size_t>(c.use)] += now - c.seg_start;
    if (trace_) record(c, now);
  }
  c.use = use;
  c.seg_process = p;
  c.seg_start = now;
}

void Cpu::record(const Core& c, Time now) {
  if (c.use == CpuUse::idle || now <= trace_from_ || c.seg_start >= trace_to_) return;
  if (!trace_->empty()) {
    CpuSegment& last = trace_->back();
    if (last.core == c.index && last.use == c.use && last.process == c.seg_process &&
        last.end == c.seg_start) {
      last.end = now;
      return;
    }
  }
  trace_->push_back({c.index, c.use, c.seg_process, c.seg_start, now});
}

void Cpu::end_trace() {
  if (!trace_) return;
  for (auto& c : cores_)
    if (sim_.now() > c->seg_start) record(*c, sim_.now());
  trace_ = nullptr;
}

CpuTimes Cpu::times(int i) const {
  const Core& c = *cores_.at(i);
  CpuTimes t = c.time;
  t[static_cast<size_t>(c.use)] += sim_.now() - c.seg_start;
  return t;
}

Time Cpu::busy() const {
  Time b;
  for (int i = 0; i < cores(); ++i) {
    const CpuTimes t = times(i);
    for (size_t u = 0; u < kCpuUses; ++u)
      if (static_cast<CpuUse>(u) != CpuUse::idle) b += t[u];
  }
  return b;
}

}  // namespace rdmasim
