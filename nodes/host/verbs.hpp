// The verbs API a simulated host program uses. Work requests, SGEs, work
// completions, QP attributes, opcodes, access flags and statuses are
// rdma-core's own types from <infiniband/verbs.h>; the handles (device, PD,
// MR, CQ, QP, AH) are the simulator's classes. Calls fail with the errno
// real verbs return; failed operations complete with the status they give.
#pragma once

#include <infiniband/verbs.h>

#include <coroutine>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/engine.hpp"
#include "core/payload.hpp"
#include "core/ring.hpp"
#include "core/task.hpp"
#include "core/units.hpp"

namespace rdmasim {
class HostMemory;
class Rnic;
}  // namespace rdmasim

namespace rdmasim::verbs {

// The port's one P_Key table entry: the default partition, full member
// (IBA 10.9.1.2). ibv_query_pkey index 0; a QP's pkey_index must be 0.
inline constexpr uint16_t kDefaultPkey = 0xFFFF;

class CompletionQueue;
class Device;
class QueuePair;
class SharedReceiveQueue;

// Events a program waits for in the kernel (ibv_get_cq_event,
// ibv_get_async_event), in the order they came; the one waiter is resumed
// when one is there.
template <typename T>
class EventQueue {
 public:
  explicit EventQueue(Simulator& sim) : sim_(sim) {}
  ~EventQueue() {
    sim_.cancel(waiter_timeout_);
    if (waiter_) waiter_.destroy();
  }
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  void push(T e) {
    events_.push_back(std::move(e));
    if (waiter_) {
      sim_.cancel(std::exchange(waiter_timeout_, {}));
      sim_.at(sim_.now(), detail::ResumeEvent(std::exchange(waiter_, nullptr)));
    }
  }
  // co_await q.get_event(): resumes when an event is pending and yields it.
  struct EventAwaiter {
    EventQueue& q;
    bool await_ready() const { return !q.events_.empty(); }
    void await_suspend(std::coroutine_handle<> h) { q.waiter_ = h; }
    T await_resume() { return q.take(); }
  };
  EventAwaiter get_event() { return {*this}; }
  // Like get_event(), but gives up after `limit` and yields nothing.
  struct EventWithinAwaiter {
    EventQueue& q;
    Time limit;
    bool await_ready() const { return !q.events_.empty(); }
    void await_suspend(std::coroutine_handle<> h) { q.wait_within(h, limit); }
    std::optional<T> await_resume() {
      if (q.events_.empty()) return std::nullopt;
      return q.take();
    }
  };
  EventWithinAwaiter get_event_within(Time limit) { return {*this, limit}; }
  size_t pending() const { return events_.size(); }
  // The next event without waiting: false when none is pending.
  bool try_take(T& out) {
    if (events_.empty()) return false;
    out = take();
    return true;
  }

 private:
  T take() {
    T e = std::move(events_.front());
    events_.pop_front();
    return e;
  }
  void wait_within(std::coroutine_handle<> h, Time limit) {
    waiter_ = h;
    waiter_timeout_ = sim_.after(limit, [this] {
      waiter_timeout_ = {};
      std::exchange(waiter_, nullptr).resume();
    });
  }

  Simulator& sim_;
  Ring<T> events_;
  std::coroutine_handle<> waiter_;
  EventId waiter_timeout_;
};

// A completion channel (ibv_create_comp_channel): the completion events of
// the CQs created with it arrive here, one per ibv_req_notify_cq arming;
// ibv_get_cq_event yields the CQ.
class CompletionChannel : public EventQueue<CompletionQueue*> {
 public:
  explicit CompletionChannel(Device& d);
};

class ProtectionDomain {
 public:
  ProtectionDomain(Device& d, uint32_t handle, HostMemory* own)
      : device(d), handle(handle), own_memory(own) {}
  Device& device;
  const uint32_t handle;
  // The address space its regions' addresses are in: a real program's own (programs/: two programs on a
  // host have the same addresses, each its own pages), or null: the host's, where the workloads are.
  HostMemory* const own_memory;
  HostMemory& memory() const;
};

struct MemoryRegion {
  ProtectionDomain* pd = nullptr;
  uint64_t addr = 0;
  uint64_t length = 0;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  int access = 0;
  std::byte* base = nullptr;           // host bytes backing [addr, addr + length), or
  ComputedBuffer* computed = nullptr;  // the computed buffer it lies in (nodes/host/memory.hpp)
  uint64_t computed_at = 0;            // addr's offset in that buffer
  bool valid = false;

