#include "parallel/split_checks.hpp"

#include <algorithm>
#include <exception>
#include <optional>
#include <stdexcept>

#include "parallel/message.hpp"

namespace rdmasim {

namespace {

using message::get;
using message::put;

// Rank 0: the first of every rank's records, in the one order of events,
// that takes the bytes held past max.
std::optional<CaptureSet::Record> first_over(const std::vector<std::string>& logs, uint64_t held,
                                             uint64_t max) {
  std::vector<CaptureSet::Record> tried;
  try {
    for (const std::string& m : logs)
      for (size_t at = 0; at < m.size();) {
        CaptureSet::Record r{};
        r.at = Time::ps(get<int64_t>(m, at));
        r.order = get<uint64_t>(m, at);
        r.seq = get<uint32_t>(m, at);
        r.bytes = get<uint32_t>(m, at);
        tried.push_back(r);
      }
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
  std::sort(tried.begin(), tried.end(),
            [](const CaptureSet::Record& a, const CaptureSet::Record& b) { return a.key() < b.key(); });
  for (const CaptureSet::Record& r : tried) {
    if (held + r.bytes > max) return r;
    held += r.bytes;
  }
  return std::nullopt;
}

}  // namespace

void SplitChecks::operator()() {
  if ((!captures_ || ended_) && !net_.cfg.pfc) return;
  // What fails after the collectives (a file that cannot be cut) stops every rank.
  std::exception_ptr failed;
  try {
    if (captures_ && !ended_) captures();
    if (net_.cfg.pfc) stuck_ports();
  } catch (...) {
    failed = std::current_exception();
  }
  par_.agree(failed);
}

void SplitChecks::captures() {
  const std::vector<CaptureSet::Record> log = captures_->take_log();
  uint64_t tried = 0;
  for (const CaptureSet::Record& r : log) tried += r.bytes;
  const uint64_t total = par_.sum({tried})[0];
  // Every record tried fits: one process wrote them all. A rank that
  // stopped at its own budget tried one that did not fit alone, so that
  // passes the total too.
  if (agreed_ + total <= max_bytes_) {
    agreed_ += total;
    return;
  }
  // Where one process stopped: the first record, in the one order of
  // events, that passes the budget. A record a rank did not try came after
  // one of its own that did not fit, so after that one too.
  std::string mine;
  for (const CaptureSet::Record& r : log) {
    put<int64_t>(mine, r.at.count());
    put<uint64_t>(mine, r.order);
    put<uint32_t>(mine, r.seq);
    put<uint32_t>(mine, r.bytes);
  }
  const std::vector<std::string> all = par_.cluster().gather(mine);
  std::string cut;  // empty: rank 0 found none (every rank then fails)
  if (par_.cluster().rank() == 0)
    if (const auto r = first_over(all, agreed_, max_bytes_)) {
      put<int64_t>(cut, r->at.count());
      put<uint64_t>(cut, r->order);
      put<uint32_t>(cut, r->seq);
    }
  cut = par_.cluster().broadcast(cut);
  if (cut.empty())
    throw std::logic_error("parallel: the captures' budget ran out at no record rank 0 was told of");
  size_t at = 0;
  CaptureSet::Record first{};
  first.at = Time::ps(get<int64_t>(cut, at));
  first.order = get<uint64_t>(cut, at);
  first.seq = get<uint32_t>(cut, at);
  captures_->end_at(log, first);
  ended_ = true;
}

void SplitChecks::stuck_ports() {
  std::string mine;
  for (const Network::PfcStuck& s : net_.pfc_stuck) {
    put<int64_t>(mine, s.at.count());
    put<int32_t>(mine, s.node);
    put<uint16_t>(mine, s.port);
  }
  net_.pfc_stuck.clear();
  const std::vector<std::string> all = par_.cluster().gather(mine);
  std::vector<Network::PfcStuck> stuck;
  for (const std::string& m : all)
    for (size_t at = 0; at < m.size();) {
      const Time t = Time::ps(get<int64_t>(m, at));
      const int node = get<int32_t>(m, at);
      stuck.push_back({t, node, get<uint16_t>(m, at)});
    }
  finder_.add(std::move(stuck));
}

}  // namespace rdmasim
