// One sender-receiver pair of a workload: a connected QP pair (or a UD
// pair), buffers, and the verbs programs that drive them. workload.cpp
// implements it; the workload runners (workload.cpp, flows.cpp) make them.
#pragma once

#include <functional>
#include <optional>

#include "core/random.hpp"
#include "core/task.hpp"
#include "workloads/payload_pattern.hpp"
#include "workloads/workload.hpp"

namespace rdmasim {

// A sender-receiver pair, as the workload runners drive it: verbs QPs
// (Flow, below) or kernel sockets on fabric: tcp (socket_flow.hpp).
class PairFlow {
 public:
  virtual ~PairFlow() = default;
  // A flow of `kind: flows`: one message of `size` bytes, sent at `at`.
  virtual void single_message(uint64_t size, Time at) = 0;
  // Called once when every program of the flow has ended.
  void on_finished(std::function<void()> f) { on_finished_ = std::move(f); }
  virtual void setup() = 0;
  virtual void start() = 0;
  bool finished() const { return running_ == 0; }
  // Every program this engine runs has ended: in a run split over ranks
  // (docs/parallel.md) a program on another rank's host never runs here.
  bool finished_here() const { return running_ == elsewhere_; }
  virtual FlowStats result() = 0;
  // The receiver got message 0 as sent (a single-message flow, checked
  // before its buffers are released).
  virtual bool placed_correctly() const = 0;
  // Gives the flow's buffers back (a UC WRITE's receiver's only once its
  // message landed, below).
  virtual void release_buffers() = 0;
  // A UC WRITE completes when its last packet has been sent (IBA 9.8.2),
  // before it lands, and a lost packet leaves it never landing (9.8.3):
  // whether the flow's data is still to land in b's memory, and `f`
  // called (as b) when it has.
  virtual bool lands_later() const { return false; }
  void on_landed(std::function<void()> f) { on_landed_ = std::move(f); }
  // Its QPs, requester side first, with the host each is on (none for
  // sockets); null for an end another rank runs (docs/parallel.md).
  virtual void each_qp(const std::function<void(const Host&, const verbs::QueuePair*)>& f) const = 0;
  // Packets the transport of the end on a (`on_a`) or on b retransmitted so far.
  virtual uint64_t retransmits(bool on_a) const = 0;

  // A run split over ranks (docs/parallel.md) runs each program on its
  // host's rank only, so a flow whose hosts are on two ranks never sees
  // both programs end in one engine. There:
  // Whether the flow runs a program on b too (a receiver, a server),
  // whose end the flow's end waits for.
  virtual bool runs_on_b() const = 0;
  // Called as each program ends, with whether it is a's (set only where
  // the two hosts are on different ranks).
  void on_program_ended(std::function<void(bool on_a)> f) { on_program_ended_ = std::move(f); }
  // What b's program found (the statistics it keeps, the messages it
  // received, whether it saw an error), taken on b's rank when it ends,
  // and added to a's side on a's rank: there result() is then the one
  // process's. The two programs keep disjoint statistics, so adding is
  // exact.
  struct EndPart {
    FlowStats stats;
    uint64_t received = 0;
    bool ok = true;
  };
  virtual EndPart b_part() const = 0;
  virtual void absorb(const EndPart& p) = 0;
  // What a's program tells b's as it runs (a socket client's send time,
  // from which the server times the message): `f` is called on a's rank,
  // told() on b's.
  void on_tell_b(std::function<void(Time)> f) { tell_b_ = std::move(f); }
  virtual void told(Time) {}