  bool contains(uint64_t a, uint64_t len) const {
    return a >= addr && len <= length && a - addr <= length - len;
  }
  // Stored bytes only (computed == null): atomics and what else needs a word in place.
  std::span<std::byte> bytes(uint64_t a, uint64_t len) const { return {base + (a - addr), len}; }
  // The NIC's DMA through the region: what [a, a + len) holds (a computed
  // region's bytes stay unproduced until someone copies them), and a write
  // of `p` at `a` (a computed region checks it instead of storing it).
  BufferPiece piece(uint64_t a, uint64_t len) const {
    if (computed) return {computed, computed_at + (a - addr), len};
    return bytes(a, len);
  }
  Payload read(uint64_t a, uint64_t len) const { return piece(a, len).read(0, len); }
  void write(uint64_t a, const Payload& p) const { piece(a, p.size()).write(0, p); }
};

// Completion queue: a ring of ibv_wc. A program either polls it or awaits
// the next completion (the host's completion mode decides what that costs).
class CompletionQueue {
 public:
  CompletionQueue(Device& d, int cqe, CompletionChannel* channel = nullptr)
      : device_(d), capacity_(cqe), channel_(channel) {}
  // A program still waiting on this CQ when it goes away is dropped with it.
  ~CompletionQueue();
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;

  // Like ibv_poll_cq: up to n completions into wc; returns how many.
  int poll(int n, ibv_wc* wc);
  size_t depth() const { return ring_.size(); }
  // A completion found the CQ full (IBA 11.6.3.4): it was lost, the device
  // raised IBV_EVENT_CQ_ERR and the QPs completing here went to ERR.
  bool overflowed() const { return overflow_; }

  // co_await cq.next(): resumes as soon as a completion is queued (a
  // program spinning on ibv_poll_cq).
  struct NextAwaiter {
    CompletionQueue& cq;
    bool await_ready() const { return !cq.ring_.empty(); }
    void await_suspend(std::coroutine_handle<> h) { cq.waiter_ = h; }
    void await_resume() const {}
  };
  NextAwaiter next() { return {*this}; }
  // Like next(), but gives up after `limit`; `came` says which happened.
  struct NextWithinAwaiter {
    CompletionQueue& cq;
    Time limit;
    bool& came;
    bool await_ready() const { return came = !cq.ring_.empty(); }
    void await_suspend(std::coroutine_handle<> h) { cq.wait_within(h, limit, came); }
    void await_resume() const {}
  };
  NextWithinAwaiter next_within(Time limit, bool& came) { return {*this, limit, came}; }

  // Interrupt moderation of this CQ's completion events: an interrupt is
  // raised once `frames` completions have come, or `delay` after the first
  // of them; the program runs `latency` after the interrupt.
  struct Moderation {
    uint32_t frames = 1;
    Time delay;
    Time latency = Time::us(1);
  };
  void set_moderation(const Moderation& m) { moderation_ = m; }
  // ibv_req_notify_cq: the next completion (solicited_only: the next one of
  // a message that arrived with the Solicited Event bit, or in error; IBA
  // 11.4.2.2) makes one completion event, after moderation, on the CQ's
  // channel. Arming an armed CQ is harmless; the event is not repeated.
  int req_notify(bool solicited_only);
  // co_await cq.interrupt(): how a program sleeps until the next
  // completion — ibv_poll_cq (a completion already queued ends the wait at
  // once), else ibv_req_notify_cq, ibv_poll_cq again, ibv_get_cq_event;
  // resumes after the moderated interrupt.
  struct InterruptAwaiter {
    CompletionQueue& cq;
    bool await_ready() const { return !cq.ring_.empty(); }
    void await_suspend(std::coroutine_handle<> h) {
      cq.req_notify(false);  // nothing can arrive between this and the poll above: same instant
      cq.irq_waiter_ = h;
    }
    void await_resume() const {}
  };
  InterruptAwaiter interrupt() { return {*this}; }
  uint64_t interrupts() const { return interrupts_; }

