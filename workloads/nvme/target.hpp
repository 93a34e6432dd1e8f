// An NVMe over Fabrics target on a host: the controller's side of every
// queue a host connects, whatever carries it. It takes command capsules,
// checks them, has a command's host-to-controller data brought (unless it
// came in the capsule), serves the I/O with its namespaces' SSD model, sends
// a read's data and answers with a completion. How capsules arrive and how
// data and completions move is the transport binding's (NVMe-oF 1.1, 7), a
// TargetPort chosen by the host's fabric:
//
//   RDMA (rdma_transport.hpp): each queue an RC QP the RDMA CM connects
//     (port 4420); capsules are SENDs, data moves by RDMA READ and WRITE
//     through the host's keyed SGL; `cores` pollers busy-poll their
//     completion queues (SPDK-style) or handlers are woken by interrupts
//     (the kernel target).
//   TCP (tcp_transport.hpp): NVMe/TCP, each queue a kernel TCP connection
//     to port 4420; PDUs carry capsules, R2T and H2CData bring a write's
//     data, C2HData a read's; the socket calls and copies are charged to the
//     target's queue threads (nvmet-tcp's io_work).
//
// Each command costs `io_cost` of the target's CPU as well.
//
// Keep-alive, as nvmet does it: a controller whose admin Connect gave a
// KATO checks every KATO (rounded up to whole seconds) whether any command
// came on its queues since the last check (traffic based: nvmet's
// reset_tbkas); when none did, it is removed (nvmet_keep_alive_timer,
// nvmet_ctrl_fatal_error): each of its queues disconnected by the binding
// (RDMA: a CM DREQ; TCP: a FIN).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/random.hpp"
#include "nodes/host/host.hpp"
#include "topologies/storage_config.hpp"
#include "workloads/nvme/ssd.hpp"
#include "workloads/nvme/wire/command.hpp"
#include "workloads/nvme/wire/completion.hpp"

namespace rdmasim {
struct WorkloadEnv;
}

namespace rdmasim::nvme {

class CmDirectory;

inline constexpr uint16_t kNvmePort = 4420;  // IANA: NVMe over Fabrics (RDMA service port and NVMe/TCP)

// A namespace's blocks: the generation each holds, and what hosts have
// asked for, against which reads are checked.
struct Namespace {
  NamespaceConfig cfg;
  uint64_t blocks = 0;
  std::unordered_map<uint64_t, uint32_t> stored;     // generation the target holds per LBA (absent: 0)
  std::unordered_map<uint64_t, uint32_t> issued;     // highest generation a write of it was issued with
  std::unordered_map<uint64_t, uint32_t> committed;  // highest generation whose write completed
  uint64_t bad_blocks = 0;  // blocks a write brought that did not carry the stamp its command named
  static uint32_t get(const std::unordered_map<uint64_t, uint32_t>& m, uint64_t lba) {
    auto it = m.find(lba);
    return it == m.end() ? 0 : it->second;
  }
};

// A command the controller holds, by CID.
struct TargetCmd {
  Command c;
  Namespace* ns = nullptr;
  uint64_t buf = 0, cap = 0;          // buffer for the command's data
  verbs::MemoryRegion* mr = nullptr;  // the buffer's registration (RDMA)
  uint64_t len = 0;                   // bytes of data
  uint64_t arrived = 0;               // bytes of host-to-controller data in so far (TCP)
  bool busy = false;
};

// What a binding keeps of a queue beyond the controller's part.
struct PortQueue {
  virtual ~PortQueue() = default;
};

// One queue (admin or I/O) of a controller.
struct TargetQueue {
  uint32_t index = 0;
  uint16_t qid = 0, cntlid = 0;
  uint32_t entries = 0;  // HSQSIZE + 1
  uint16_t sqhd = 0;
  bool sized = true;  // false: qid and entries come with the Connect command (NVMe/TCP)
  bool gone = false;  // disconnected, by the host or by the controller's removal
  Host* from = nullptr;
  std::vector<TargetCmd> cmds;  // by CID (the host's CIDs are below `entries`)
  std::unique_ptr<PortQueue> port;
};

class NvmeTarget;

// The transport binding of a target: how the controller's answers travel.
class TargetPort {
 public:
  virtual ~TargetPort() = default;
  // Brings a command's host-to-controller data that is not in its capsule
  // (c.len bytes) into c.buf, then calls NvmeTarget::data_arrived (or
  // responds with an error).
  virtual void fetch(TargetQueue& q, TargetCmd& c) = 0;
  // Sends a read's data (c.len bytes at c.buf) to the host; false: it cannot.
  virtual bool send_data(TargetQueue& q, TargetCmd& c) = 0;
  // Sends the completion (its 16 bytes at `cqe`, which the call may not keep).
  virtual void send_completion(TargetQueue& q, TargetCmd& c, std::span<const std::byte> cqe) = 0;
  // CPU the SSD's completion of a command asks for, run at the queue's next turn.
  virtual void owe(TargetQueue& q, Time t) = 0;
  // Whether the binding moves the data an SGL of a command describes (RDMA:
  // a keyed SGL; TCP: a transport SGL), rather than the capsule carrying it.
  virtual bool moves(const Sgl& sgl) const = 0;
  // Buffer memory for a command's data: what a binding must do to it (RDMA registers it).
  virtual void prepare_buffer(TargetCmd&) {}
  // The controller of the queue was removed: the binding disconnects it.
  virtual void disconnect(TargetQueue& q) = 0;
};

class NvmeTarget {
 public:
  NvmeTarget(WorkloadEnv& env, Host& h, const StorageTargetConfig& c, CmDirectory* cm, uint64_t seed);
  ~NvmeTarget();
  Host& host() const { return host_; }
  WorkloadEnv& env() const { return env_; }
  const StorageTargetConfig& config() const { return c_; }
  Namespace* ns(uint32_t nsid);
  // Where capsules may carry data: the admin queue takes none.
  uint32_t inline_data_size(uint16_t qid) const { return qid ? c_.inline_data_size : 0; }
  TargetPort& port() const { return *port_; }
  Rng& rng() { return rng_; }
  Time io_cost() const;