 protected:
  // `index`: the flow's place in its workload, which numbers its messages.
  PairFlow(WorkloadEnv& env, const WorkloadConfig& w, Host& a, Host& b, bool pingpong, uint64_t index,
           uint64_t seed)
      : env_(env),
        w_(w),
        a_(a),
        b_(b),
        pingpong_(pingpong),
        index_(index),
        rng_(seed),
        pattern_(w.name),
        size_(w.size.count()),
        count_(w.count),
        start_(w.start) {}
  // Each program runs as its host (core/engine.hpp: contexts), so the
  // running context says whose program ended.
  void program_ended() {
    if (on_program_ended_) on_program_ended_(env_.sim.context() == a_.context());
    if (--running_ == 0 && on_finished_) on_finished_();
  }

  WorkloadEnv& env_;
  const WorkloadConfig& w_;
  Host& a_;
  Host& b_;
  bool pingpong_;
  uint64_t index_;
  Rng rng_;
  PayloadPattern pattern_;
  uint64_t size_, count_;
  Time start_;
  std::function<void()> on_finished_;
  std::function<void(bool)> on_program_ended_;
  std::function<void(Time)> tell_b_;
  std::function<void()> on_landed_;
  int running_ = 0;    // programs still running
  int elsewhere_ = 0;  // of those, programs another rank runs (they never end here)
};

class Flow final : public PairFlow {
 public:
  static constexpr uint32_t kGrhLen = 40;  // UD receive buffers start with the GRH

  // `index`: the flow's place in its workload, which numbers its messages.
  Flow(WorkloadEnv& env, const WorkloadConfig& w, Host& a, Host& b, WorkloadKind op, bool pingpong,
       uint64_t index, uint64_t seed)
      : PairFlow(env, w, a, b, pingpong, index, seed), op_(op) {}
  // A flow of `kind: flows`: one message of `size` bytes, posted at `at`
  // (its QPs are connected before it arrives, as in HPCC's simulator).
  void single_message(uint64_t size, Time at) override {
    size_ = size;
    count_ = 1;
    start_ = at;
    connected_ = true;
  }

  void setup() override;
  void each_qp(const std::function<void(const Host&, const verbs::QueuePair*)>& f) const override {
    if (sa_.host) f(a_, sa_.qp);
    if (sb_.host) f(b_, sb_.qp);
  }
  // Each program runs as its host (core/engine.hpp: contexts), whoever
  // starts it, and only on its host's rank (docs/parallel.md).
  void start() override {
    const Time t = connected_ ? start_ : std::max(start_, env_.connect_time(a_, b_));
    const bool b_program = pingpong_ || (needs_receiver() && w_.post_recvs);
    const bool at_a = here(sa_), at_b = here(sb_);
    elsewhere_ = (at_a ? 0 : 1) + (b_program && !at_b ? 1 : 0);
    // A ping-pong's two programs count from the start; a receiver from
    // when it starts, after the sender (which may end at once).
    running_ = pingpong_ ? 2 : 1;
    if (at_a) launch(t, true);
    if (b_program && !pingpong_) ++running_;
    if (b_program && at_b) launch(t, false);
  }
  FlowStats result() override { return conclude(part()); }

