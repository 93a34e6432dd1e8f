#include "workloads/nvme/initiator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "workloads/nvme/block_pattern.hpp"
#include "workloads/nvme/rdma_transport.hpp"
#include "workloads/nvme/recovery.hpp"
#include "workloads/nvme/tcp_transport.hpp"
#include "workloads/nvme/wire/connect_data.hpp"
#include "workloads/socket_flow.hpp"
#include "workloads/workload.hpp"

namespace rdmasim::nvme {
namespace {

constexpr uint32_t kAdminEntries = 32;  // NVME_AQ_DEPTH
// The admin queue's CIDs: the set-up's commands (Connect, Property Set and
// Get, one at a time) and the Keep Alive, each a reserved tag of its own.
constexpr uint16_t kSetupCid = 0, kKeepAliveCid = 1;

bool writes_only(NvmeRw rw) { return rw == NvmeRw::write || rw == NvmeRw::randwrite; }
bool mixed(NvmeRw rw) { return rw == NvmeRw::randrw || rw == NvmeRw::readwrite; }
bool sequential(NvmeRw rw) { return rw == NvmeRw::read || rw == NvmeRw::write || rw == NvmeRw::readwrite; }

std::string seconds(Time t) { return fmt::format("{:g} s", static_cast<double>(t.count()) / 1e12); }

std::string queue_name(uint16_t qid) {
  return "queue " + std::to_string(qid) + (qid ? " (I/O)" : " (admin)");
}

}  // namespace

struct NvmeJob::Slot {
  bool busy = false, write = false;
  bool requeued = false;         // cancelled by error recovery: sent again once the controller is live
  uint32_t retries = 0;          // times it was sent again (nvme_req(rq)->retries)
  const char* what = "";         // the command, as the timeout's message names it
  const char* timeout_key = "";  // the key its timeout comes from, as the message names it
  Time timeout;
  uint64_t lba = 0;
  uint32_t blocks = 0;
  Time issued, posted, deadline;
  std::vector<uint32_t> gens;  // write: each block's generation; read: the least each may hold
};

struct NvmeJob::Queue {
  uint16_t qid = 0;
  uint32_t job = 0;
  uint32_t entries = 0;
  uint32_t data_slots = 0;
  uint64_t slot_bytes = 0;
  Process* p = nullptr;
  std::unique_ptr<HostQueue> t;  // its transport binding
  // Earlier associations' bindings: their coroutines may still hold them.
  std::vector<std::unique_ptr<HostQueue>> retired;
  std::vector<Slot> slots;  // by CID
  uint32_t inflight = 0;
  Rng rng;
  uint64_t next_seq = 0;  // sequential jobs: the next position
  uint64_t issued_bytes = 0;
  EventId timer;
  bool timer_set = false;
  std::string aborted;  // a command on it timed out while connecting: why it was stopped
};

NvmeJob::NvmeJob(WorkloadEnv& env, std::string name, const NvmeJobConfig& c, Host& initiator,
                 NvmeTarget& target, CmDirectory* cm, uint64_t seed)
    : env_(env), name_(std::move(name)), c_(c), host_(initiator), target_(target), cm_(cm), seed_(seed) {
  ns_ = target.ns(c.nsid);
  if (!ns_) throw std::logic_error("nvme: namespace " + std::to_string(c.nsid) + " not on the target");
  tcp_ = has_kernel_stack(host_);
  if (!tcp_) pd_ = host_.device().alloc_pd();
  auto admin = std::make_unique<Queue>();
  make_queue(*admin, 0, kAdminEntries, 1, kConnectDataLen);
  queues_.push_back(std::move(admin));
  for (uint32_t j = 0; j < c.numjobs; ++j) {
    auto q = std::make_unique<Queue>();
    q->job = j;
    q->rng = Rng::stream(seed, name_ + "/" + std::to_string(j));
    make_queue(*q, static_cast<uint16_t>(j + 1), c.queue_size, c.iodepth,
               std::max<uint64_t>(c.bs, kConnectDataLen));
    queues_.push_back(std::move(q));
  }
  r_.depths.resize(c.numjobs);
}

NvmeJob::~NvmeJob() = default;

void NvmeJob::make_queue(Queue& q, uint16_t qid, uint32_t entries, uint32_t data_slots, uint64_t slot_bytes) {
  q.qid = qid;
  q.entries = entries;
  q.data_slots = data_slots;
  q.slot_bytes = slot_bytes;
  q.slots.resize(entries);
  q.p = &host_.spawn(qid ? name_ + "/" + std::to_string(q.job) : name_ + "/admin");
  bind(q);
}

void NvmeJob::bind(Queue& q) {
  if (q.t) q.retired.push_back(std::move(q.t));
  HostQueue* previous = q.retired.empty() ? nullptr : q.retired.back().get();
  const HostQueueSpec spec{name_, q.qid, q.entries, q.data_slots, q.slot_bytes, q.p, previous};
  if (tcp_)
    q.t = make_tcp_host_queue(env_, spec, host_, target_, c_, seed_);
  else
    q.t = make_rdma_host_queue(env_, spec, host_, target_, cm_, *pd_, seed_);
  q.aborted.clear();
}

void NvmeJob::start() {
  started_ = true;
  running_ = 1;
  Simulator::Scope as(env_.sim, host_.context());
  controller();
}

std::string NvmeJob::controller_name() const {
  return "controller " + std::to_string(cntlid_) + " of " + target_.host().name();
}

// ---- the command timer

void NvmeJob::arm(Queue& q, Time deadline) {
  if (q.timer_set) return;  // set for an earlier deadline
  q.timer_set = true;
  Simulator::Scope as(env_.sim, host_.context());
  const uint32_t association = association_;
  q.timer = env_.sim.at(deadline, [this, &q, association] { on_timer(q, association); });
}

void NvmeJob::disarm(Queue& q) {
  if (!q.timer_set) return;
  q.timer_set = false;
  env_.sim.cancel(q.timer);
}

// blk_mq_timeout_work: the earliest command in flight has run out of time,
// or the timer is set again for it.
void NvmeJob::on_timer(Queue& q, uint32_t association) {
  q.timer_set = false;
  if (association != association_) return;
  Slot* first = nullptr;
  for (Slot& s : q.slots)
    if (s.busy && (!first || s.deadline < first->deadline)) first = &s;
  if (!first) return;
  if (first->deadline > env_.sim.now()) return arm(q, first->deadline);
  ++r_.timeouts;
  const auto cid = static_cast<uint32_t>(first - q.slots.data());
  const std::string why = "command " + std::to_string(cid) + " (" + first->what + ") timed out after " +
                          seconds(first->timeout) + " (" + first->timeout_key + ")";
  if (state_ == State::live) {
    // nvme_rdma_timeout on a live controller: error recovery.
    error_recovery(queue_name(q.qid) + ": " + why);
    return;
  }
  // While connecting the command completes at once, aborted by the host
  // (nvme_rdma_complete_timed_out stops the queue): the connect fails.
  q.aborted = why + " and was aborted by the host";
  q.t->stop();
}

void NvmeJob::start_timer(Queue& q, Slot& s, const char* what) {
  s.busy = true;
  s.what = what;
  const bool keep_alive = q.qid == 0 && &s == &q.slots[kKeepAliveCid];
  s.timeout = keep_alive ? c_.kato : command_timeout(q.qid, c_);
  s.timeout_key = keep_alive ? "kato" : q.qid ? "io_timeout" : "admin_timeout";
  s.deadline = env_.sim.now() + s.timeout;
  arm(q, s.deadline);
}

// Reaps `t` until the completion of `cid` is among `done`; false: the queue failed first.
Task NvmeJob::await_completion(HostQueue& t, uint16_t cid, std::vector<Completion>& done, bool& ok) {
  auto mine = [&] {
    return std::any_of(done.begin(), done.end(), [cid](const Completion& c) { return c.cid == cid; });
  };
  while (ok && !mine()) {
    uint64_t errors = 0;
    bool failed = false;
    co_await t.reap(done, errors, failed);
    ok = !failed;
  }
}

// ---- connecting

Task NvmeJob::admin(Queue& q, Command cmd, Completion& out, std::span<const std::byte> data) {
  cmd.cid = kSetupCid;
  if (!data.empty()) {
    auto slot = host_.memory().view(q.t->data(0), data.size());
    std::copy(data.begin(), data.end(), slot.begin());
  }
  Slot& s = q.slots[kSetupCid];
  start_timer(q, s,
              cmd.fctype == FabricsType::connect        ? "Connect"
              : cmd.fctype == FabricsType::property_set ? "Property Set"
                                                        : "Property Get");
  bool ok = false;
  co_await q.t->submit(cmd, static_cast<uint32_t>(data.size()), !data.empty(), ok);
  std::vector<Completion> done;
  co_await await_completion(*q.t, kSetupCid, done, ok);
  s.busy = false;
  disarm(q);
  if (!ok) {
    queue_failed(q, q.aborted.empty() ? q.t->lost() : q.aborted);
    co_return;
  }
  out = *std::find_if(done.begin(), done.end(), [](const Completion& c) { return c.cid == kSetupCid; });
  if (!out.ok())
    queue_failed(q, "an admin or fabrics command completed with an error (status code type " +
                        std::to_string(out.sct) + ", status code " + std::to_string(out.sc) + ")");
}

Task NvmeJob::setup(bool& ok) {
  attempt_error_.clear();
  Queue& aq = *queues_[0];
  ConnectData cd;
  for (size_t i = 0; i < 16; ++i)
    cd.hostid[i] = static_cast<uint8_t>(Rng::stream(seed_, host_.name()).next() >> (i % 8 * 8));
  cd.subnqn = "nqn.2014-08.org.nvmexpress:rdmasim:" + target_.host().name();
  cd.hostnqn = "nqn.2014-08.org.nvmexpress:uuid:rdmasim-" + host_.name();
  std::array<std::byte, kConnectDataLen> cdb{};
  Completion cqe;
  std::string why;
  co_await aq.t->connect(0, ok, why);
  if (!ok) queue_failed(aq, why);
  if (attempt_error_.empty()) {
    cd.cntlid = kDynamicController;
    cd.emit(cdb);
    // The admin queue's Connect carries the keep-alive timeout in ms
    // (nvmf_connect_cmd_prep); an I/O queue's carries none.
    const auto kato_ms = static_cast<uint32_t>(c_.kato.count() / Time::ms(1).count());
    co_await admin(aq, Command::connect(0, 0, static_cast<uint16_t>(aq.entries - 1), kato_ms, {}), cqe, cdb);
    if (attempt_error_.empty()) cntlid_ = static_cast<uint16_t>(cqe.dw0);
  }
  // Enable the controller (CC.EN with 64-byte SQEs and 16-byte CQEs), then see it ready.
  if (attempt_error_.empty()) co_await admin(aq, Command::property_set(0, kPropCc, 0x00460001, false), cqe);
  if (attempt_error_.empty()) co_await admin(aq, Command::property_get(0, kPropCsts, false), cqe);
  for (size_t j = 1; j < queues_.size() && attempt_error_.empty(); ++j) {
    Queue& q = *queues_[j];
    co_await q.t->connect(cntlid_, ok, why);
    if (!ok) queue_failed(q, why);
    if (!attempt_error_.empty()) break;
    cd.cntlid = cntlid_;
    cd.emit(cdb);
    co_await admin(q, Command::connect(0, q.qid, static_cast<uint16_t>(q.entries - 1), 0, {}), cqe, cdb);
  }
  ok = attempt_error_.empty();
}

Task NvmeJob::controller() {
  co_await sleep_until(env_.sim, c_.start_time);
  bool ok = false;
  co_await setup(ok);
  io_start_ = env_.sim.now();
  r_.measure_start = io_start_ + c_.ramp_time;
  if (ok) {
    state_ = State::live;
    start_io();
  } else {
    // The first connect failed: so does nvme connect (nvme_rdma_create_ctrl).
    state_ = State::deleting;
    failed_ = true;
    r_.error = attempt_error_;
  }
  if (--running_ == 0) stopped();
}

void NvmeJob::start_io() {
  Simulator::Scope as(env_.sim, host_.context());
  schedule_keep_alive(env_.sim.now());  // nvme_start_ctrl: nvme_start_keep_alive
  for (size_t j = 1; j < queues_.size(); ++j) {
    ++running_;
    io(*queues_[j]);
  }
}

// ---- error recovery

void NvmeJob::queue_failed(const Queue& q, const std::string& why) {
  const std::string what = queue_name(q.qid) + ": " + (why.empty() ? "could not connect" : why);
  if (state_ == State::live) return error_recovery(what);
  if (attempt_error_.empty()) attempt_error_ = what;
}

void NvmeJob::error_recovery(const std::string& why) {
  if (state_ != State::live) return;  // recovering already
  state_ = State::resetting;
  r_.recovered = true;
  recovery_why_ = why;
  teardown();
  start_failfast();
  ++running_;
  Simulator::Scope as(env_.sim, host_.context());
  recover();
}

void NvmeJob::teardown() {
  ++association_;
  stop_keep_alive();
  queues_[0]->slots[kKeepAliveCid].busy = false;  // its coroutine sees the association gone
  for (auto& q : queues_) {
    disarm(*q);
    q->t->stop();
  }
}

// nvme_rdma_error_recovery_work, nvme_rdma_reconnect_ctrl_work and
// nvme_rdma_reconnect_or_remove: the queues are down (the commands in
// flight are cancelled as each queue's job sees its queue stopped); a
// reconnect after reconnect_delay, again after each failure while
// nvmf_should_reconnect allows, else the controller is removed.
Task NvmeJob::recover() {
  uint64_t attempts = 0;
  while (should_reconnect(attempts, c_)) {
    co_await sleep_until(env_.sim, env_.sim.now() + c_.reconnect_delay);
    ++attempts;
    state_ = State::connecting;
    for (auto& q : queues_) bind(*q);
    bool ok = false;
    co_await setup(ok);
    if (ok) break;
    teardown();
  }
  if (attempt_error_.empty() && attempts > 0) {
    state_ = State::live;
    ++r_.reconnects;
    stop_failfast();
    start_io();
  } else {
    remove("removed after " + std::to_string(attempts) + " failed reconnect attempt(s) (ctrl_loss_tmo " +
           seconds(c_.ctrl_loss_tmo) + ", reconnect_delay " + seconds(c_.reconnect_delay) + ")" +
           (attempts ? "; the last: " + attempt_error_ : ""));
  }
  if (--running_ == 0) stopped();
}

void NvmeJob::remove(const std::string& why) {
  state_ = State::deleting;
  failed_ = true;
  stop_failfast();
  if (r_.error.empty())
    r_.error = controller_name() + ": " + why + "; error recovery began after " + recovery_why_;
  for (auto& q : queues_)
    for (Slot& s : q->slots)
      if (s.requeued) {
        s.requeued = false;
        complete(*q, s, host_aborted(static_cast<uint16_t>(&s - q->slots.data())));
      }
}

void NvmeJob::cancel(Queue& q) {
  for (Slot& s : q.slots) {
    if (!s.busy) continue;
    const auto cid = static_cast<uint16_t>(&s - q.slots.data());
    if (failfast_expired_) {
      complete(q, s, host_path_error(cid));
      continue;
    }
    if (state_ == State::deleting ||
        decide_disposition(host_aborted(cid), s.retries, c_.max_retries) == Disposition::complete) {
      complete(q, s, host_aborted(cid));
      continue;
    }
    s.busy = false;
    --q.inflight;
    s.requeued = true;
    ++s.retries;
  }
}

// ---- keep-alive

// nvme_queue_keep_alive_work: the next Keep Alive a period after `from`
// (the last one's start: ka_last_check_time), while the controller is live.
void NvmeJob::schedule_keep_alive(Time from) {
  if (c_.kato.count() == 0 || state_ != State::live || r_.finished) return;
  Simulator::Scope as(env_.sim, host_.context());
  const uint32_t association = association_;
  keep_alive_set_ = true;
  keep_alive_timer_ = env_.sim.at(from + keep_alive_period(c_), [this, association] {
    keep_alive_set_ = false;
    if (association == association_ && state_ == State::live) keep_alive(association);
  });
}

void NvmeJob::stop_keep_alive() {
  if (!keep_alive_set_) return;
  keep_alive_set_ = false;
  env_.sim.cancel(keep_alive_timer_);
}

// nvme_keep_alive_work: a Keep Alive on the admin queue, timed out after
// kato (then the queue's timer starts error recovery); its completion
// queues the next (nvme_keep_alive_finish).
Task NvmeJob::keep_alive(uint32_t association) {
  Queue& q = *queues_[0];
  HostQueue& t = *q.t;
  const Time started = env_.sim.now();
  Slot& s = q.slots[kKeepAliveCid];
  start_timer(q, s, "Keep Alive");
  bool ok = false;
  co_await t.submit(Command::keep_alive(kKeepAliveCid), 0, false, ok);
  std::vector<Completion> done;
  co_await await_completion(t, kKeepAliveCid, done, ok);
  if (association != association_) co_return;  // torn down meanwhile: that teardown's concern
  s.busy = false;
  disarm(q);
  if (!ok) co_return queue_failed(q, t.lost());
  schedule_keep_alive(started);
}

// ---- fast I/O failure

// nvme_start_failfast_work: fast_io_fail_tmo after the controller left
// live, what waits for the reconnect fails (nvme_failfast_work).
void NvmeJob::start_failfast() {
  if (!fails_fast(c_)) return;
  Simulator::Scope as(env_.sim, host_.context());
  failfast_set_ = true;
  failfast_timer_ = env_.sim.after(c_.fast_io_fail_tmo, [this] {
    failfast_set_ = false;
    failfast_expired_ = true;
    for (auto& q : queues_)
      for (Slot& s : q->slots)
        if (s.requeued) {
          s.requeued = false;
          complete(*q, s, host_path_error(static_cast<uint16_t>(&s - q->slots.data())));
        }
  });
}

// nvme_stop_failfast_work: live again (or removed).
void NvmeJob::stop_failfast() {
  failfast_expired_ = false;
  if (!failfast_set_) return;
  failfast_set_ = false;
  env_.sim.cancel(failfast_timer_);
}

// ---- I/O

void NvmeJob::load(Queue& q, uint32_t cid) {
  Slot& s = q.slots[cid];
  if (!s.write) return;
  const uint32_t bsz = ns_->cfg.block_size;
  const uint64_t data = q.t->data(cid);
  for (uint32_t i = 0; i < s.blocks; ++i)
    fill_block(host_.memory().view(data + uint64_t{i} * bsz, bsz), {s.lba + i, s.gens[i], c_.nsid});
}

Task NvmeJob::post(Queue& q, uint32_t cid) {
  Slot& s = q.slots[cid];
  load(q, cid);
  const Command cmd = Command::io(s.write ? Opcode::write : Opcode::read, static_cast<uint16_t>(cid), c_.nsid,
                                  s.lba, s.blocks, Sgl{});
  s.requeued = false;
  ++q.inflight;
  start_timer(q, s, s.write ? "Write" : "Read");
  bool ok = false;
  co_await q.t->submit(cmd, static_cast<uint32_t>(c_.bs), s.write, ok);
  s.posted = env_.sim.now();
  if (!ok) queue_failed(q, q.t->lost());
}

Task NvmeJob::io(Queue& q) {
  const uint32_t bsz = ns_->cfg.block_size;
  const uint32_t blocks = static_cast<uint32_t>(c_.bs / bsz);
  const uint64_t region = c_.size ? c_.size : ns_->cfg.size - c_.offset;
  const uint64_t positions = std::max<uint64_t>(1, region / c_.bs);
  const uint64_t io_bytes = region;  // fio's io_size: the region's size unless runtime ends it first
  const uint64_t lba0 = c_.offset / bsz;
  const bool timed = c_.runtime.count() > 0;
  const Time end_at = io_start_ + c_.ramp_time + c_.runtime;
  const uint32_t association = association_;
  auto live = [&] { return state_ == State::live && association == association_; };
  // What error recovery cancelled goes first (nvme_retry_req's requeue).
  for (uint32_t cid = 0; cid < q.entries && live(); ++cid)
    if (q.slots[cid].requeued) co_await post(q, cid);
  std::vector<Completion> done;
  while (true) {
    while (q.inflight < c_.iodepth && live() && q.issued_bytes < io_bytes &&
           !(timed && env_.sim.now() >= end_at)) {
      uint32_t cid = 0;
      while (q.slots[cid].busy || q.slots[cid].requeued) ++cid;
      Slot& s = q.slots[cid];
      s.write = writes_only(c_.rw) || (mixed(c_.rw) && q.rng.between(1, 100) > c_.rwmixread);
      const uint64_t k = sequential(c_.rw) ? q.next_seq++ % positions : q.rng.between(0, positions - 1);
      s.lba = lba0 + k * blocks;
      s.blocks = blocks;
      s.retries = 0;
      s.gens.assign(blocks, 0);
      for (uint32_t i = 0; i < blocks; ++i)
        s.gens[i] = s.write ? ++ns_->issued[s.lba + i] : Namespace::get(ns_->committed, s.lba + i);
      s.issued = env_.sim.now();
      // fio's io_u_mark_depth and io_u_mark_submit: each I/O is handed to
      // the transport alone, with the job's I/Os outstanding, itself included.
      if (s.issued >= r_.measure_start) r_.depths[q.job].submitted(q.inflight + 1);
      co_await post(q, cid);
      q.issued_bytes += c_.bs;
    }
    if (q.inflight == 0 || !live()) break;
    done.clear();
    uint64_t errors = 0;
    bool failed = false;
    co_await q.t->reap(done, errors, failed);
    r_.errors += errors;
    uint32_t reaped = 0;
    for (const Completion& cqe : done)
      if (cqe.cid < q.entries && q.slots[cqe.cid].busy) {
        complete(q, q.slots[cqe.cid], cqe);
        ++reaped;
      }
    // fio's io_u_mark_complete: the I/Os each reap returned. fio's
    // io_getevents waits for one at least (iodepth_batch_complete_min 1);
    // the transport's reap also returns for a capsule's own completion.
    if (env_.sim.now() >= r_.measure_start && reaped > 0) r_.depths[q.job].reaped(reaped);
    if (cpu_window_ == CpuWindow::before && env_.sim.now() >= r_.measure_start) cpu_mark(true);
    if (failed) queue_failed(q, q.t->lost());
  }
  if (!live()) cancel(q);  // the queue is down: nothing in flight will complete
  disarm(q);
  if (--running_ == 0) stopped();
}

void NvmeJob::complete(Queue& q, Slot& s, const Completion& cqe) {
  if (s.busy) --q.inflight;
  s.busy = false;
  const Time now = env_.sim.now();
  const uint32_t bsz = ns_->cfg.block_size;
  const uint32_t cid = static_cast<uint32_t>(&s - q.slots.data());
  if (!cqe.ok()) {
    ++r_.errors;
  } else if (s.write) {
    for (uint32_t i = 0; i < s.blocks; ++i) {
      uint32_t& c = ns_->committed[s.lba + i];
      c = std::max(c, s.gens[i]);
    }
  } else {
    const uint64_t data = q.t->data(cid);
    for (uint32_t i = 0; i < s.blocks; ++i) {
      const uint64_t lba = s.lba + i;
      const auto st = read_block(host_.memory().view(data + uint64_t{i} * bsz, bsz));
      if (!st || st->lba != lba || st->nsid != c_.nsid || st->generation < s.gens[i] ||
          st->generation > Namespace::get(ns_->issued, lba))
        ++r_.bad_blocks;
    }
  }
  if (recording_)
    records_.push_back({q.job, s.write, s.lba, s.blocks, s.issued.count(), now.count(), cqe.status_field()});
  if (now < r_.measure_start || !cqe.ok()) return;
  if (cpu_window_ == CpuWindow::open) ++r_.cpu_ios;
  DirStats& d = s.write ? r_.write : r_.read;
  ++d.ios;
  d.bytes += c_.bs;
  d.slat.push_back((s.posted - s.issued).count());
  d.clat.push_back((now - s.posted).count());
  d.lat.push_back((now - s.issued).count());
  d.job.push_back(q.job);
  d.done.push_back(now.count());
  r_.measure_end = std::max(r_.measure_end, now);
}

namespace {

// What a host's cores have spent so far.
CpuSpent cpu_spent(const Cpu& cpu) {
  CpuSpent s;
  for (int c = 0; c < cpu.cores(); ++c) {
    const CpuTimes t = cpu.times(c);
    for (size_t u = 0; u < kCpuUses; ++u) {
      if (static_cast<CpuUse>(u) == CpuUse::poll)
        s.poll += t[u];
      else if (static_cast<CpuUse>(u) != CpuUse::idle)
        s.work += t[u];
    }
  }
  return s;
}

CpuSpent since(const Cpu& cpu, const CpuSpent& from) {
  const CpuSpent now = cpu_spent(cpu);
  return {now.work - from.work, now.poll - from.poll};
}

}  // namespace

// The job is over and the run simply stops here: no keep-alive after it
// on either side (the host does not disconnect: no `nvme disconnect`).
void NvmeJob::stopped() {
  r_.finished = true;
  stop_keep_alive();
  disarm(*queues_[0]);
  target_.stop_keep_alive(cntlid_);
  cpu_mark(false);
}

void NvmeJob::cpu_mark(bool open) {
  const Time now = env_.sim.now();
  if (open) {
    cpu_window_ = CpuWindow::open;
    cpu_from_ = now;
    initiator_from_ = cpu_spent(host_.cpu());
    target_from_ = cpu_spent(target_.host().cpu());
  } else if (cpu_window_ == CpuWindow::open) {
    cpu_window_ = CpuWindow::closed;
    cpu_to_now(r_);
  }
}

void NvmeJob::cpu_to_now(NvmeResult& r) const {
  r.cpu_window = env_.sim.now() - cpu_from_;
  r.initiator_cpu = since(host_.cpu(), initiator_from_);
  r.target_cpu = since(target_.host().cpu(), target_from_);
}

NvmeResult NvmeJob::result() const {
  NvmeResult r = r_;
  r.bad_blocks += ns_->bad_blocks;
  r.data_verified = r.bad_blocks == 0 && !failed_ && r.errors == 0;
  r.finished = finished();
  if (cpu_window_ == CpuWindow::open) cpu_to_now(r);  // cut short (stop): the window ends now
  if (!tcp_ && target_.config().cpu == TargetCpu::poll)
    r.target_polling_cores = std::max<uint32_t>(1, target_.config().cores);
  return r;
}

}  // namespace rdmasim::nvme