  // The NIC adds a completion (after the CQE's DMA write); `solicited`: of
  // a received message whose last packet had the SE bit.
  void push(const ibv_wc& wc, bool solicited = false);

 private:
  void wait_within(std::coroutine_handle<> h, Time limit, bool& came);
  void fire();

  Device& device_;
  size_t capacity_;
  CompletionChannel* channel_;
  Ring<ibv_wc> ring_;
  bool overflow_ = false;
  std::coroutine_handle<> waiter_;
  EventId waiter_timeout_;
  bool* waiter_came_ = nullptr;
  // completion events
  bool armed_ = false, solicited_only_ = false;
  Moderation moderation_;
  std::coroutine_handle<> irq_waiter_;  // a program in interrupt(), not on a channel
  uint32_t irq_count_ = 0;
  EventId irq_timer_;
  uint64_t interrupts_ = 0;
};

struct RecvWqe {
  uint64_t wr_id = 0;
  std::vector<ibv_sge> sges;
  uint64_t length = 0;
};

// A shared receive queue (ibv_create_srq, IBA 10.2.9): receive WQEs any QP
// created with it takes, oldest first. Armed with a limit (ibv_modify_srq
// IBV_SRQ_LIMIT), it raises IBV_EVENT_SRQ_LIMIT_REACHED once when fewer
// WQEs than the limit remain, and disarms.
class SharedReceiveQueue {
 public:
  SharedReceiveQueue(Device& d, ProtectionDomain& pd, const ibv_srq_attr& attr)
      : device_(d), pd_(pd), attr_(attr) {
    attr_.srq_limit = 0;  // ibv_create_srq ignores it: the SRQ starts disarmed
  }
  // ibv_post_srq_recv: ENOMEM when full, EINVAL for too many SGEs.
  int post(ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
  // ibv_modify_srq: IBV_SRQ_LIMIT arms (EINVAL above max_wr); resizing is not supported (EINVAL).
  int modify(const ibv_srq_attr& attr, int mask);
  int query(ibv_srq_attr& attr) const {
    attr = attr_;
    return 0;
  }
  ProtectionDomain& pd() const { return pd_; }
  size_t depth() const { return wqes_.size(); }

  // The responder takes the next WQE (false: none posted) or gives back
  // one it took for a message it abandoned.
  bool take(RecvWqe& out);
  void give_back(RecvWqe&& r) { wqes_.push_front(std::move(r)); }

 private:
  Device& device_;
  ProtectionDomain& pd_;
  ibv_srq_attr attr_;
  Ring<RecvWqe> wqes_;
};

// An asynchronous event (ibv_get_async_event): the type and what it is
// about: a port event (IBV_EVENT_PORT_ERR, IBV_EVENT_PORT_ACTIVE) its
// port, an affiliated one its CQ, QP or SRQ (IBA 11.6.3.1).
struct AsyncEvent {
  ibv_event_type type;
  CompletionQueue* cq = nullptr;
  QueuePair* qp = nullptr;
  SharedReceiveQueue* srq = nullptr;
  uint8_t port = 0;
};

struct QpInitAttr {
  CompletionQueue* send_cq = nullptr;
  CompletionQueue* recv_cq = nullptr;
  SharedReceiveQueue* srq = nullptr;  // receives come from it; ibv_post_recv is then EINVAL
  ibv_qp_cap cap{
      .max_send_wr = 128, .max_recv_wr = 128, .max_send_sge = 4, .max_recv_sge = 4, .max_inline_data = 256};
  ibv_qp_type qp_type = IBV_QPT_RC;
  bool sq_sig_all = false;
};

// An address handle (UD destinations). Derives from ibv_ah so that an
// ibv_send_wr's wr.ud.ah can point at it, as in real verbs.
class AddressHandle : public ibv_ah {
 public:
  AddressHandle(ProtectionDomain& pd, const ibv_ah_attr& a) : ibv_ah{}, attr(a), pd_(&pd) {}
  ibv_ah_attr attr;
  ProtectionDomain* pd_;
};

// Work queue entries as the NIC keeps them (the posted WR copied, its SGEs too).
struct SendWqe {
  uint64_t wr_id = 0;
  ibv_wr_opcode opcode = IBV_WR_SEND;
  unsigned send_flags = 0;
  uint32_t imm_data = 0;  // network byte order, as in ibv_send_wr
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint64_t compare_add = 0, swap = 0;
  AddressHandle* ah = nullptr;
  uint32_t remote_qpn = 0, remote_qkey = 0;
  std::vector<ibv_sge> sges;
  std::vector<std::byte> inline_data;  // IBV_SEND_INLINE: bytes copied at post time
  uint64_t length = 0;
  bool signaled = false;
  Time posted;
  // Transport bookkeeping (IBA 9.7.2): the PSNs this message occupies once
  // first sent, and how much of a READ's data has come back.
  bool started = false;
  uint32_t first_psn = 0, last_psn = 0;
  uint32_t recv_sn = 0;  // IRN: the receive WQE a SEND or WRITE with immediate takes (recv_WQE_SN)
  uint64_t done_bytes = 0;
};

class QueuePair {
 public:
  QueuePair(Device& d, ProtectionDomain& pd, uint32_t qpn, const QpInitAttr& init);
  virtual ~QueuePair() = default;