  // A run split over ranks (docs/parallel.md, parallel/spanning_pairs.hpp)
  // runs each end's programs on its host's rank. Where one process's
  // sender program touches the receiver's memory, the sender's rank calls
  // the on_remote function instead, and the glue has the receiver's rank
  // call remote() with the same arguments at the window's end: no later
  // than a lookahead after the act, so before anything the sender sends
  // after it arrives there.
  enum class Remote : uint8_t {
    posted,  // message k was posted: the receiver's slot holds it (READ's source, a computed buffer's slots)
    placed,  // message k completed (RC WRITE): check the receiver's slot holds it
  };
  void on_remote(std::function<void(Remote what, uint64_t k)> f) { remote_ = std::move(f); }
  void remote(Remote what, uint64_t k);
  // What an engine holds of the flow: the statistics of the programs it
  // runs and the checks of the ends it runs (one process: all of it).
  struct Part {
    FlowStats stats;     // its programs' (the programs' own, before result())
    bool all_ok = true;  // no program here failed
    bool ended = true;   // every program here has ended
    bool held = true;    // its ends hold at the end what the messages left there (the end-of-run check)
    // Cut off by stop: its ends hold what the messages completed so far left
    // there (checked where the sender's program runs with the end it
    // checks; elsewhere only the checks made at each completion count).
    bool held_so_far = true;
    uint64_t received = 0;  // messages the receiver program took
    void merge(const Part& p);
  };
  Part part() const;
  // The flow's result from the whole of it (every end's part merged).
  FlowStats conclude(const Part& whole) const;
  // The receiver's copy of message 0 equals the pattern.
  bool placed_correctly() const override;
  // Gives the pages of both data buffers back (they read as zeros again).
  void release_buffers() override;
  uint64_t retransmits(bool on_a) const override {
    const Side& s = on_a ? sa_ : sb_;
    return s.qp ? s.qp->retransmitted_packets() : 0;
  }
  bool runs_on_b() const override { return pingpong_ || (needs_receiver() && w_.post_recvs); }
  bool lands_later() const override { return unacknowledged_write() && !landed_; }
  EndPart b_part() const override { return {stats_, received_, all_ok_}; }
  void absorb(const EndPart& p) override {
    stats_.merge(p.stats);
    received_ += p.received;
    all_ok_ = all_ok_ && p.ok;
  }
  const Host& sender() const { return a_; }
  const Host& receiver() const { return b_; }
  uint64_t index() const { return index_; }

 private:
  bool needs_receiver() const {
    return op_ == WorkloadKind::send || op_ == WorkloadKind::send_imm || op_ == WorkloadKind::rdma_write_imm;
  }
  // A WRITE on a UC QP of a single-message flow: no one hears when it lands.
  bool unacknowledged_write() const {
    return connected_ && !pingpong_ && op_ == WorkloadKind::rdma_write && w_.qp == QpType::uc;
  }
  bool is_atomic_op() const { return op_ == WorkloadKind::atomic_cas || op_ == WorkloadKind::atomic_fadd; }
  uint64_t msg_size() const { return is_atomic_op() ? 8 : size_; }
  uint32_t recv_slot_len() const {
    return static_cast<uint32_t>(msg_size() + (w_.qp == QpType::ud ? kGrhLen : 0));
  }
  // Bytes the sender copies into the WQE (IBV_SEND_INLINE), 0 when not inline.
  uint64_t inline_bytes() const {
    const uint64_t limit = std::min<uint32_t>(w_.inline_threshold, a_.nic().config().max_inline);
    const bool inl = msg_size() <= limit && op_ != WorkloadKind::rdma_read && !is_atomic_op();
    return inl ? msg_size() : 0;
  }

  // Starts the program on a (`on_a`) or on b, as its host.
  void launch(Time t, bool on_a) {
    Simulator::Scope as(env_.sim, (on_a ? a_ : b_).context());
    if (pingpong_ && op_ == WorkloadKind::rdma_write)
      write_ping(t, on_a ? sa_ : sb_, on_a ? sb_ : sa_, on_a ? *pa_ : *pb_, on_a);
    else if (pingpong_)
      on_a ? ping(t) : pong(t);
    else
      on_a ? sender(t) : receiver(t);
  }

