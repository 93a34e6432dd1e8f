#include "parallel/spanning_pairs.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "workloads/flow_stats_json.hpp"

namespace rdmasim {

namespace {

using nlohmann::json;

// A note: workload index, flow, what, message.
constexpr size_t kNoteFields = 4;

}  // namespace

SpanningPairs::SpanningPairs(ParallelRun& par) : par_(par), others_(std::move(par.on_note)) {
  par_.on_note = [this](const std::string& note) {
    const json j = json::parse(note);
    const auto it = j.is_array() && j.size() == kNoteFields ? runs_.find(j[0].get<size_t>()) : runs_.end();
    if (it == runs_.end()) {
      if (!others_) throw std::logic_error("parallel: a note for a workload that does not span ranks");
      others_(note);
      return;
    }
    const auto flow = j[1].get<size_t>();
    const auto what = j[2].get<uint8_t>();
    if (flow >= it->second.flows.size() || what > static_cast<uint8_t>(Flow::Remote::placed))
      throw std::runtime_error("parallel: a malformed note");
    it->second.flows[flow]->remote(static_cast<Flow::Remote>(what), j[3].get<uint64_t>());
  };
}

void SpanningPairs::add(size_t index, WorkloadRun& run) {
  Run& r = runs_[index] = Run{&run, run.pair_flows()};
  for (size_t f = 0; f < r.flows.size(); ++f) {
    // A host's graph index is its context - 1 (build_network).
    const int to = par_.partition().rank[r.flows[f]->receiver().context() - 1];
    r.flows[f]->on_remote([this, index, f, to](Flow::Remote what, uint64_t k) {
      par_.note(to, json::array({index, f, static_cast<uint8_t>(what), k}).dump());
    });
  }
}

std::string SpanningPairs::encode(const Flow::Part& p) {
  return json{
      {"stats", flow_stats_json(p.stats)}, {"all_ok", p.all_ok},    {"ended", p.ended}, {"held", p.held},
      {"held_so_far", p.held_so_far},      {"received", p.received}}
      .dump();
}

Flow::Part SpanningPairs::decode(const std::string& text) {
  const json j = json::parse(text);
  Flow::Part p;
  p.stats = flow_stats_of(j.at("stats"));
  p.all_ok = j.at("all_ok").get<bool>();
  p.ended = j.at("ended").get<bool>();
  p.held = j.at("held").get<bool>();
  p.held_so_far = j.at("held_so_far").get<bool>();
  p.received = j.at("received").get<uint64_t>();
  return p;
}

// Each rank sends the parts of the flows with an end on its hosts; rank 0
// merges each flow's parts (a rank with neither end holds nothing of it)
// and concludes it as one process does.
FlowStats SpanningPairs::result(size_t index) {
  const Run& r = runs_.at(index);
  // A host's graph index is its context - 1 (build_network).
  auto here = [this](const Host& h) { return par_.owns(static_cast<int>(h.context()) - 1); };
  std::exception_ptr failed;
  std::string mine;
  try {
    json parts = json::object();
    for (size_t f = 0; f < r.flows.size(); ++f)
      if (here(r.flows[f]->sender()) || here(r.flows[f]->receiver()))
        parts[std::to_string(f)] = encode(r.flows[f]->part());
    mine = parts.dump();
  } catch (...) {
    failed = std::current_exception();
  }
  par_.agree(failed);
  const std::vector<std::string> all = par_.cluster().gather(mine);
  FlowStats s;
  try {
    if (par_.cluster().rank() == 0) {
      std::vector<Flow::Part> whole(r.flows.size());
      for (const std::string& text : all) {
        const json parts = json::parse(text);
        for (const auto& [f, part] : parts.items())
          whole.at(std::stoul(f)).merge(decode(part.get<std::string>()));
      }
      std::vector<FlowStats> each;
      for (size_t f = 0; f < r.flows.size(); ++f) each.push_back(r.flows[f]->conclude(whole[f]));
      s = r.run->result_of(each);
    } else {
      s = r.run->result();
    }
  } catch (...) {
    failed = std::current_exception();
  }
  par_.agree(failed);
  return s;
}

}  // namespace rdmasim
