#include "programs/programs_run.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/errors.hpp"
#include "fabrics/network.hpp"
#include "nodes/host/host.hpp"
#include "programs/costs.hpp"
#include "programs/kernel_sockets.hpp"
#include "programs/protocol.hpp"
#include "programs/side_channel.hpp"
#include "topologies/config.hpp"
#include "topologies/routing.hpp"

namespace rdmasim {

using attach::Op;
using nlohmann::json;

struct ProgramsRun::Program {
  const ProgramConfig* cfg = nullptr;
  size_t index = 0;
  Host* host = nullptr;
  int host_index = 0;
  std::string name;  // <host>-<index>
  pid_t pid = -1;
  int fd = -1;
  Process* proc = nullptr;
  bool started = false, ended = false;
  std::optional<int> exit_code, signal;
  std::string reason;  // why it was killed
  Time started_at, ended_at;
  std::vector<std::string> unsupported;
  // Verbs the device refused ("ibv_create_qp (IBV_QPT_UD): EOPNOTSUPP"), each once, in order.
  std::vector<std::string> refused;
  // Handles the program holds: index + 1.
  std::vector<verbs::ProtectionDomain*> pds;
  std::vector<verbs::MemoryRegion*> mrs;
  std::vector<verbs::CompletionChannel*> channels;
  std::vector<verbs::CompletionQueue*> cqs;
  std::vector<verbs::SharedReceiveQueue*> srqs;
  std::vector<verbs::QueuePair*> qps;
  std::vector<verbs::AddressHandle*> ahs;
  // Its context's asynchronous events (ports going down and up), from its ibv_open_device on.
  std::shared_ptr<verbs::EventQueue<verbs::AsyncEvent>> async;
  // Its registered pages, at its own addresses: its PDs' address space (another program on the host may
  // have the same addresses).
  HostMemory memory;
  struct Segment {
    void* map = nullptr;
    size_t len = 0;
  };
  std::vector<Segment> segments;
  // The request being handled.
  attach::Request req{};
  std::vector<char> in;
  int passed_fd = -1;
  // Its open out-of-band sockets (id, listener): closed when it exits, as the kernel closes a process's
  // files.
  std::vector<std::pair<uint64_t, bool>> sockets;
  // Its ITIMER_REAL deadline (alarm, setitimer; zero: none): a wait in simulated time ends no later.
  Time alarm;
  // A socket call (accept, connect, recv) its alarm or its socket's timeout cut short: it goes on in the
  // kernel, and the next such call on that socket waits for it (as Linux restarts the call, or as a second
  // connect waits for the first one's handshake). By socket: the listener, the connection, or for a connect
  // kConnecting | the program's fd.
  struct Pending {
    bool done = false;
    bool opens = false;  // an accept or connect: `ret` > 0 is a connection
    int64_t ret = 0;
    std::vector<char> bytes;
    uint32_t addr = 0;
    uint16_t port = 0;
    std::unique_ptr<Trigger> finished;
    std::function<void(Pending&)> on_done;  // set when nobody waits for it any more
  };
  std::map<uint64_t, std::shared_ptr<Pending>> pending;
  // Bytes a recv the program had left took: the front of that connection's stream, read first.
  std::map<uint64_t, std::deque<char>> unread;
  // Messages placed into its memory by its QPs (a WRITE landed, a SEND delivered): what a program that
  // spins reading memory waits for (mem_wait).
  uint64_t placed = 0;
  std::unique_ptr<Trigger> placed_trigger;
};

namespace {

template <class T>
T* by_handle(const std::vector<T*>& v, uint64_t h) {
  return h >= 1 && h <= v.size() ? v[h - 1] : nullptr;
}
template <class T>
uint64_t handle_of(const std::vector<T*>& v, const T* x) {
  const auto it = x ? std::find(v.begin(), v.end(), x) : v.end();
  return it == v.end() ? 0 : static_cast<uint64_t>(it - v.begin()) + 1;
}
// The program's handle of what an affiliated event is about (its QP, CQ or
// SRQ); 0 for a port event, or for another context's object.
template <class P>
uint64_t element_handle(const P& p, const verbs::AsyncEvent& e) {
  if (e.qp) return handle_of(p.qps, e.qp);
  if (e.cq) return handle_of(p.cqs, e.cq);
  if (e.srq) return handle_of(p.srqs, e.srq);
  return 0;
}
template <class T>
int64_t add_handle(std::vector<T*>& v, T* x) {
  v.push_back(x);
  return static_cast<int64_t>(v.size());
}

// A read of an event fd (a completion channel's, the context's async fd):
// an event already queued is read at once; else the program sleeps in the
// kernel until one comes, or until its alarm ends the wait after `limit`
// (Time::max(): no alarm), leaving `out` empty (EINTR), and waking up costs
// the interrupt and the read. (An interrupt raised for an event already
// there, while the program still held its core, left it waiting for ever.)
template <typename T>
Task sleep_for_event(verbs::EventQueue<T>& q, Time limit, Cpu& cpu, Process& proc, const HostConfig& hc,
                     std::optional<T>& out) {
  out.reset();
  if (T e; q.try_take(e)) {
    out = std::move(e);
    co_await cpu.run(proc, CpuUse::syscall, hc.kernel.syscall);
    co_return;
  }
  if (limit == Time::max())
    out = co_await q.get_event();
  else if (limit > Time{})
    out = co_await q.get_event_within(limit);
  if (out) co_await cpu.interrupt(proc, hc.interrupt_cost, CpuUse::syscall, hc.kernel.syscall);
}

// The address a program reaches host `index` by on the side channel (a
// fabric without IPv4): one of 10.255.0.0/16, by host index.
uint32_t side_address(int index) { return 0x0AFF0000u | static_cast<uint32_t>(index + 1); }

bool write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// ibv_port_attr's width and speed codes for a link rate (IBA 14.2.5.6, the
// lane rates of SDR .. NDR); the nearest below when none is exact.
void width_speed(uint64_t gbps, uint8_t& width, uint8_t& speed) {
  struct Lane {
    uint8_t code;
    uint64_t gbps;
  };
  static constexpr Lane kLanes[] = {{128, 100}, {64, 50}, {32, 25}, {16, 14}, {8, 10}, {4, 5}, {1, 2}};
  static constexpr std::pair<uint8_t, uint64_t> kWidths[] = {{2, 4}, {16, 2}, {1, 1}};  // 4X, 2X, 1X
  for (const auto& [w, lanes] : kWidths)
    for (const Lane& l : kLanes)
      if (l.gbps * lanes == gbps) {
        width = w;
        speed = l.code;
        return;
      }
  width = 2;
  speed = 32;
  for (const Lane& l : kLanes)
    if (l.gbps * 4 <= gbps) {
      speed = l.code;
      return;
    }
}

// What the kernel does to the address of a RoCE QP or AH a program gives it
// (ib_resolve_eth_dmac in drivers/infiniband/core/verbs.c): a destination
// that is not link-local is resolved through the IP stack, and the GRH's
// hop limit becomes the route's (net.ipv4.ip_default_ttl, 64), whatever
// the program asked; ibv_rc_pingpong asks for 1, which the first router
// would drop.
void resolve_roce_hop_limit(ibv_ah_attr& ah, const NicFabric::VerbsIdentity& id) {
  if (id.gid_type != IBV_GID_TYPE_ROCE_V2 || !ah.is_global) return;
  const uint8_t* d = ah.grh.dgid.raw;
  const bool link_local = d[0] == 0xFE && (d[1] & 0xC0) == 0x80;
  if (!link_local) ah.grh.hop_limit = kRouteHopLimit;
}

// The verb of a control request that can fail by the device's choice, or null.
const char* refusable_verb(Op op) {
  switch (op) {
    case Op::alloc_pd:
      return "ibv_alloc_pd";
    case Op::reg_mr:
      return "ibv_reg_mr";
    case Op::create_cq:
      return "ibv_create_cq";
    case Op::create_srq:
      return "ibv_create_srq";
    case Op::modify_srq:
      return "ibv_modify_srq";
    case Op::create_qp:
      return "ibv_create_qp";
    case Op::modify_qp:
      return "ibv_modify_qp";
    case Op::create_ah:
      return "ibv_create_ah";
    case Op::post_send:  // an opcode the transport lacks (atomics on iwarp)
      return "ibv_post_send";
    default:
      return nullptr;
  }
}

const char* qp_type_name(uint32_t t) {
  switch (t) {
    case IBV_QPT_RC:
      return "IBV_QPT_RC";
    case IBV_QPT_UC:
      return "IBV_QPT_UC";
    case IBV_QPT_UD:
      return "IBV_QPT_UD";
    default:
      return "another QP type";
  }
}

const char* wr_opcode_name(uint32_t op) {
  switch (op) {
    case IBV_WR_RDMA_WRITE:
      return "IBV_WR_RDMA_WRITE";
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      return "IBV_WR_RDMA_WRITE_WITH_IMM";
    case IBV_WR_SEND:
      return "IBV_WR_SEND";
    case IBV_WR_SEND_WITH_IMM:
      return "IBV_WR_SEND_WITH_IMM";
    case IBV_WR_RDMA_READ:
      return "IBV_WR_RDMA_READ";
    case IBV_WR_ATOMIC_CMP_AND_SWP:
      return "IBV_WR_ATOMIC_CMP_AND_SWP";
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      return "IBV_WR_ATOMIC_FETCH_AND_ADD";
    default:
      return "another opcode";
  }
}

using Pending = ProgramsRun::Program::Pending;

// A connect's key in Program::pending: the program's fd (there is no connection yet).
constexpr uint64_t kConnecting = uint64_t{1} << 63;

// The call a Pending tracks, running on whether or not the program still waits for it.
Task finish(Task call, std::shared_ptr<Pending> w) {
  co_await call;
  w->done = true;
  w->finished->notify();
  if (w->on_done) w->on_done(*w);
}

// A socket call that may wait (accept, connect, recv) of program `p` on socket `key`: `start` begins it,
// unless one its alarm or its socket's timeout cut short is still going on there, which it waits for
// instead. The wait ends when the program's alarm is due, or after `timeout` (zero: none): `w` is then
// null and `cut` says which came (EINTR: the alarm; ETIME: the timeout); else `w` holds the outcome,
// already forgotten by `p`.
Task wait_socket(Simulator& sim, ProgramsRun::Program& p, uint64_t key, Time timeout,
                 const std::function<Task(Pending&)>& start, std::shared_ptr<Pending>& w, int& cut) {
  auto [it, fresh] = p.pending.try_emplace(key);
  if (fresh) {
    it->second = std::make_shared<Pending>();
    it->second->finished = std::make_unique<Trigger>(sim);
    finish(start(*it->second), it->second);  // detached: its frame ends with the call
  }
  std::shared_ptr<Pending> x = it->second;
  const Time alarm_left = p.alarm == Time{} ? Time::max() : std::max(p.alarm - sim.now(), Time{});
  const Time limit = timeout > Time{} ? std::min(alarm_left, timeout) : alarm_left;
  bool expired = false;
  EventId ev;
  if (!x->done && limit != Time::max())
    ev = sim.after(limit, [&expired, x] {
      expired = true;
      x->finished->notify();
    });
  while (!x->done && !expired) co_await *x->finished;
  sim.cancel(ev);
  if (!x->done) {
    cut = p.alarm != Time{} && sim.now() >= p.alarm ? EINTR : ETIME;
    co_return;
  }
  p.pending.erase(key);
  w = std::move(x);
}

// The socket's timeout an accept, connect or recv request carries (SO_RCVTIMEO, or SO_SNDTIMEO for
// connect: nanoseconds, 8 bytes of payload); zero: none.
Time socket_timeout(const std::vector<char>& in) {
  uint64_t ns = 0;
  if (in.size() == sizeof ns) std::memcpy(&ns, in.data(), sizeof ns);
  return Time::ns(static_cast<int64_t>(std::min<uint64_t>(ns, INT64_MAX / 1000)));
}

// An accept or connect the program no longer waits for: the connection it makes (or made) is closed.
void abandon(OobSockets& oob, Pending& w) {
  if (!w.opens) return;
  auto close = [&oob](Pending& x) {
    if (x.ret > 0) oob.close(static_cast<uint64_t>(x.ret), false);
  };
  if (w.done)
    close(w);
  else
    w.on_done = close;
}

// Up to `max` bytes from the front of `from`.
std::vector<char> take_front(std::deque<char>& from, size_t max) {
  const auto n = static_cast<std::ptrdiff_t>(std::min(max, from.size()));
  std::vector<char> out(from.begin(), from.begin() + n);
  from.erase(from.begin(), from.begin() + n);
  return out;
}

std::string signal_name(int s) {
  const char* n = sigabbrev_np(s);
  return n ? std::string("SIG") + n : std::to_string(s);
}

}  // namespace

std::string shim_directory() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  const std::filesystem::path exe_dir =
      std::filesystem::path(std::string(buf, static_cast<size_t>(n))).parent_path();
  for (const auto& d : {exe_dir / "lib" / "rdmasim", exe_dir.parent_path() / "lib" / "rdmasim"})
    if (std::filesystem::exists(d / "libibverbs.so.1")) return d.string();
  return {};
}

