#include "parallel/spanning_flows.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "workloads/flow_stats_json.hpp"

namespace rdmasim {

using nlohmann::json;

// A note is the workload's index and what its FlowsRun said.
SpanningFlows::SpanningFlows(ParallelRun& par) : par_(par) {
  par_.on_note = [this](const std::string& note) {
    const json j = json::parse(note);
    const auto it = runs_.find(j.at(0).get<size_t>());
    if (it == runs_.end()) throw std::logic_error("parallel: a note for a workload that does not span ranks");
    it->second->heard(j.at(1));
  };
}

void SpanningFlows::add(size_t index, FlowsRun& run) {
  runs_[index] = &run;
  run.on_note([this, index](const Host& at, const json& note) {
    // A host's graph index is its context - 1 (build_network).
    par_.note(par_.partition().rank[at.context() - 1], json::array({index, note}).dump());
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
  // Every statistic in the one encoding of a flow's statistics, so none
  // is left behind; the latency samples go apart, each with its key.
  json stats = flow_stats_json(s);
  stats["latency"] = json::array();
  json samples = json::array(), sent = json::array();
  // Every sample has its key (FlowsRun::result); one without would go
  // last rather than stop this rank alone in a collective.
  for (size_t i = 0; i < s.latency_ps.size(); ++i) {
    const FlowsRun::EndKey k = i < keys.size() ? keys[i] : FlowsRun::EndKey{Time::max(), UINT64_MAX, 0};
    samples.push_back({k.at.count(), k.event, k.seq, s.latency_ps[i]});
  }
  std::optional<int64_t> start;  // of the flows this rank sent
  for (const FlowRecord& r : records)
    if (run.sends_here(r.id)) {
      sent.push_back({r.id, r.completed, r.end.count()});
      start = std::min(start.value_or(INT64_MAX), r.start.count());
    }
  const json mine = {{"stats", std::move(stats)},
                     {"samples", std::move(samples)},
                     {"sent", std::move(sent)},
                     {"start", start ? json(*start) : json(nullptr)}};
  out = mine.dump();
  return s;
}

// On rank 0: every rank's part put together.
FlowStats SpanningFlows::merge(const FlowStats& s, const std::vector<std::string>& parts,
                               std::vector<FlowRecord>& records) {
  FlowStats all;
  all.finished = true;
  std::optional<int64_t> first;
  std::vector<std::tuple<int64_t, uint64_t, uint64_t, int64_t>> merged;  // time, event, seq, sample
  for (const std::string& text : parts) {
    const json p = json::parse(text);
    all.merge(flow_stats_of(p.at("stats")));
    if (!p["start"].is_null()) first = std::min(first.value_or(INT64_MAX), p["start"].get<int64_t>());
    for (const json& x : p["samples"])
      merged.emplace_back(x[0].get<int64_t>(), x[1].get<uint64_t>(), x[2].get<uint64_t>(),
                          x[3].get<int64_t>());
    for (const json& x : p["sent"]) {
      FlowRecord& r = records.at(x[0].get<size_t>());
      r.completed = x[1].get<bool>();
      r.end = Time::ps(x[2].get<int64_t>());
    }
  }
  // The samples of one flow end (one key) come from one rank, in its order.
  std::stable_sort(merged.begin(), merged.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a)) <
           std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
  });
  for (const auto& m : merged) all.latency_ps.push_back(std::get<3>(m));
  all.planned_ops = s.planned_ops;  // the arrivals so far, the same on every rank
  // As FlowsRun::result: before any flow started, the workload's start.
  all.start = first ? Time::ps(*first) : s.start;
  return all;
}

}  // namespace rdmasim