  uint32_t qp_num() const { return qpn_; }
  ibv_qp_type type() const { return init_.qp_type; }
  ibv_qp_state state() const { return state_; }
  const ibv_qp_attr& attr() const { return attr_; }
  const QpInitAttr& init_attr() const { return init_; }
  ProtectionDomain& pd() const { return pd_; }
  Device& device() const { return device_; }

  // ibv_modify_qp: the IBA 10.3 state machine (RESET, INIT, RTR, RTS, SQD,
  // SQE, ERR); required and allowed attributes per transition as the Linux
  // verbs core checks them; EINVAL for any other move.
  int modify(const ibv_qp_attr& attr, int mask);
  // ibv_query_qp
  int query(ibv_qp_attr& attr) const {
    attr = attr_;
    attr.qp_state = attr.cur_qp_state = state_;
    return 0;
  }
  int post_send(ibv_send_wr* wr, ibv_send_wr** bad_wr);
  int post_recv(ibv_recv_wr* wr, ibv_recv_wr** bad_wr);

  // Bytes of the path MTU (from attr().path_mtu).
  uint32_t mtu_bytes() const { return 128u << attr_.path_mtu; }

  // Packets the transport sent again (go-back-N, TCP retransmissions).
  virtual uint64_t retransmitted_packets() const { return 0; }
  // What its congestion control allows now (capture.timeseries): the rate
  // it paces data at (the line rate when not paced; 0: unknown) and its
  // window (0: none).
  struct SendLimits {
    uint64_t rate_bps = 0, window_bytes = 0;
  };
  virtual SendLimits send_limits() const { return {}; }

  // A QP whose connection is its own (iWARP's TCP connection; the IBA
  // fabrics' QPs have none: the RDMA CM's MADs set them up and tear them
  // down, workloads/nvme/rdma_cm.hpp). Each answers false where the QP has
  // no connection of its own.
  // Sets the private data its connection set-up carries (iWARP's MPA
  // request or reply, where rdma_conn_param.private_data goes through
  // iw_cm), before it reaches RTS.
  virtual bool set_connect_private_data(std::span<const std::byte> data) {
    (void)data;
    return false;
  }
  // Has `disconnected` called once when the peer ends the established
  // connection (its QP then in ERR, what was outstanding flushed), as
  // rdma_cm's RDMA_CM_EVENT_DISCONNECTED reports it.
  virtual bool on_connection_closed(std::function<void()> disconnected) {
    (void)disconnected;
    return false;
  }

  // Called when an inbound SEND or WRITE message has been placed whole
  // (its last packet executed in sequence): the simulation's own view, no
  // verbs call. A UC WRITE tells neither end when it lands (IBA 9.8: no
  // acknowledgement; the requester's completion only says it was sent).
  void on_message_placed(std::function<void()> f) { message_placed_ = std::move(f); }