ProgramsRun::ProgramsRun(Network& net, const BuiltFabric& fabric, const std::filesystem::path& dir)
    : net_(net), dir_(dir) {
  (void)fabric;
  // The out-of-band sockets: the hosts' kernel TCP where the fabric carries IPv4, else the side channel.
  if (!net.cfg.programs.empty()) oob_ = KernelSockets::make(net);
  if (!oob_) {
    std::vector<uint32_t> addresses;
    for (size_t i = 0; i < net.hosts.size(); ++i) addresses.push_back(side_address(static_cast<int>(i)));
    Network* n = &net;
    oob_ = std::make_unique<SideChannel>(net.sim, std::move(addresses), [n](int a, int b) {
      const int d = std::max(n->paths().distance(a, b), 1);
      return n->cfg.link.delay * d + n->cfg.switch_config.latency * (d - 1) + kSideChannelStack * 2;
    });
  }
  for (size_t i = 0; i < net.cfg.programs.size(); ++i) {
    auto p = std::make_unique<Program>();
    p->cfg = &net.cfg.programs[i];
    p->index = i;
    const auto node = net.graph.find(p->cfg->host);
    p->host_index = node ? *node : 0;
    p->host = net.hosts[static_cast<size_t>(p->host_index)];
    p->name = p->cfg->host + "-" + std::to_string(i);
    programs_.push_back(std::move(p));
  }
  if (!programs_.empty()) {
    shim_dir_ = shim_directory();
    if (shim_dir_.empty())
      throw InputError(
          "programs: rdmasim's libibverbs.so.1 was not found in lib/rdmasim/ beside the rdmasim binary");
    std::error_code ec;
    std::filesystem::create_directories(dir_ / "programs", ec);
    if (ec) throw OutputError((dir_ / "programs").string() + ": cannot create: " + ec.message());
  }
}

