#include "parallel/spanning_pairs.hpp"

#include <stdexcept>

#include "parallel/messages.hpp"

namespace rdmasim {

// A note: message::PairNote; any other goes to the reader set before.
SpanningPairs::SpanningPairs(ParallelRun& par) : par_(par), others_(std::move(par.on_note)) {
  par_.on_note = [this](const std::string& text) {
    const auto note = codec::decode<message::Note>(text);
    const auto* pair = std::get_if<message::PairNote>(&note);
    const auto it = pair ? runs_.find(pair->workload) : runs_.end();
    if (it == runs_.end()) {
      if (!others_) throw std::logic_error("parallel: a note for a workload that does not span ranks");
      others_(text);
      return;
    }
    if (pair->flow >= it->second.flows.size() || pair->what > static_cast<uint8_t>(Flow::Remote::placed))
      throw std::runtime_error("parallel: a malformed note");
    it->second.flows[pair->flow]->remote(static_cast<Flow::Remote>(pair->what), pair->k);
  };
}

void SpanningPairs::add(size_t index, WorkloadRun& run) {
  Run& r = runs_[index] = Run{&run, run.pair_flows()};
  for (size_t f = 0; f < r.flows.size(); ++f) {
    // A host's graph index is its context - 1 (build_network).
    const int to = par_.partition().rank[r.flows[f]->receiver().context() - 1];
    r.flows[f]->on_remote([this, index, f, to](Flow::Remote what, uint64_t k) {
      par_.note(to, codec::encode(message::Note{message::PairNote{index, f, static_cast<uint8_t>(what), k}}));
    });
  }
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
    message::PairParts parts;
    for (size_t f = 0; f < r.flows.size(); ++f)
      if (here(r.flows[f]->sender()) || here(r.flows[f]->receiver())) parts[f] = r.flows[f]->part();
    mine = codec::encode(parts);
  } catch (...) {
    failed = std::current_exception();
  }
  par_.agree(failed);
  const std::vector<std::string> all = par_.cluster().gather(mine);
  FlowStats s;
  try {
    if (par_.cluster().rank() == 0) {
      std::vector<Flow::Part> whole(r.flows.size());
      for (const std::string& text : all)
        for (const auto& [f, part] : codec::decode<message::PairParts>(text)) whole.at(f).merge(part);
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
