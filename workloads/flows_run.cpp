#include "workloads/flows_run.hpp"

#include <stdexcept>

#include "workloads/flow.hpp"
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
  r.ideal = ideal_fct(a.size, env_.path(from, to), env_.mtu, env_.frame_overhead);
  records_.push_back(r);
  auto flow = make_pair_flow(env_, w_, from, to, basic_op(w_), false, id,
                             Rng::stream(seed_, w_.name + ":" + std::to_string(id)).next());
  flow->single_message(a.size, a.at);
  flow->on_finished([this, id] { flow_ended(id); });
  flow->setup();
  if (sends_here(id)) ++running_;
  flows_.push_back(std::move(flow));
  flows_.back()->start();
  if (next_ < arrivals_.size()) env_.sim.at(arrivals_[next_].at, [this] { arrive(); });
}

// A flow's programs have ended: check what landed, record, give memory back.
void FlowsRun::flow_ended(size_t id) {
  PairFlow& f = *flows_[id];
  FlowStats s = f.result();
  FlowRecord& r = records_[id];
  r.completed = s.ops == 1;
  if (r.completed) {
    r.end = s.end;
    if (!f.placed_correctly()) {
      s.data_verified = false;
      s.data_mismatch = true;
    }
  }
  for (size_t i = 0; i < s.latency_ps.size(); ++i)
    sample_keys_.emplace_back(env_.sim.now(), env_.sim.running_order());
  ended_.merge(s);
  f.release_buffers();
  --running_;
  if (r.completed && remote_end_ && !env_.sim.runs(hosts_[r.to]->context())) remote_end_(id, *hosts_[r.to]);
}

bool FlowsRun::sends_here(size_t id) const { return env_.sim.runs(hosts_[records_[id].from]->context()); }

// The receiver's side of a flow another rank ended: it checks what landed
// (the sender's rank could not) and counts its QP's retransmissions.
void FlowsRun::ended_elsewhere(size_t id) {
  PairFlow& f = *flows_[id];
  Host& to = *hosts_[records_[id].to];
  if (!f.placed_correctly()) received_ok_ = false;
  f.each_qp([&](const Host& h, const verbs::QueuePair& qp) {
    if (&h == &to) received_retransmits_ += qp.retransmitted_packets();
  });
  f.release_buffers();
}

bool FlowsRun::finished() const { return next_ == arrivals_.size() && running_ == 0; }

void FlowsRun::each_qp(const std::function<void(const Host&, const verbs::QueuePair&)>& f) const {
  for (const auto& flow : flows_)
    if (flow) flow->each_qp(f);
}

FlowStats FlowsRun::result() const {
  FlowStats all = ended_;
  for (size_t id = 0; id < flows_.size(); ++id)
    if (!flows_[id]->finished() && sends_here(id)) all.merge(flows_[id]->result());
  all.data_verified = all.data_verified && received_ok_;
  all.data_mismatch = all.data_mismatch || !received_ok_;
  all.retransmitted_packets += received_retransmits_;
  all.planned_ops = next_;
  all.finished = finished();
  if (all.start == Time::max()) all.start = w_.start;
  return all;
}

}  // namespace rdmasim