  struct Side {
    Host* host = nullptr;
    verbs::ProtectionDomain* pd = nullptr;
    verbs::CompletionQueue* scq = nullptr;
    verbs::CompletionQueue* rcq = nullptr;
    verbs::QueuePair* qp = nullptr;
    verbs::MemoryRegion* mr = nullptr;   // data buffer
    verbs::MemoryRegion* rmr = nullptr;  // receive buffers
    verbs::AddressHandle* ah = nullptr;  // UD: towards the peer
    uint64_t buf = 0, rbuf = 0;
    uint32_t psn = 0;
    uint32_t qpn = 0, rkey = 0;  // its QP's number, its data buffer's rkey: what its peer uses
  };
  // A side on a host another rank runs (a split run, docs/parallel.md) is
  // only its numbers (Device::skip_qp): its objects are made on its rank.
  void make_side(Side& s, Host& h);
  bool here(const Side& s) const { return env_.sim.runs(s.host->context()); }
  void connect(Side& s, const Side& peer);
  void post_recv(Side& s, uint64_t k);
  int post_op(uint64_t k);
  // Message k of this pair as the pattern numbers it: distinct for every
  // message of the workload (pair index * count + k).
  uint64_t message_id(uint64_t k) const { return index_ * count_ + k; }
  // Writes message k's bytes into `slot` of the buffer its data comes from.
  void fill_message(uint64_t k, uint64_t slot);
  // Whether message k landed where it was going (sender's view, at its
  // completion); on another rank, that rank is told (Remote::placed).
  bool placed(uint64_t k);
  // What the sender's buffer holds with message `last` in slot `last % slots_`
  // (fill_message): the slot's first message with `last`'s stamps.
  SlotPattern sent_slots() const { return SlotPattern(pattern_, message_id(0), slots_, msg_size(), stamp_); }
  // Whether `s`'s data buffer holds what all count_ messages left in the sender's.
  bool holds_all_sent(const Side& s) const;
  // The end-of-run check of the ends this engine runs (Part::held).
  bool ends_hold() const;
  // Part::held_so_far: the same check of a flow the run stopped, over the
  // messages completed, where this engine runs the sender's program.
  bool ends_hold_so_far() const;
  // Whether `s`'s data buffer holds the `done` messages completed of the
  // posted_ posted: each slot's last completed message, and in a slot a
  // later message is landing in, the bytes every message of it shares.
  bool holds_completed(const Side& s, uint64_t done) const;
  // The atomics' remote operand after n operations, from 0.
  uint64_t atomic_operand(uint64_t n) const;
  // Every stamp_ bytes of a message start with a pattern record naming it
  // (setup(): the IBA path MTU; iWARP, 256).
  uint64_t stamp_ = 256;
  bool stamped(uint64_t k, std::span<const std::byte> bytes) const;
  // The computed buffer at `buf` on `s` had every write the pattern's,
  // and at least `need` bytes of it.
  bool computed_intact(const Side& s, uint64_t buf, uint64_t need) const;
  void count(const ibv_wc& wc);

  Task sender(Time t0);
  Task receiver(Time t0);
  Task ping(Time t0);
  Task pong(Time t0);
  // write_lat, as perftest's ib_write_lat: each side RDMA WRITEs its slot 0
  // into the peer's slot 1 and busy-polls the last byte of its own slot 1.
  Task write_ping(Time t0, Side& self, Side& peer, Process& p, bool first);
  int post_write_to_peer(Side& self, const Side& peer, uint64_t from_slot, uint64_t k);
  bool reap_send_completions(Side& self, uint64_t& completed);
  WorkloadKind op_;
  bool connected_ = false;
  std::function<void(Remote, uint64_t)> remote_;
  // With `payload: pattern` the data buffers at both ends are computed from
  // the messages' pattern (setup()): the sender's read, the receiver's
  // checked as written (nodes/host/memory.hpp), none stored.
  std::optional<SlotPattern> computed_;
  Side sa_, sb_;
  Process* pa_ = nullptr;  // the program on a (sender, or ping)
  Process* pb_ = nullptr;  // the program on b (receiver, or pong), when there is one
  uint64_t slots_ = 1, rdepth_ = 1;
  std::vector<Time> posted_at_;
  uint64_t received_ = 0;
  uint64_t posted_ = 0;  // work requests a's program posted
  bool all_ok_ = true;
  bool landed_ = false;   // unacknowledged_write(): b's QP placed the message whole
  bool aborted_ = false;  // write_lat: one side failed, so the other stops polling
  FlowStats stats_;
};

}  // namespace rdmasim
