#include "workloads/flows_run.hpp"

#include <stdexcept>

#include "workloads/flow.hpp"
#include "workloads/flow_messages.hpp"
#include "workloads/socket_flow.hpp"

namespace rdmasim {

FlowsRun::FlowsRun(WorkloadEnv& env, const WorkloadConfig& w, uint64_t seed) : env_(env), w_(w), seed_(seed) {
  ended_.start = Time::max();
  ended_.finished = true;
}
FlowsRun::~FlowsRun() = default;

void FlowsRun::start() {
  std::vector<DataRate> rates;
  for (const std::string& name : w_.from) {
    Host* h = env_.host(name);
    if (!h) throw std::logic_error("workload names an unknown host");
    hosts_.push_back(h);
    rates.push_back(env_.link_rate(*h));
  }
  arrivals_ = flow_arrivals(w_.flows, w_.start, rates, seed_);
  records_.reserve(arrivals_.size());
  if (!arrivals_.empty()) env_.sim.at(arrivals_[0].at, [this] { arrive(); });
}

// A flow arrives: its QPs and buffers, then its message, at once.
void FlowsRun::arrive() {
  const FlowArrival& a = arrivals_[next_];
  const size_t id = next_++;
  Host& from = *hosts_[a.from];
  Host& to = *hosts_[a.to];
  FlowRecord r;
  r.id = id;
  r.from = a.from;
  r.to = a.to;
  r.size = a.size;
  r.start = a.at;
  r.ideal = ideal_fct(a.size, env_.path(from, to), env_.mtu, env_.frame_overhead, env_.min_wire_frame);
  records_.push_back(r);
  auto flow = make_pair_flow(env_, w_, from, to, basic_op(w_), false, id,
                             Rng::stream(seed_, w_.name + ":" + std::to_string(id)).next());
  flow->single_message(a.size, a.at);
  // on_finished comes within program_ended, so at last_end_; where the
  // two programs end on two ranks, on neither (program_ended ends it).
  flow->on_program_ended([this, id](bool on_a) { program_ended(id, on_a); });
  flow->on_finished([this, id] { flow_ended(id, last_end_, true); });
  flow->on_landed([this, id] { landed(id); });
  flow->setup();
  const bool at_a = env_.sim.runs(from.context()), at_b = env_.sim.runs(to.context());
  if (note_ && at_a && !at_b && flow->runs_on_b())
    flow->on_tell_b([this, id, b = &to](Time t) {
      note_(*b, codec::encode(FlowsRunNote{id, FlowsRunNote::Sent{t}}));
    });
  if (at_a) ++running_;
  flows_.push_back(std::move(flow));
  ended_ids_.push_back(false);
  flows_.back()->start();
  if (next_ < arrivals_.size()) env_.sim.at(arrivals_[next_].at, [this] { arrive(); });
}

// A flow's programs have ended: check what landed, record, give memory back.
void FlowsRun::flow_ended(size_t id, Key at, bool placed) {
  PairFlow& f = *flows_[id];
  FlowStats s = f.result();
  s.retransmitted_packets = 0;  // counted over the run (result())
  FlowRecord& r = records_[id];
  r.completed = s.ops == 1;
  // A UC WRITE sent and not landed yet: checked when it lands (landed()),
  // else not delivered (result()).
  const bool later = r.completed && f.lands_later();
  if (later) {
    s.data_verified = !s.data_mismatch;
    landing_.insert(id);
  }
  if (r.completed) {
    r.end = s.end;
    if (!later && (!placed || !f.placed_correctly())) {
      s.data_verified = false;
      s.data_mismatch = true;
    }
  }
  sample_keys_.insert(sample_keys_.end(), s.latency_ps.size(), at);
  ended_.merge(s);
  ended_ids_[id] = true;
  f.release_buffers();
  --running_;
  // A flow of one program: its receiver's rank checks what landed.
  const Host& to = *hosts_[r.to];
  if (r.completed && note_ && !f.runs_on_b() && !env_.sim.runs(to.context()))
    note_(to, codec::encode(FlowsRunNote{id, FlowsRunNote::Ended{}}));
}

// A UC WRITE's message landed in b's memory: whole, so now its bytes say
// whether it landed right. Before its flow ended, flow_ended checks it.
void FlowsRun::landed(size_t id) {
  if (!landing_.erase(id)) return;
  if (!flows_[id]->placed_correctly()) received_ok_ = false;
  flows_[id]->release_buffers();
}

void FlowsRun::program_ended(size_t id, bool on_a) {
  // Program ends of one event are numbered in the order it ends them,
  // which is the order one process ends their flows in.
  const Key now{env_.sim.now(), env_.sim.running_order(), 0};
  last_end_ = now.at == last_end_.at && now.event == last_end_.event
                  ? Key{now.at, now.event, last_end_.seq + 1}
                  : now;
  const Key at = last_end_;
  PairFlow& f = *flows_[id];
  const Host& a = *hosts_[records_[id].from];
  const Host& b = *hosts_[records_[id].to];
  if (!note_ || !f.runs_on_b() || env_.sim.runs(a.context()) == env_.sim.runs(b.context())) return;
  // The two programs run on two ranks.
  if (on_a) {
    Split& s = split_[id];
    s.a = at;
    if (s.b) {
      const Split done = s;
      split_.erase(id);
      flow_ended(id, std::max(*done.a, *done.b), done.placed);
    }
    return;
  }
  // b's: what it found, and its memory checked (nothing writes it after
  // its program has the message), go to a's rank; its pages back.
  std::string note =
      codec::encode(FlowsRunNote{id, FlowsRunNote::BEnded{f.b_part(), at, f.placed_correctly()}});
  f.release_buffers();
  ended_ids_[id] = true;
  note_(a, std::move(note));
}

void FlowsRun::heard(std::string_view text) {
  const auto note = codec::decode<FlowsRunNote>(text);
  const size_t id = note.id;
  if (id >= flows_.size()) throw std::logic_error("parallel: a note for a flow that has not arrived");
  if (std::holds_alternative<FlowsRunNote::Ended>(note.what)) return ended_elsewhere(id);
  if (const auto* sent = std::get_if<FlowsRunNote::Sent>(&note.what)) return flows_[id]->told(sent->at);
  // b's program ended on its rank: what it found is a's side's now.
  const auto& ended = std::get<FlowsRunNote::BEnded>(note.what);
  flows_[id]->absorb(ended.b);
  Split& s = split_[id];
  s.b = ended.at;
  s.placed = ended.placed;
  if (s.a) {
    const Split done = s;
    split_.erase(id);
    flow_ended(id, std::max(*done.a, *done.b), done.placed);
  }
}

bool FlowsRun::sends_here(size_t id) const { return env_.sim.runs(hosts_[records_[id].from]->context()); }

// The receiver's side of a flow of one program another rank ended: it
// checks what landed (the sender's rank could not).
void FlowsRun::ended_elsewhere(size_t id) {
  PairFlow& f = *flows_[id];
  if (!f.placed_correctly()) received_ok_ = false;
  f.release_buffers();
}

bool FlowsRun::finished() const { return next_ == arrivals_.size() && running_ == 0; }

void FlowsRun::each_qp(const std::function<void(const Host&, const verbs::QueuePair*)>& f) const {
  for (const auto& flow : flows_) flow->each_qp(f);
}

FlowStats FlowsRun::result(std::vector<Key>* keys) const {
  FlowStats all = ended_;
  if (keys) *keys = sample_keys_;
  for (size_t id = 0; id < flows_.size(); ++id) {
    const PairFlow& f = *flows_[id];
    const bool at_a = sends_here(id), at_b = env_.sim.runs(hosts_[records_[id].to]->context());
    // Each end's transport, over the whole run, on the rank that runs it.
    if (at_a) all.retransmitted_packets += f.retransmits(true);
    if (at_b) all.retransmitted_packets += f.retransmits(false);
    if (ended_ids_[id]) continue;
    if (at_a) {
      FlowStats s = flows_[id]->result();
      s.retransmitted_packets = 0;
      if (keys) keys->insert(keys->end(), s.latency_ps.size(), Key{Time::max(), id, 0});
      all.merge(s);
    } else if (at_b && note_ && f.runs_on_b()) {
      // b's program still running, a's elsewhere: what it found so far
      // is a's side's in one process (a wrong byte read).
      const PairFlow::EndPart p = f.b_part();
      all.data_mismatch = all.data_mismatch || p.stats.data_mismatch || !p.stats.data_verified;
    }
  }
  all.data_verified =
      all.data_verified && received_ok_ && landing_.empty();  // in flight or lost: not delivered
  all.data_mismatch = all.data_mismatch || !received_ok_;
  all.planned_ops = next_;
  all.finished = finished();
  if (all.start == Time::max()) all.start = w_.start;
  return all;
}

}  // namespace rdmasim