  // The device moves the QP to ERR (a CQ it completes to overflowed).
  void fail() {
    if (state_ != IBV_QPS_ERR && state_ != IBV_QPS_RESET) enter_error();
  }

 protected:
  // Transport hooks.
  virtual int check_send(const ibv_send_wr& wr) const;  // transport-specific errno checks
  virtual void send_posted() = 0;                       // new work in sq_
  virtual void recv_posted() {}
  virtual void state_changed(ibv_qp_state from) { (void)from; }

  // Moves the QP to ERR and flushes every outstanding WQE with IBV_WC_WR_FLUSH_ERR.
  void enter_error();
  // A send WQE of a UD or UC QP failed (IBA 10.3.1, 11.6.2): the QP goes to
  // SQE, the rest of its send queue is flushed, its receive queue goes on.
  void enter_send_queue_error();
  void flush_send_queue();
  // Whether the transport has the IBA's SQD and SQE states (iWARP has not).
  virtual bool has_send_queue_states() const { return true; }
  // In SQD: raises IBV_EVENT_SQ_DRAINED once nothing started is outstanding.
  void check_drained();
  void complete_send(const SendWqe& w, ibv_wc_status status, uint32_t byte_len = 0);
  void complete_recv(const RecvWqe& w, ibv_wc_status status, ibv_wc_opcode op, uint32_t byte_len,
                     uint32_t imm_be, bool with_imm, uint32_t src_qp = 0, bool grh = false, uint16_t slid = 0,
                     uint8_t sl = 0, bool solicited = false);
  ibv_wc_opcode wc_opcode(ibv_wr_opcode op) const;
  void message_placed() const {
    if (message_placed_) message_placed_();
  }
  // The receive WQE for an arriving message: from the SRQ when the QP has
  // one, else from its own receive queue. False when none is posted.
  bool take_recv(RecvWqe& out);
  // A receive taken for a message that was abandoned is the next one again.
  void give_back_recv(RecvWqe&& r);

  // Copies between a scatter/gather list, from its byte `offset` on, and
  // `bytes`; each piece is checked against the region its lkey names: valid,
  // in this QP's PD, covering the piece, with LOCAL_WRITE when written to.
  // False on a protection error (the WQE completes with IBV_WC_LOC_PROT_ERR).
  bool gather(const std::vector<ibv_sge>& sges, uint64_t offset, std::span<std::byte> out) const;
  bool scatter(const std::vector<ibv_sge>& sges, uint64_t offset, const Payload& in) const;
  // The host bytes of `len` bytes of the list from `offset` on, when they
  // lie in one SGE and pass its region's checks; else empty (gather() then
  // copies them piece by piece, or says what is wrong).
  Payload source(const std::vector<ibv_sge>& sges, uint64_t offset, size_t len) const;

  Device& device_;
  ProtectionDomain& pd_;
  const uint32_t qpn_;
  QpInitAttr init_;
  ibv_qp_attr attr_{};
  ibv_qp_state state_ = IBV_QPS_RESET;
  bool drain_notify_ = false;  // SQD entered with en_sqd_async_notify: IBV_EVENT_SQ_DRAINED is due
  // The transport's connection set-up moved it from RTR to RTS, not the
  // consumer (iWARP: the connection manager does when the MPA exchange
  // ends): the consumer's own RTR -> RTS is still taken.
  bool rts_by_connection_ = false;
  Ring<SendWqe> sq_;  // posted and not yet completed, oldest first
  Ring<RecvWqe> rq_;
  std::function<void()> message_placed_;
};

// A verbs context on one host's RNIC.
class Device {
 public:
  Device(Rnic& nic, HostMemory& memory);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  Rnic& nic() const { return nic_; }
  HostMemory& memory() const { return memory_; }
  Simulator& sim() const;

