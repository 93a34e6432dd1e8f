#include "parallel/spanning_flows.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "parallel/messages.hpp"

namespace rdmasim {

// A note is the workload's index and what its FlowsRun said (message::FlowsNote).
SpanningFlows::SpanningFlows(ParallelRun& par) : par_(par) {
  par_.on_note = [this](const std::string& text) {
    const auto note = codec::decode<message::Note>(text);
    const auto* mine = std::get_if<message::FlowsNote>(&note);
    const auto it = mine ? runs_.find(mine->workload) : runs_.end();
    if (it == runs_.end()) throw std::logic_error("parallel: a note for a workload that does not span ranks");
    it->second->heard(mine->note);
  };
}

void SpanningFlows::add(size_t index, FlowsRun& run) {
  runs_[index] = &run;
  run.on_note([this, index](const Host& at, std::string note) {
    // A host's graph index is its context - 1 (build_network).
    par_.note(par_.partition().rank[at.context() - 1],
              codec::encode(message::Note{message::FlowsNote{index, std::move(note)}}));
  });
}

// Each rank sends its part: the statistics of the flows it sent (their
// latency samples with the key of their flow's end), what its
// receivers found, and the records of the flows it sent. One process
// merges flows as they end, in the one order of events: (time, key).
FlowStats SpanningFlows::result(size_t index, std::vector<FlowRecord>& records) {
  // A rank that fails here (its part, or rank 0's merge) brings every rank
  // down at the agreement, as elsewhere, instead of leaving the others in
  // a collective it never joins.
  std::exception_ptr failed;
  FlowStats s;
  std::string mine;
  try {
    s = part(index, records, mine);
  } catch (...) {
    failed = std::current_exception();
  }
  par_.agree(failed);
  const std::vector<std::string> parts = par_.cluster().gather(mine);
  if (par_.cluster().rank() == 0) {
    try {
      s = merge(s, parts, records);
    } catch (...) {
      failed = std::current_exception();
    }
  }
  par_.agree(failed);
  return s;
}

// This rank's part of workload `index`, as a message for rank 0 (`out`).
FlowStats SpanningFlows::part(size_t index, std::vector<FlowRecord>& records, std::string& out) const {
  const FlowsRun& run = *runs_.at(index);
  std::vector<FlowsRun::EndKey> keys;
  FlowStats s = run.result(&keys);
  records = run.records();
  message::FlowsPart mine;
  mine.stats = s;
  mine.stats.latency_ps.clear();  // they go as samples, with their keys
  // Every sample has its key (FlowsRun::result); one without would go
  // last rather than stop this rank alone in a collective.
  for (size_t i = 0; i < s.latency_ps.size(); ++i) {
    const FlowsRun::EndKey k = i < keys.size() ? keys[i] : FlowsRun::EndKey{Time::max(), UINT64_MAX, 0};
    mine.samples.push_back({k.at, k.event, k.seq, s.latency_ps[i]});
  }
  for (const FlowRecord& r : records)
    if (run.sends_here(r.id)) {
      mine.sent.push_back({r.id, r.completed, r.end});
      mine.start = std::min(mine.start.value_or(Time::max()), r.start);  // of the flows this rank sent
    }
  out = codec::encode(mine);
  return s;
}

// On rank 0: every rank's part put together.
FlowStats SpanningFlows::merge(const FlowStats& s, const std::vector<std::string>& parts,
                               std::vector<FlowRecord>& records) {
  FlowStats all;
  all.finished = true;
  std::optional<Time> first;
  std::vector<message::FlowsPart::Sample> merged;
  for (const std::string& text : parts) {
    const auto p = codec::decode<message::FlowsPart>(text);
    all.merge(p.stats);  // every statistic (its latency samples come apart, keyed)
    if (p.start) first = std::min(first.value_or(Time::max()), *p.start);
    merged.insert(merged.end(), p.samples.begin(), p.samples.end());
    for (const message::FlowsPart::Sent& x : p.sent) {
      FlowRecord& r = records.at(x.id);
      r.completed = x.completed;
      r.end = x.end;
    }
  }
  // The samples of one flow end (one key) come from one rank, in its order.
  std::stable_sort(merged.begin(), merged.end(), [](const auto& a, const auto& b) {
    return std::tie(a.at, a.event, a.seq) < std::tie(b.at, b.event, b.seq);
  });
  for (const auto& m : merged) all.latency_ps.push_back(m.latency_ps);
  all.planned_ops = s.planned_ops;  // the arrivals so far, the same on every rank
  // As FlowsRun::result: before any flow started, the workload's start.
  all.start = first ? *first : s.start;
  return all;
}

}  // namespace rdmasim
