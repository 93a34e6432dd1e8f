#include "parallel/split_checks.hpp"

#include <algorithm>
#include <exception>
#include <optional>
#include <stdexcept>

#include "parallel/messages.hpp"

namespace rdmasim {

namespace {

// Rank 0: the first of every rank's records, in the one order of events,
// that takes the bytes held past max.
std::optional<message::CaptureCut> first_over(const std::vector<std::string>& logs, uint64_t held,
                                              uint64_t max) {
  std::vector<message::CaptureTry> tried;
  try {
    for (const std::string& m : logs) {
      const auto log = codec::decode<std::vector<message::CaptureTry>>(m);
      tried.insert(tried.end(), log.begin(), log.end());
    }
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
  auto key = [](const message::CaptureTry& r) { return std::tie(r.at, r.order, r.seq); };
  std::sort(tried.begin(), tried.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  for (const message::CaptureTry& r : tried) {
    if (held + r.bytes > max) return message::CaptureCut{r.at, r.order, r.seq};
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
  std::vector<message::CaptureTry> mine;
  for (const CaptureSet::Record& r : log) mine.push_back({r.at, r.order, r.seq, r.bytes});
  const std::vector<std::string> all = par_.cluster().gather(codec::encode(mine));
  std::optional<message::CaptureCut> cut;  // none: rank 0 found none (every rank then fails)
  if (par_.cluster().rank() == 0) cut = first_over(all, agreed_, max_bytes_);
  cut = codec::decode<std::optional<message::CaptureCut>>(par_.cluster().broadcast(codec::encode(cut)));
  if (!cut) throw std::logic_error("parallel: the captures' budget ran out at no record rank 0 was told of");
  CaptureSet::Record first{};
  first.at = cut->at;
  first.order = cut->order;
  first.seq = cut->seq;
  captures_->end_at(log, first);
  ended_ = true;
}

void SplitChecks::stuck_ports() {
  const std::vector<std::string> all = par_.cluster().gather(codec::encode(net_.pfc_stuck));
  net_.pfc_stuck.clear();
  std::vector<Network::PfcStuck> stuck;
  for (const std::string& m : all) {
    const auto theirs = codec::decode<std::vector<Network::PfcStuck>>(m);
    stuck.insert(stuck.end(), theirs.begin(), theirs.end());
  }
  finder_.add(std::move(stuck));
}

}  // namespace rdmasim