  ProtectionDomain* alloc_pd(HostMemory* own_memory = nullptr);
  // ibv_reg_mr: nullptr with errno EINVAL for bad flags or a range outside host memory.
  MemoryRegion* reg_mr(ProtectionDomain* pd, uint64_t addr, uint64_t length, int access);
  int dereg_mr(MemoryRegion* mr);
  CompletionQueue* create_cq(int cqe, CompletionChannel* channel = nullptr);
  CompletionChannel* create_comp_channel();
  // ibv_create_srq: nullptr with errno EINVAL for a max_wr or max_sge beyond the device's.
  SharedReceiveQueue* create_srq(ProtectionDomain* pd, const ibv_srq_init_attr& init);
  // ibv_create_qp: nullptr with errno EINVAL / EOPNOTSUPP (e.g. UD on iWARP).
  QueuePair* create_qp(ProtectionDomain* pd, const QpInitAttr& init);
  // The port's General Services Interface QP (QP1, IBA 13.5.1), a UD QP the
  // host's management agents (the communication manager) send and receive
  // MADs on; created once (EEXIST after), EOPNOTSUPP where the fabric has no
  // UD (iWARP).
  QueuePair* create_gsi_qp(ProtectionDomain* pd, const QpInitAttr& init);
  QueuePair* gsi_qp() const { return gsi_.get(); }
  // A run split over ranks (docs/parallel.md) makes a flow end's objects on
  // its host's rank only; the other rank takes, without making anything,
  // the QP number and the region's rkey the next create_qp and reg_mr would
  // give, so that the numbers its peer uses, and those of what is made
  // after, are one process's. Nothing answers to them here.
  uint32_t skip_qp();
  uint32_t skip_mr();  // the rkey
  AddressHandle* create_ah(ProtectionDomain* pd, const ibv_ah_attr& attr);
  int query_port(uint8_t port, ibv_port_attr& out) const;
  int query_gid(uint8_t port, int index, ibv_gid& out) const;
  int query_pkey(uint8_t port, int index, uint16_t& out) const;  // host byte order

  // Key lookups for the NIC: nullptr when the key names no valid region.
  MemoryRegion* mr_by_lkey(uint32_t lkey) const;
  MemoryRegion* mr_by_rkey(uint32_t rkey) const;
  QueuePair* qp_by_num(uint32_t qpn) const;
  const std::vector<std::unique_ptr<QueuePair>>& qps() const { return qps_; }

  // ibv_get_async_event on a non-blocking async fd: false when none is pending.
  bool get_async_event(AsyncEvent& out) { return async_.try_take(out); }
  // A context of a program (ibv_open_device): it is given every port event
  // from now on, and the affiliated events that `mine` says are about its
  // own QPs, CQs and SRQs, in its own queue, for as long as it keeps the queue.
  using Owns = std::function<bool(const AsyncEvent&)>;
  void listen(std::weak_ptr<EventQueue<AsyncEvent>> q, Owns mine) {
    listeners_.push_back({std::move(q), std::move(mine)});
  }
  // The device raises an asynchronous event (IBA 11.6.3).
  void raise(const AsyncEvent& e);
  // Its port's link went down or came up: IBV_EVENT_PORT_ERR or
  // IBV_EVENT_PORT_ACTIVE (the device says IBV_DEVICE_PORT_ACTIVE_EVENT).
  void port_changed(bool up) {
    raise({up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR, nullptr, nullptr, nullptr, 1});
  }
  // A completion found `cq` full: IBV_EVENT_CQ_ERR, and every QP that
  // completes to it goes to ERR.
  void cq_overflowed(CompletionQueue& cq);

 private:
  Rnic& nic_;
  HostMemory& memory_;
  std::vector<std::unique_ptr<ProtectionDomain>> pds_;
  std::vector<std::unique_ptr<MemoryRegion>> mrs_;
  std::vector<std::unique_ptr<CompletionChannel>> channels_;
  std::vector<std::unique_ptr<CompletionQueue>> cqs_;
  std::vector<std::unique_ptr<QueuePair>> qps_;
  std::unique_ptr<QueuePair> gsi_;
  std::vector<std::unique_ptr<AddressHandle>> ahs_;
  std::vector<std::unique_ptr<SharedReceiveQueue>> srqs_;
  EventQueue<AsyncEvent> async_;
  struct Listener {
    std::weak_ptr<EventQueue<AsyncEvent>> queue;
    Owns mine;
  };
  std::vector<Listener> listeners_;
};

}  // namespace rdmasim::verbs
