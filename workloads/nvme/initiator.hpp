// The host side of an nvme workload, as fio with the io_uring or libaio
// engine drives Linux's NVMe over Fabrics host: one controller on the target
// (the admin queue: Connect, then CC.EN set and CSTS.RDY read, NVMe-oF 1.1,
// 3.5), one I/O queue per job (numjobs), then a Connect on each. Each job
// keeps `iodepth` commands in flight: a command capsule (with the write's
// data in the capsule when it fits the target's in-capsule size), the
// data's transfer and the completion capsule back. How a queue connects and
// how capsules and data travel is its transport binding, a HostQueue the
// host's fabric chooses: rdma_transport.hpp (nvme-rdma: RC QPs the RDMA CM
// connects, SENDs, the target's RDMA READ and WRITE through keyed SGLs) or
// tcp_transport.hpp (nvme-tcp: a kernel TCP connection to port 4420, PDUs,
// R2T and H2CData, C2HData).
//
// Error recovery, as nvme-core and the fabrics drivers do it (recovery.hpp):
// a command past its timeout, or a queue's connection failing, has the live
// controller tear its queues down, cancel what is in flight (sent again
// later, up to max_retries times), wait reconnect_delay and connect again
// as the first time (a new association: a new controller ID); after
// ctrl_loss_tmo / reconnect_delay failed attempts (never, with -1) it is
// removed and the job fails; with fast_io_fail_tmo, the I/O waiting for the
// reconnect fails that long into the recovery. The first connect is not
// retried (nvme connect fails). While live, a Keep Alive on the admin queue
// every kato / 2 (recovery.hpp), whose failure or timeout is error recovery
// too; the job's end stops it (the run stops: no nvme disconnect).
//
// Statistics in fio's terms: slat (issuing a command: building it and
// handing it to the transport), clat (from then until the host program has
// the completion), lat (both); I/O completing before ramp_time is not counted.
// CPU per I/O: what each host's cores spent from the first completion after
// ramp_time to the job's end, over the I/Os completed meanwhile, split into
// work and polling (a spinning poller's, a job's spin on its CQ).
// Data: every block written carries its LBA and a generation (block_pattern.hpp);
// every block read must carry one its LBA could hold then.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/random.hpp"
#include "core/task.hpp"
#include "nodes/host/host.hpp"
#include "topologies/storage_config.hpp"
#include "workloads/nvme/fio_stats.hpp"
#include "workloads/nvme/target.hpp"
#include "workloads/nvme/wire/completion.hpp"

namespace rdmasim {
struct WorkloadEnv;
}

namespace rdmasim::nvme {

// One queue's transport binding, host side.
class HostQueue {
 public:
  virtual ~HostQueue() = default;
  // Connects the queue to the target (for an I/O queue, of controller
  // `cntlid`); ok false: refused or failed, and `why` says what happened.
  virtual Task connect(uint16_t cntlid, bool& ok, std::string& why) = 0;
  // Host memory of data slot `i`: the command of CID i keeps its data there.
  virtual uint64_t data(uint32_t slot) const = 0;
  // Sends `cmd` (the binding writes its SGL) whose data, `len` bytes in
  // slot cmd.cid, goes to the controller (`to_controller`: a write's, a
  // Connect's) or comes from it. ok false: it could not be sent.
  virtual Task submit(Command cmd, uint32_t len, bool to_controller, bool& ok) = 0;
  // Waits for commands to complete and appends each whose exchange is over
  // to `done`; `errors` counts what went wrong (a failed transfer, a
  // completion for no command); `failed`: the connection is gone, nothing in
  // flight will complete.
  virtual Task reap(std::vector<Completion>& done, uint64_t& errors, bool& failed) = 0;
  // Stops the queue (nvme_rdma_stop_queue, nvme_tcp_stop_queue): nothing in
  // flight will complete, and a reap waiting returns `failed`.
  virtual void stop() = 0;
  // Why the queue failed when its reap said `failed` and stop() was not called.
  virtual std::string lost() const = 0;
};

// What a binding needs to make a queue.
struct HostQueueSpec {
  std::string name;  // the job's
  uint16_t qid = 0;
  uint32_t entries = 0;
  uint32_t data_slots = 0;
  uint64_t slot_bytes = 0;
  Process* p = nullptr;  // the job's process on the host
  // The queue's binding of the controller's previous association, whose
  // buffers a reconnect reuses (as the driver keeps its tag set); null: new ones.
  HostQueue* previous = nullptr;
};

// One direction's numbers (fio's read or write object).
struct DirStats {
  uint64_t ios = 0, bytes = 0;
  std::vector<int64_t> slat, clat, lat;  // ps, one per I/O
  std::vector<uint32_t> job;             // the job (of numjobs) of each I/O
  std::vector<int64_t> done;             // ps: when each I/O completed (fio's bandwidth and IOPS samples)
};

// CPU time a host spent: working (every category but poll and idle) and polling.
struct CpuSpent {
  Time work, poll;
};

struct NvmeResult {
  DirStats read, write;
  std::vector<DepthCounts> depths;  // each job's submissions and reaps from the counted window's start
  Time measure_start, measure_end;  // the counted window: ramp end to the last counted completion
  // Commands that completed with an error status (the target's, or aborted
  // by the host and not sent again), completions for no command, PDUs in error.
  uint64_t errors = 0;
  uint64_t bad_blocks = 0;  // blocks read that held no stamp their LBA could hold
  bool data_verified = true;
  bool finished = false;
  std::string error;        // why the job could not run (a queue that did not connect); empty: none
  uint64_t timeouts = 0;    // commands that did not complete within io_timeout or admin_timeout
  uint64_t reconnects = 0;  // associations made again after error recovery
  bool recovered = false;   // error recovery ran (started by a timeout, a failed connection or a DREQ)
  // The CPU window: the whole hosts' CPU in it and the I/Os that completed in it.
  Time cpu_window;
  uint64_t cpu_ios = 0;
  CpuSpent initiator_cpu, target_cpu;
  uint32_t target_polling_cores = 0;  // cores the target's pollers keep spinning (RDMA, cpu: poll)
};

class NvmeJob {
 public:
  NvmeJob(WorkloadEnv& env, std::string name, const NvmeJobConfig& c, Host& initiator, NvmeTarget& target,
          CmDirectory* cm, uint64_t seed);
  ~NvmeJob();
  void start();
  bool finished() const { return running_ == 0 && started_; }
  NvmeResult result() const;
  const NvmeJobConfig& config() const { return c_; }
  const std::string& name() const { return name_; }