  // A new queue (of `from`, `entries` entries) for the port to fill in.
  TargetQueue& add_queue(Host& from, uint16_t qid, uint32_t entries);
  TargetQueue& queue(uint32_t index) { return *queues_[index]; }
  size_t queues() const { return queues_.size(); }

  // The binding's calls. A command capsule came: its 64-byte SQE and any
  // in-capsule data after it (`capsule`, `len` bytes of it valid).
  void on_command(TargetQueue& q, std::span<const std::byte> capsule, uint32_t len);
  // The host-to-controller data of a command that fetch() asked for is in c.buf.
  void data_arrived(TargetQueue& q, TargetCmd& c);
  // The command's data moved wrong: an error completion.
  void transfer_failed(TargetQueue& q, TargetCmd& c) { respond(q, c, Status::data_transfer_error); }
  // A buffer of at least `len` bytes for the command's data.
  uint64_t bounce(TargetCmd& c, uint64_t len);

  // The host disconnected queue q (the binding saw its DREQ or FIN).
  void queue_gone(TargetQueue& q);
  // The run stops for controller `cntlid`'s host: no keep-alive check after it.
  void stop_keep_alive(uint16_t cntlid);

  struct Stats {
    uint64_t commands = 0, reads = 0, writes = 0, errors = 0;
    uint64_t keep_alive_expired = 0;  // controllers removed by their keep-alive timer
  };
  const Stats& stats() const { return stats_; }
  void count_error() { ++stats_.errors; }

 private:
  void execute(TargetQueue& q, TargetCmd& c);
  void finish_connect(TargetQueue& q, TargetCmd& c, std::span<const std::byte> data);
  void serve(TargetQueue& q, TargetCmd& c);
  void respond(TargetQueue& q, TargetCmd& c, Status s, uint32_t dw0 = 0, uint32_t dw1 = 0, uint8_t sct = 0);
  void execute_admin(TargetQueue& q, TargetCmd& c);
  void start_keep_alive(uint16_t cntlid, uint32_t kato_ms);
  void on_keep_alive_timer(uint16_t cntlid);

  // A controller's keep-alive timer (nvmet_ctrl's kato, ka_work, reset_tbkas).
  struct KeepAlive {
    Time kato;
    bool seen = false;  // a command came since the last check
    EventId timer;
  };

  WorkloadEnv& env_;
  Host& host_;
  StorageTargetConfig c_;
  Rng rng_;
  std::unique_ptr<Ssd> ssd_;
  std::vector<std::unique_ptr<Namespace>> namespaces_;
  std::vector<std::unique_ptr<TargetQueue>> queues_;
  std::unique_ptr<TargetPort> port_;
  uint16_t next_cntlid_ = 1;
  std::map<uint16_t, KeepAlive> keep_alive_;  // by CNTLID, controllers with a KATO
  Stats stats_;
};

}  // namespace rdmasim::nvme