ProgramsRun::~ProgramsRun() {
  for (auto& p : programs_)
    if (p->pid > 0 && !p->ended) reap(*p, true);
  // A program killed in a socket call leaves the call's coroutines waiting
  // on its Pending's trigger, and their frames hold that Pending: a cycle
  // nothing ends. Destroying the trigger destroys them (core/task.hpp,
  // Lifetime) while what their locals name is still here.
  for (auto& p : programs_)
    for (auto& [key, w] : p->pending)
      if (w) w->finished.reset();
  for (auto& p : programs_)
    for (const Program::Segment& s : p->segments)
      if (s.map) munmap(s.map, s.len);
}

void ProgramsRun::start() {
  for (auto& up : programs_) {
    Program* p = up.get();
    Simulator::Scope as(net_.sim, p->host->context());
    net_.sim.at(p->cfg->start, [this, p] {
      launch(*p);
      if (p->pid > 0) serve(*p);
    });
  }
}

bool ProgramsRun::finished() const {
  for (const auto& p : programs_)
    if (!p->ended) return false;
  return true;
}

void ProgramsRun::launch(Program& p) {
  // Everything the child needs, made before fork.
  std::vector<std::string> args;
  for (const std::string& w : p.cfg->argv) {
    std::string a;
    for (size_t i = 0; i < w.size();) {
      if (w[i] == '{') {
        const size_t end = w.find('}', i);
        const std::string name = w.substr(i + 1, end - i - 1);
        const auto n = net_.graph.find(name);
        a += SideChannel::dotted(oob_->address(n ? *n : 0));
        i = end + 1;
      } else {
        a += w[i++];
      }
    }
    args.push_back(std::move(a));
  }
  constexpr int kChildFd = 100;
  const std::vector<std::string> env = {
      "PATH=/usr/local/bin:/usr/bin:/bin",
      "LANG=C",
      "LD_PRELOAD=" + shim_dir_ + "/libibverbs.so.1",
      "LD_LIBRARY_PATH=" + shim_dir_,
      std::string(attach::kFdEnv) + "=" + std::to_string(kChildFd),
  };
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string out = (dir_ / "programs" / (p.name + ".out")).string();
  const std::string err = (dir_ / "programs" / (p.name + ".err")).string();
  const std::string cwd = (dir_ / "programs").string();
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw OutputError("programs: socketpair: " + std::string(std::strerror(errno)));
  const int ofd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int efd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (ofd < 0 || efd < 0) throw OutputError(out + ": cannot create: " + std::strerror(errno));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // The child: dies with rdmasim, whatever ends it; the same addresses every run.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);
    setpgid(0, 0);
    personality(ADDR_NO_RANDOMIZE);
    const int nul = open("/dev/null", O_RDONLY);
    dup2(nul, 0);
    dup2(ofd, 1);
    dup2(efd, 2);
    dup2(sv[1], kChildFd);  // dup2 clears close-on-exec
    if (chdir(cwd.c_str()) != 0) _exit(126);
    signal(SIGPIPE, SIG_DFL);  // rdmasim ignores both (apps/output_dir.hpp)
    signal(SIGXFSZ, SIG_DFL);
    // rdmasim blocks SIGINT and SIGTERM in every thread (its interrupt
    // thread waits for them, apps/output_dir.cpp); a program starts as
    // from a shell, with nothing blocked.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(p.cfg->path.c_str(), argv.data(), envp.data());
    dprintf(2, "rdmasim: cannot run %s: %s\n", p.cfg->path.c_str(), std::strerror(errno));
    _exit(127);
  }
  close(sv[1]);
  close(ofd);
  close(efd);
  if (pid < 0) {
    close(sv[0]);
    throw OutputError("programs: fork: " + std::string(std::strerror(errno)));
  }
  p.pid = pid;
  p.fd = sv[0];
  p.started = true;
  p.started_at = net_.sim.now();
  p.proc = &p.host->spawn(p.name);
}

void ProgramsRun::reap(Program& p, bool kill_it) {
  if (p.pid <= 0 || p.ended) return;
  if (kill_it) kill(-p.pid, SIGKILL), kill(p.pid, SIGKILL);
  int status = 0;
  // A program that closed its end is exiting: give it a moment, then make sure.
  for (int i = 0; i < 500; ++i) {
    const pid_t r = waitpid(p.pid, &status, WNOHANG);
    if (r == p.pid) break;
    if (r < 0) break;
    if (i == 499) {
      kill(-p.pid, SIGKILL);
      kill(p.pid, SIGKILL);
      waitpid(p.pid, &status, 0);
    }
    usleep(10000);
  }
  if (!kill_it) {  // it exited during the run: the kernel closes its sockets (FIN)
    for (const auto& [id, listener] : std::exchange(p.sockets, {})) oob_->close(id, listener);
    for (auto& [key, w] : std::exchange(p.pending, {})) abandon(*oob_, *w);
  }
  if (WIFEXITED(status)) p.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) p.signal = WTERMSIG(status);
  p.ended = true;
  p.ended_at = net_.sim.now();
  if (p.fd >= 0) close(p.fd);
  p.fd = -1;
}