  // One I/O as nvme.csv lists it.
  struct IoRecord {
    uint32_t job;
    bool write;
    uint64_t lba;
    uint32_t blocks;
    int64_t submit_ps, complete_ps;
    uint16_t status;
  };
  // Keeps a record of every I/O from now on (nvme.csv).
  void record_ios() { recording_ = true; }
  const std::vector<IoRecord>& records() const { return records_; }

 private:
  struct Queue;
  struct Slot;
  // nvme_ctrl_state, as far as the job needs it.
  enum class State { connecting, live, resetting, deleting };
  Task controller();
  // nvme_rdma_setup_ctrl: the admin queue (Connect, CC.EN, CSTS.RDY), then
  // each I/O queue's connection and Connect; ok false: attempt_error_ says why.
  Task setup(bool& ok);
  Task admin(Queue& q, Command cmd, Completion& out, std::span<const std::byte> data = {});
  // Slot s holds command `what` from now: its deadline set, the queue's timer armed.
  void start_timer(Queue& q, Slot& s, const char* what);
  Task await_completion(HostQueue& t, uint16_t cid, std::vector<Completion>& done, bool& ok);
  // Keep-alive while live: the next Keep Alive a period after `from`; stopped by a teardown.
  void schedule_keep_alive(Time from);
  void stop_keep_alive();
  Task keep_alive(uint32_t association);
  // fast_io_fail_tmo's timer, from error recovery until live again (or removed).
  void start_failfast();
  void stop_failfast();
  Task io(Queue& q);
  Task post(Queue& q, uint32_t cid);  // sends slot cid's I/O (again, after a reconnect)
  void make_queue(Queue& q, uint16_t qid, uint32_t entries, uint32_t data_slots, uint64_t slot_bytes);
  void bind(Queue& q);                // a new transport binding for the queue (its previous one's buffers)
  void load(Queue& q, uint32_t cid);  // a write's data into slot cid's buffer
  void start_io();
  void complete(Queue& q, Slot& s, const Completion& cqe);
  // Every command in flight on q cancelled by the teardown: sent again after
  // the reconnect, or completed with an error (nvme_decide_disposition).
  void cancel(Queue& q);
  // Opens the CPU window (at the first completion after ramp_time) or closes it (the job's end).
  void cpu_mark(bool open);
  void cpu_to_now(NvmeResult& r) const;  // the window's CPU from its opening to now
  void stopped();                        // the job's last queue (or its set-up) is over
  // Queue q failed: while the controller connects, the attempt fails (the
  // first reason is kept); once it is live, error recovery starts.
  void queue_failed(const Queue& q, const std::string& why);
  // nvme_rdma_error_recovery: the live controller resets and reconnects.
  void error_recovery(const std::string& why);
  Task recover();
  void teardown();  // every queue stopped
  // The controller gives up: the job fails, what waits to be sent again too.
  void remove(const std::string& why);
  // The command timer (blk-mq's request timeout): one per queue, set for
  // the earliest deadline of the commands in flight.
  void arm(Queue& q, Time deadline);
  void disarm(Queue& q);
  void on_timer(Queue& q, uint32_t association);
  std::string controller_name() const;

  WorkloadEnv& env_;
  std::string name_;
  NvmeJobConfig c_;
  Host& host_;
  NvmeTarget& target_;
  CmDirectory* cm_;
  Namespace* ns_;
  uint64_t seed_;
  std::vector<std::unique_ptr<Queue>> queues_;  // [0]: admin; then one a job
  bool tcp_ = false;                            // NVMe/TCP (the host has the kernel stack), else RDMA
  verbs::ProtectionDomain* pd_ = nullptr;       // the RDMA binding's
  uint16_t cntlid_ = 0;
  Time io_start_;
  int running_ = 0;
  bool started_ = false;
  bool failed_ = false;
  State state_ = State::connecting;
  uint32_t association_ = 0;   // counts the controller's associations (the first connect's is 0)
  std::string attempt_error_;  // why the current connect attempt failed
  std::string recovery_why_;   // what started error recovery
  EventId keep_alive_timer_, failfast_timer_;
  bool keep_alive_set_ = false, failfast_set_ = false;
  bool failfast_expired_ = false;  // NVME_CTRL_FAILFAST_EXPIRED: what waits for the reconnect fails
  NvmeResult r_;
  enum class CpuWindow { before, open, closed } cpu_window_ = CpuWindow::before;
  Time cpu_from_;
  CpuSpent initiator_from_, target_from_;
  bool recording_ = false;
  std::vector<IoRecord> records_;
};

}  // namespace rdmasim::nvme