void ProgramsRun::end(const std::string& why) {
  for (auto& p : programs_) {
    if (!p->started) {
      p->reason = "never started: " + why;
      p->ended = true;
      p->ended_at = net_.sim.now();
      continue;
    }
    if (p->ended) continue;
    p->reason = "still running when " + why + "; killed";
    reap(*p, true);
  }
}

Task ProgramsRun::serve(Program& p) {
  bool keep = true;
  while (keep && !p.ended) co_await handle(p, keep);
}

namespace {

// Whether the program made its next request within `silence` of real time. Past kNudgeAfterMs (or half
// of silence, if shorter) it is nudged: the pages its own writes opened close, so a spin on one of them
// is seen (memory_watch.hpp).
bool wait_for_request(const ProgramsRun::Program& p) {
  pollfd pf{p.fd, POLLIN, 0};
  const int64_t limit_ms = std::min<int64_t>(p.cfg->silence.count() / 1'000'000'000, INT32_MAX);
  const int64_t nudge_ms = std::min<int64_t>(attach::kNudgeAfterMs, limit_ms / 2);
  int ready;
  do ready = ::poll(&pf, 1, static_cast<int>(nudge_ms > 0 ? nudge_ms : limit_ms));
  while (ready < 0 && errno == EINTR);
  if (ready != 0 || nudge_ms == 0) return ready != 0;
  sigqueue(p.pid, SIGTRAP, sigval{.sival_int = attach::kNudge});
  do ready = ::poll(&pf, 1, static_cast<int>(limit_ms - nudge_ms));
  while (ready < 0 && errno == EINTR);
  return ready != 0;
}

}  // namespace

Task ProgramsRun::handle(Program& p, bool& keep) {
  // The next request: the program runs until it makes one (the engine waits).
  if (!wait_for_request(p)) {
    p.reason = "made no intercepted call for " + to_string(p.cfg->silence) +
               " of real time; killed (a program that waits by reading memory with no call cannot run, "
               "unless the memory is a region the peer may write: docs/programs.md)";
    reap(p, true);
    keep = false;
    co_return;
  }
  attach::Request& r = p.req;
  attach::FdMessage fm(&r, sizeof r);
  msghdr& m = fm.m;
  ssize_t got;
  do got = recvmsg(p.fd, &m, MSG_WAITALL | MSG_CMSG_CLOEXEC);
  while (got < 0 && errno == EINTR);
  p.passed_fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      std::memcpy(&p.passed_fd, CMSG_DATA(c), sizeof(int));
  p.in.resize(r.len);
  if (got != static_cast<ssize_t>(sizeof r) || (r.len && !read_all(p.fd, p.in.data(), r.len))) {
    reap(p, false);  // it exited (or broke the channel)
    keep = false;
    co_return;
  }
  Host& host = *p.host;
  verbs::Device& dev = host.device();
  Cpu& cpu = host.cpu();
  const HostConfig& hc = host.config();
  // What it spent on calls answered in place, then what this call costs (programs/costs.hpp).
  // The kernel's socket calls charge their own system call and copies.
  const bool sock_charges = oob_->charges_calls() && (r.op == Op::sock_accept || r.op == Op::sock_connect ||
                                                      r.op == Op::sock_send || r.op == Op::sock_recv);
  Time cost = Time::ps(static_cast<int64_t>(r.local_ps)) + (sock_charges ? Time{} : call_cost(r.op, hc));
  if (cost > Time{}) co_await cpu.run(*p.proc, CpuUse::user, cost);

  int64_t ret = 0;
  uint64_t c = 0;
  std::vector<char> out;
  // How long a wait of at most `limit` may last before the program's alarm is due.
  auto before_alarm = [&p, this](Time limit) {
    if (p.alarm == Time{}) return limit;
    return std::clamp(p.alarm - net_.sim.now(), Time{}, limit);
  };
  auto put = [&out](const void* x, size_t n) {
    if (n == 0) return;  // x may be an empty vector's data(), null
    const size_t at = out.size();
    out.resize(at + n);
    std::memcpy(out.data() + at, x, n);
  };
  auto arg = [&](auto& x) -> bool {
    if (p.in.size() < sizeof x) return false;
    std::memcpy(&x, p.in.data(), sizeof x);
    return true;
  };
  switch (r.op) {
    case Op::hello: {
      if (r.a != attach::kMagic) {
        ret = -EPROTO;
        break;
      }
      attach::HelloReply h{};
      const auto id = host.nic().fabric().verbs_identity();
      std::snprintf(h.name, sizeof h.name, "%s",
                    id.transport == IBV_TRANSPORT_IWARP ? "rdmasim_iw0" : "rdmasim0");
      h.node_guid = htobe64(0x0002C90300000000ull | static_cast<uint64_t>(p.host_index + 1));
      h.transport = id.transport;
      h.node_type = static_cast<uint32_t>(id.node);
      h.vpid = static_cast<uint32_t>(1000 + p.index);
      h.cost_clock_ps = static_cast<uint32_t>(kClockRead.count());
      h.tsc_hz = kTscHz;
      h.cores = static_cast<uint32_t>(hc.cores);
      put(&h, sizeof h);
      p.async = std::make_shared<verbs::EventQueue<verbs::AsyncEvent>>(net_.sim);
      dev.listen(p.async, [&p](const verbs::AsyncEvent& e) { return element_handle(p, e) != 0; });
      break;
    }
    case Op::query_device: {
      ibv_device_attr a{};
      const auto id = host.nic().fabric().verbs_identity();
      std::snprintf(a.fw_ver, sizeof a.fw_ver, "rdmasim");
      a.node_guid = htobe64(0x0002C90300000000ull | static_cast<uint64_t>(p.host_index + 1));
      a.sys_image_guid = a.node_guid;
      a.max_mr_size = UINT64_MAX;
      a.page_size_cap = 0xFFFFF000;
      a.vendor_id = 0;
      a.vendor_part_id = 0;
      a.hw_ver = 0;
      a.max_qp = 1 << 17;
      a.max_qp_wr = 16384;
      a.device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SRQ_RESIZE | IBV_DEVICE_PORT_ACTIVE_EVENT;
      a.max_sge = 16;
      a.max_sge_rd = 16;
      a.max_cq = 1 << 16;
      a.max_cqe = 1 << 20;
      a.max_mr = 1 << 20;
      a.max_pd = 1 << 16;
      a.max_qp_rd_atom = 16;
      a.max_ee_rd_atom = 0;
      a.max_res_rd_atom = 16 << 10;
      a.max_qp_init_rd_atom = 16;
      a.atomic_cap = id.transport == IBV_TRANSPORT_IWARP ? IBV_ATOMIC_NONE : IBV_ATOMIC_HCA;
      a.max_srq = host.nic().fabric().supports_srq() ? 1 << 16 : 0;
      a.max_srq_wr = a.max_srq ? 16384 : 0;
      a.max_srq_sge = a.max_srq ? 16 : 0;
      a.max_pkeys = 1;
      a.local_ca_ack_delay = 16;
      a.phys_port_cnt = 1;
      put(&a, sizeof a);
      break;
    }
    case Op::query_port: {
      ibv_port_attr a{};
      ret = -dev.query_port(static_cast<uint8_t>(r.a), a);
      if (ret != 0) break;
      const auto id = host.nic().fabric().verbs_identity();
      if (id.transport == IBV_TRANSPORT_IWARP) a.link_layer = IBV_LINK_LAYER_ETHERNET;
      a.max_msg_sz = 1u << 31;
      a.phys_state = a.state == IBV_PORT_ACTIVE ? 5 : 3;  // LinkUp, Disabled
      a.port_cap_flags = a.link_layer == IBV_LINK_LAYER_INFINIBAND ? IBV_PORT_CM_SUP : 0;
      if (a.link_layer == IBV_LINK_LAYER_INFINIBAND) {
        a.sm_lid = 1;
        a.max_vl_num = 4;  // VL0 .. VL7
      }
      const auto ports = net_.graph.ports(p.host_index);
      const uint64_t gbps =
          ports.empty() ? 100
                        : net_.cfg.topology.links[static_cast<size_t>(ports[0].link)].config.bandwidth.bps() /
                              1'000'000'000;
      width_speed(gbps, a.active_width, a.active_speed);
      put(&a, sizeof a);
      break;
    }
    case Op::query_gid: {
      ibv_gid g{};
      ret = -dev.query_gid(static_cast<uint8_t>(r.a), static_cast<int>(r.b), g);
      if (ret == 0) put(&g, sizeof g);
      break;
    }
    case Op::query_gid_type: {
      ibv_gid g{};
      ret = -dev.query_gid(static_cast<uint8_t>(r.a), static_cast<int>(r.b), g);
      if (ret == 0) ret = host.nic().fabric().verbs_identity().gid_type;
      break;
    }
    case Op::query_pkey: {
      uint16_t k = 0;
      ret = -dev.query_pkey(static_cast<uint8_t>(r.a), static_cast<int>(r.b), k);
      if (ret == 0) ret = k;
      break;
    }
    case Op::alloc_pd:
      ret = add_handle(p.pds, dev.alloc_pd(&p.memory));
      break;
    case Op::dealloc_pd:
      ret = by_handle(p.pds, r.a) ? 0 : -EINVAL;
      break;
    case Op::reg_mr: {
      attach::RegMr mr{};
      verbs::ProtectionDomain* pd = arg(mr) ? by_handle(p.pds, mr.pd) : nullptr;
      if (!pd) {
        ret = -EINVAL;
        break;
      }
      if (r.b) {  // a new segment: map the program's pages here too
        void* at = p.passed_fd >= 0
                       ? mmap(nullptr, mr.seg_length, PROT_READ | PROT_WRITE, MAP_SHARED, p.passed_fd, 0)
                       : MAP_FAILED;
        if (p.passed_fd >= 0) close(p.passed_fd);
        if (at == MAP_FAILED || mr.seg_id != p.segments.size() + 1) {
          ret = -EFAULT;
          break;
        }
        p.segments.push_back({at, mr.seg_length});
        if (!p.memory.adopt(mr.seg_addr, static_cast<std::byte*>(at), mr.seg_length)) {
          ret = -EFAULT;
          break;
        }
      }
      verbs::MemoryRegion* m2 = dev.reg_mr(pd, mr.addr, mr.length, mr.access);
      if (!m2) {
        ret = -errno;
        break;
      }
      ret = add_handle(p.mrs, m2);
      attach::RegMrReply keys{m2->lkey, m2->rkey};
      put(&keys, sizeof keys);
      break;
    }
    case Op::dereg_mr: {
      verbs::MemoryRegion* m2 = by_handle(p.mrs, r.a);
      ret = m2 ? -dev.dereg_mr(m2) : -EINVAL;
      break;
    }
    case Op::create_comp_channel:
      ret = add_handle(p.channels, dev.create_comp_channel());
      break;
    case Op::destroy_comp_channel:
      break;
    case Op::create_cq: {
      verbs::CompletionChannel* ch = r.b ? by_handle(p.channels, r.b) : nullptr;
      verbs::CompletionQueue* cq = dev.create_cq(static_cast<int>(r.a), ch);
      if (!cq) {
        ret = -errno;
        break;
      }
      cq->set_moderation({hc.interrupt_coalescing.frames, hc.interrupt_coalescing.delay, hc.pcie.latency});
      ret = add_handle(p.cqs, cq);
      break;
    }
    case Op::destroy_cq:
      ret = by_handle(p.cqs, r.a) ? 0 : -EINVAL;
      break;
    case Op::req_notify_cq: {
      verbs::CompletionQueue* cq = by_handle(p.cqs, r.a);
      ret = cq ? -cq->req_notify(r.b != 0) : -EINVAL;
      break;
    }
    case Op::get_cq_event: {
      verbs::CompletionChannel* ch = by_handle(p.channels, r.a);
      if (!ch) {
        ret = -EINVAL;
        break;
      }
      std::optional<verbs::CompletionQueue*> cq;
      co_await sleep_for_event<verbs::CompletionQueue*>(*ch, before_alarm(Time::max()), cpu, *p.proc, hc, cq);
      if (!cq) {
        ret = -EINTR;
        break;
      }
      const uint64_t h = handle_of(p.cqs, *cq);
      ret = h ? static_cast<int64_t>(h) : -EIO;
      break;
    }
    case Op::get_async_event: {
      // The async fd: the device's port events, and the affiliated events of
      // this program's own QPs, CQs and SRQs (c: its handle of the object).
      if (!p.async) {
        ret = -EBADF;
        break;
      }
      std::optional<verbs::AsyncEvent> e;
      co_await sleep_for_event(*p.async, before_alarm(Time::max()), cpu, *p.proc, hc, e);
      if (!e) {
        ret = -EINTR;
        break;
      }
      ret = static_cast<int64_t>(e->type) | int64_t{e->port} << 16;
      c = element_handle(p, *e);
      break;
    }
    case Op::poll_cq: {
      verbs::CompletionQueue* cq = by_handle(p.cqs, r.a);
      if (!cq) {
        ret = -EINVAL;
        break;
      }
      const int n = static_cast<int>(std::min<uint64_t>(r.b, 64));
      std::vector<ibv_wc> wc(static_cast<size_t>(n));
      int got_n = cq->poll(n, wc.data());
      if (got_n == 0) {
        // It spins on ibv_poll_cq: answered when a completion comes (or, on
        // a CQ that stays empty, after kPollSpin, so a program polling
        // several CQs in turn moves on, or when its alarm is due), charged as polling.
        cpu.spin(*p.proc);
        bool came = false;
        if (const Time limit = before_alarm(kPollSpin); limit > Time{}) co_await cq->next_within(limit, came);
        if (came) {
          co_await cpu.run(*p.proc, CpuUse::user, hc.poll_cost);
          got_n = cq->poll(n, wc.data());
        } else {
          cpu.stop_spin(*p.proc);
        }
      }
      ret = got_n;
      put(wc.data(), sizeof(ibv_wc) * static_cast<size_t>(got_n));
      break;
    }
    case Op::create_srq: {
      attach::SrqInit s{};
      verbs::ProtectionDomain* pd = arg(s) ? by_handle(p.pds, r.a) : nullptr;
      if (!pd) {
        ret = -EINVAL;
        break;
      }
      ibv_srq_init_attr init{};
      init.attr = s.attr;
      verbs::SharedReceiveQueue* srq = dev.create_srq(pd, init);
      if (!srq) {
        ret = -errno;
        break;
      }
      ret = add_handle(p.srqs, srq);
      put(&s.attr, sizeof s.attr);
      break;
    }
    case Op::destroy_srq:
      ret = by_handle(p.srqs, r.a) ? 0 : -EINVAL;
      break;
    case Op::modify_srq: {
      ibv_srq_attr a{};
      verbs::SharedReceiveQueue* srq = arg(a) ? by_handle(p.srqs, r.a) : nullptr;
      ret = srq ? -srq->modify(a, static_cast<int>(r.b)) : -EINVAL;
      break;
    }
    case Op::query_srq: {
      ibv_srq_attr a{};
      verbs::SharedReceiveQueue* srq = by_handle(p.srqs, r.a);
      ret = srq ? -srq->query(a) : -EINVAL;
      if (ret == 0) put(&a, sizeof a);
      break;
    }
    case Op::create_qp: {
      attach::CreateQp q{};
      verbs::ProtectionDomain* pd = arg(q) ? by_handle(p.pds, q.pd) : nullptr;
      if (!pd) {
        ret = -EINVAL;
        break;
      }
      verbs::QpInitAttr init;
      init.send_cq = by_handle(p.cqs, q.send_cq);
      init.recv_cq = by_handle(p.cqs, q.recv_cq);
      init.srq = q.srq ? by_handle(p.srqs, q.srq) : nullptr;
      init.cap = q.cap;
      init.qp_type = static_cast<ibv_qp_type>(q.qp_type);
      init.sq_sig_all = q.sq_sig_all != 0;
      verbs::QueuePair* qp = dev.create_qp(pd, init);
      if (!qp) {
        ret = -errno;
        break;
      }
      ret = add_handle(p.qps, qp);
      if (!p.placed_trigger) p.placed_trigger = std::make_unique<Trigger>(net_.sim);
      qp->on_message_placed([pp = &p] {
        ++pp->placed;
        pp->placed_trigger->notify();
      });
      attach::CreateQpReply rep{qp->qp_num(), qp->init_attr().cap};
      put(&rep, sizeof rep);
      break;
    }
    case Op::destroy_qp: {
      verbs::QueuePair* qp = by_handle(p.qps, r.a);
      if (!qp) {
        ret = -EINVAL;
        break;
      }
      ibv_qp_attr a{};
      a.qp_state = IBV_QPS_RESET;
      qp->modify(a, IBV_QP_STATE);
      break;
    }
    case Op::modify_qp: {
      ibv_qp_attr a{};
      verbs::QueuePair* qp = arg(a) ? by_handle(p.qps, r.a) : nullptr;
      if (r.b & IBV_QP_AV) resolve_roce_hop_limit(a.ah_attr, host.nic().fabric().verbs_identity());
      ret = qp ? -qp->modify(a, static_cast<int>(r.b)) : -EINVAL;
      break;
    }
    case Op::query_qp: {
      verbs::QueuePair* qp = by_handle(p.qps, r.a);
      if (!qp) {
        ret = -EINVAL;
        break;
      }
      struct {
        ibv_qp_attr attr;
        ibv_qp_cap cap;
        uint32_t sq_sig_all;
      } o{};
      qp->query(o.attr);
      o.cap = qp->init_attr().cap;
      o.attr.cap = o.cap;
      o.sq_sig_all = qp->init_attr().sq_sig_all ? 1 : 0;
      put(&o, sizeof o);
      break;
    }
    case Op::create_ah: {
      ibv_ah_attr a{};
      verbs::ProtectionDomain* pd = arg(a) ? by_handle(p.pds, r.a) : nullptr;
      resolve_roce_hop_limit(a, host.nic().fabric().verbs_identity());
      verbs::AddressHandle* ah = pd ? dev.create_ah(pd, a) : nullptr;
      ret = ah ? add_handle(p.ahs, ah) : -EINVAL;
      break;
    }
    case Op::destroy_ah:
      break;
    case Op::post_send: {
      verbs::QueuePair* qp = by_handle(p.qps, r.a);
      const size_t n = r.b;
      if (!qp || p.in.size() != n * sizeof(attach::WireSend)) {
        ret = -EINVAL;
        break;
      }
      std::vector<attach::WireSend> ws(n);
      if (n > 0) std::memcpy(ws.data(), p.in.data(), p.in.size());
      std::vector<ibv_send_wr> wrs(n);
      std::vector<std::array<ibv_sge, attach::kMaxSge>> sges(n);
      uint64_t inline_bytes = 0;
      for (size_t i = 0; i < n; ++i) {
        const attach::WireSend& w = ws[i];
        ibv_send_wr& x = wrs[i];
        x.wr_id = w.wr_id;
        x.opcode = static_cast<ibv_wr_opcode>(w.opcode);
        x.send_flags = w.send_flags;
        x.imm_data = w.imm_data;
        x.num_sge = static_cast<int>(std::min<uint32_t>(w.num_sge, attach::kMaxSge));
        for (int s = 0; s < x.num_sge; ++s) {
          sges[i][static_cast<size_t>(s)] = {w.sge[s].addr, w.sge[s].length, w.sge[s].lkey};
          if (w.send_flags & IBV_SEND_INLINE) inline_bytes += w.sge[s].length;
        }
        x.sg_list = sges[i].data();
        if (x.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || x.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
          x.wr.atomic = {w.remote_addr, w.compare_add, w.swap, w.rkey};
        } else if (qp->type() == IBV_QPT_UD) {
          x.wr.ud.ah = by_handle(p.ahs, w.ah);
          x.wr.ud.remote_qpn = w.remote_qpn;
          x.wr.ud.remote_qkey = w.remote_qkey;
        } else {
          x.wr.rdma.remote_addr = w.remote_addr;
          x.wr.rdma.rkey = w.rkey;
        }
        x.next = i + 1 < n ? &wrs[i + 1] : nullptr;
      }
      // Each further WQE, and the programmed I/O of inline data (the first post is in call_cost).
      const Time extra = hc.post_cost * static_cast<int64_t>(n - 1) +
                         (inline_bytes ? hc.pio_bandwidth.tx_time(inline_bytes) : Time{});
      if (extra > Time{}) co_await cpu.run(*p.proc, CpuUse::user, extra);
      ibv_send_wr* bad = nullptr;
      ret = qp->post_send(wrs.data(), &bad);
      if (ret != 0 && bad) c = static_cast<uint64_t>(bad - wrs.data());
      break;
    }
    case Op::post_recv:
    case Op::post_srq_recv: {
      const size_t n = r.b;
      if (p.in.size() != n * sizeof(attach::WireRecv)) {
        ret = -EINVAL;
        break;
      }
      std::vector<attach::WireRecv> ws(n);
      if (n > 0) std::memcpy(ws.data(), p.in.data(), p.in.size());
      std::vector<ibv_recv_wr> wrs(n);
      std::vector<std::array<ibv_sge, attach::kMaxSge>> sges(n);
      for (size_t i = 0; i < n; ++i) {
        wrs[i].wr_id = ws[i].wr_id;
        wrs[i].num_sge = static_cast<int>(std::min<uint32_t>(ws[i].num_sge, attach::kMaxSge));
        for (int s = 0; s < wrs[i].num_sge; ++s)
          sges[i][static_cast<size_t>(s)] = {ws[i].sge[s].addr, ws[i].sge[s].length, ws[i].sge[s].lkey};
        wrs[i].sg_list = sges[i].data();
        wrs[i].next = i + 1 < n ? &wrs[i + 1] : nullptr;
      }
      if (n > 1) co_await cpu.run(*p.proc, CpuUse::user, hc.post_cost * static_cast<int64_t>(n - 1));
      ibv_recv_wr* bad = nullptr;
      if (r.op == Op::post_recv) {
        verbs::QueuePair* qp = by_handle(p.qps, r.a);
        ret = qp ? qp->post_recv(wrs.data(), &bad) : EINVAL;
      } else {
        verbs::SharedReceiveQueue* srq = by_handle(p.srqs, r.a);
        ret = srq ? srq->post(wrs.data(), &bad) : EINVAL;
      }
      if (ret != 0 && bad) c = static_cast<uint64_t>(bad - wrs.data());
      break;
    }
    case Op::unsupported: {
      const std::string verb(p.in.begin(), p.in.end());
      if (std::find(p.unsupported.begin(), p.unsupported.end(), verb) == p.unsupported.end())
        p.unsupported.push_back(verb);
      break;
    }
    case Op::sock_listen:
      ret = oob_->listen(p.host_index, static_cast<uint16_t>(r.a));
      if (ret > 0) p.sockets.push_back({static_cast<uint64_t>(ret), true});
      break;
    case Op::sock_accept: {
      std::shared_ptr<Pending> w;
      int cut = 0;
      co_await wait_socket(
          net_.sim, p, r.a, socket_timeout(p.in),
          [&](Pending& x) {
            x.opens = true;
            return oob_->accept(*p.proc, r.a, x.ret, x.addr, x.port);
          },
          w, cut);
      ret = w ? w->ret : cut == EINTR ? -EINTR : -EAGAIN;
      if (ret > 0) p.sockets.push_back({static_cast<uint64_t>(ret), false});
      const uint32_t peer[2] = {w ? w->addr : 0, w ? w->port : 0u};
      put(peer, sizeof peer);
      break;
    }
    case Op::sock_connect: {
      std::shared_ptr<Pending> w;
      int cut = 0;
      co_await wait_socket(
          net_.sim, p, kConnecting | r.b >> 16, socket_timeout(p.in),
          [&](Pending& x) {
            x.opens = true;
            return oob_->connect(*p.proc, p.host_index, static_cast<uint32_t>(r.a),
                                 static_cast<uint16_t>(r.b & 0xFFFF), x.ret);
          },
          w, cut);
      ret = w ? w->ret : cut == EINTR ? -EINTR : -EINPROGRESS;
      if (ret > 0) p.sockets.push_back({static_cast<uint64_t>(ret), false});
      break;
    }
    case Op::sock_send:
      co_await oob_->send(*p.proc, r.a, p.in, ret);
      break;
    case Op::sock_recv:
      co_await socket_recv(p, out, ret);
      break;
    case Op::sock_close:
      if (r.b == 2) {  // a socket whose connect the alarm interrupted: what it makes is closed
        if (auto it = p.pending.find(kConnecting | r.a); it != p.pending.end()) {
          abandon(*oob_, *it->second);
          p.pending.erase(it);
        }
        break;
      }
      oob_->close(r.a, r.b != 0);
      std::erase(p.sockets, std::pair<uint64_t, bool>{r.a, r.b != 0});
      p.unread.erase(r.a);
      break;
    case Op::sock_poll:
      ret = -ENOSYS;
      break;
    case Op::sleep:
      if (const Time d = before_alarm(Time::ns(static_cast<int64_t>(r.a))); d > Time{})
        co_await sleep(net_.sim, d);
      break;
    case Op::set_alarm:
      p.alarm = Time::ps(static_cast<int64_t>(r.a));
      break;
    case Op::mem_wait: {
      // It spins reading a byte of its memory (programs/shim/memory_watch.hpp): answered when a message
      // is placed there (its next read costs a poll), after kPollSpin, or when its alarm is due; charged
      // as polling meanwhile, as an empty ibv_poll_cq.
      const uint64_t seen = p.placed;
      cpu.spin(*p.proc);
      if (const Time limit = before_alarm(kPollSpin); limit > Time{} && p.placed_trigger) {
        bool expired = false;
        const EventId ev = net_.sim.after(limit, [&expired, &p] {
          expired = true;
          p.placed_trigger->notify();
        });
        while (p.placed == seen && !expired) co_await *p.placed_trigger;
        net_.sim.cancel(ev);
      }
      if (p.placed != seen)
        co_await cpu.run(*p.proc, CpuUse::user, hc.poll_cost);
      else
        cpu.stop_spin(*p.proc);
      break;
    }
    default:
      ret = -ENOSYS;
      break;
  }
  // A failed call is -errno; a post returns the errno itself, as ibv_post_send does.
  const int64_t err = r.op == Op::post_send ? ret : -ret;
  if (const char* verb = err > 0 ? refusable_verb(r.op) : nullptr) {
    std::string what = verb;
    attach::CreateQp q{};
    if (r.op == Op::create_qp && arg(q)) what += std::string(" (") + qp_type_name(q.qp_type) + ")";
    attach::WireSend bad{};
    if (r.op == Op::post_send && (c + 1) * sizeof bad <= p.in.size()) {
      std::memcpy(&bad, p.in.data() + c * sizeof bad, sizeof bad);
      what += std::string(" (") + wr_opcode_name(bad.opcode) + ")";
    }
    const char* e = strerrorname_np(static_cast<int>(err));
    what += ": " + (e ? std::string(e) : std::to_string(err));
    if (std::find(p.refused.begin(), p.refused.end(), what) == p.refused.end()) p.refused.push_back(what);
  }
  attach::Reply rep{ret, static_cast<uint64_t>(net_.sim.now().count()), c, static_cast<uint32_t>(out.size()),
                    0};
  if (!write_all(p.fd, &rep, sizeof rep) || (!out.empty() && !write_all(p.fd, out.data(), out.size()))) {
    reap(p, false);
    keep = false;
  }
}

// recv(2) on an out-of-band connection (a = the connection, b = at most | mode << 56, mode 1: nonblocking,
// 2: MSG_WAITALL): bytes a recv it had left took come first.
Task ProgramsRun::socket_recv(Program& p, std::vector<char>& out, int64_t& ret) {
  const attach::Request& r = p.req;
  const size_t max = r.b & ((uint64_t{1} << 56) - 1);
  const bool nonblocking = (r.b >> 56 & 1) != 0, wait_all = (r.b >> 56 & 2) != 0;
  std::deque<char>& unread = p.unread[r.a];
  const auto going = p.pending.find(r.a);
  const bool waiting = going != p.pending.end();
  auto serve = [&] {
    out = take_front(unread, max);
    ret = static_cast<int64_t>(out.size());
  };
  if (max == 0 || (!waiting && unread.size() >= (wait_all ? max : 1))) {
    serve();
    co_return;
  }
  if (nonblocking && !(waiting && going->second->done)) {
    // What there is; with nothing, a new nonblocking recv (it does not wait), or EAGAIN while one waits.
    if (!unread.empty() || waiting) {
      serve();
      if (out.empty()) ret = -EAGAIN;
      co_return;
    }
  }
  std::shared_ptr<Pending> w;
  int cut = 0;
  const size_t more = max - std::min(max, unread.size());
  co_await wait_socket(
      net_.sim, p, r.a, socket_timeout(p.in),
      [&](Pending& x) { return oob_->recv(*p.proc, r.a, more, nonblocking, wait_all, x.bytes, x.ret); }, w,
      cut);
  if (!w) {
    ret = cut == EINTR ? -EINTR : -EAGAIN;
    co_return;
  }
  if (w->ret < 0 && unread.empty()) {
    ret = w->ret;
    co_return;
  }
  unread.insert(unread.end(), w->bytes.begin(), w->bytes.end());
  out = take_front(unread, max);
  ret = static_cast<int64_t>(out.size());
}

json ProgramsRun::results() const {
  json out = json::array();
  for (const auto& p : programs_) {
    json j;
    j["host"] = p->cfg->host;
    j["run"] = p->cfg->run;
    j["start_ps"] = p->cfg->start.count();
    j["end_ps"] = p->ended_at.count();
    j["wall_s"] = p->started ? (p->ended_at - p->started_at).to_s() : 0.0;
    j["exit_code"] = p->exit_code ? json(*p->exit_code) : json(nullptr);
    j["signal"] = p->signal ? json(signal_name(*p->signal)) : json(nullptr);
    if (!p->reason.empty()) j["killed"] = p->reason;
    j["stdout"] = "programs/" + p->name + ".out";
    j["stderr"] = "programs/" + p->name + ".err";
    j["unsupported_verbs"] = p->unsupported;
    j["refused_verbs"] = p->refused;
    out.push_back(std::move(j));
  }
  return out;
}

std::string format_programs_summary(const json& results) {
  const json progs = results.value("programs", json::array());
  if (progs.empty()) return {};
  std::string s = "  program  host  exit  sim time  command\n";
  for (const json& p : progs) {
    std::string status;
    if (!p["exit_code"].is_null())
      status = std::to_string(p["exit_code"].get<int>());
    else if (!p["signal"].is_null())
      status = p["signal"].get<std::string>();
    else
      status = "-";
    char t[32];
    std::snprintf(t, sizeof t, "%.6f s", p["wall_s"].get<double>());
    s += "  " + p["stdout"].get<std::string>().substr(9, p["stdout"].get<std::string>().size() - 13) + "  " +
         p["host"].get<std::string>() + "  " + status + "  " + t + "  " + p["run"].get<std::string>() + "\n";
    if (p.contains("killed")) s += "    killed: " + p["killed"].get<std::string>() + "\n";
    for (const json& v : p["unsupported_verbs"])
      s += "    called " + v.get<std::string>() + ", which the model does not implement\n";
    for (const json& v : p.value("refused_verbs", json::array()))
      s += "    the device refused " + v.get<std::string>() + "\n";
  }
  return s;
}

namespace {

// Why program `p` failed ("" if it did not); `named` is set when a verb the model lacks or the device
// refused explains it.
std::string failure_of(const json& p, bool& named) {
  const std::string who =
      "program " + p["stdout"].get<std::string>().substr(9, p["stdout"].get<std::string>().size() - 13) +
      " (" + p["run"].get<std::string>() + ")";
  named = false;
  if (p.contains("killed")) return who + " " + p["killed"].get<std::string>();
  if (!p["signal"].is_null()) return who + " was killed by " + p["signal"].get<std::string>();
  if (!p["exit_code"].is_null() && p["exit_code"].get<int>() == 0) return {};
  std::string s = who + " exited with " +
                  (p["exit_code"].is_null() ? "no code" : std::to_string(p["exit_code"].get<int>()));
  named = true;
  if (!p["unsupported_verbs"].empty())
    s += " after calling " + p["unsupported_verbs"][0].get<std::string>() +
         ", which the model does not implement";
  else if (!p.value("refused_verbs", json::array()).empty())
    s += " after the device refused " + p["refused_verbs"][0].get<std::string>();
  else
    named = false;
  return s + " (its output: " + p["stderr"].get<std::string>() + ")";
}

}  // namespace

// The first failure a verb explains (its peer's exit is the consequence), else the first failure.
std::string program_failure(const json& results) {
  std::string first;
  for (const json& p : results.value("programs", json::array())) {
    bool named = false;
    std::string why = failure_of(p, named);
    if (named) return why;
    if (first.empty()) first = std::move(why);
  }
  return first;
}

}  // namespace rdmasim
