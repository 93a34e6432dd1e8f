// Every message ranks hand each other in a split run (docs/parallel.md),
// each with its fields listed once for the codec (core/codec.hpp) that
// writes and reads it. tests/parallel/messages_test.cpp round-trips each.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

#include "core/codec.hpp"
#include "core/units.hpp"
#include "fabrics/network.hpp"
#include "workloads/flow.hpp"
#include "workloads/flow_messages.hpp"

namespace rdmasim::message {

// ---- a window's exchange (ParallelRun::exchange), to each rank ----

// A frame on the wire of a cut link: the link and the end it left by, its
// arrival and key, whether the wire loses it, its metadata, headroom and
// bytes (a view into the message once read).
struct Frame {
  uint32_t link = 0;
  uint8_t from_b = 0;
  Time at;
  uint64_t order = 0;
  bool lost = false;
  bool crc_pending = false;
  uint32_t flow_hash = 0;
  uint8_t priority = 0;
  uint8_t vl = 0;
  Time enqueued;
  uint32_t headroom = 0;
  std::string_view bytes;
  static constexpr auto fields() {
    return std::tuple{&Frame::link, &Frame::from_b,      &Frame::at,        &Frame::order,
                      &Frame::lost, &Frame::crc_pending, &Frame::flow_hash, &Frame::priority,
                      &Frame::vl,   &Frame::enqueued,    &Frame::headroom,  &Frame::bytes};
  }
  bool operator==(const Frame&) const = default;
};

// ParallelRun::note's text (a Note below, encoded).
struct NoteText {
  std::string_view text;
  static constexpr auto fields() { return std::tuple{&NoteText::text}; }
  bool operator==(const NoteText&) const = default;
};

// A link-level update (IB credits) for the gate of one end of a cut link.
struct Gate {
  uint32_t link = 0;
  uint8_t b = 0;
  Time due;
  uint64_t order = 0;
  uint8_t cls = 0;
  uint64_t amount = 0;
  static constexpr auto fields() {
    return std::tuple{&Gate::link, &Gate::b, &Gate::due, &Gate::order, &Gate::cls, &Gate::amount};
  }
  bool operator==(const Gate&) const = default;
};

// A window's message to one rank is a run of these, in the order written.
using WindowItem = std::variant<Frame, NoteText, Gate>;

// ---- notes (ParallelRun::note) ----

// A pair workload's flow end told its other end's rank (Flow::Remote).
struct PairNote {
  uint64_t workload = 0;
  uint64_t flow = 0;
  uint8_t what = 0;
  uint64_t k = 0;
  static constexpr auto fields() {
    return std::tuple{&PairNote::workload, &PairNote::flow, &PairNote::what, &PairNote::k};
  }
  bool operator==(const PairNote&) const = default;
};

// What a `kind: flows` workload's FlowsRun said (FlowsRun::Note, encoded).
struct FlowsNote {
  uint64_t workload = 0;
  std::string note;
  static constexpr auto fields() { return std::tuple{&FlowsNote::workload, &FlowsNote::note}; }
  bool operator==(const FlowsNote&) const = default;
};

using Note = std::variant<PairNote, FlowsNote>;

// ---- a failure (ParallelRun::agree), from the lowest failed rank ----

struct Failure {
  enum class Kind : uint8_t { input, output, other };
  Kind kind = Kind::other;
  std::string what;
  static constexpr auto fields() { return std::tuple{&Failure::kind, &Failure::what}; }
  bool operator==(const Failure&) const = default;
};

// ---- the runner's checks (SplitChecks), to rank 0 and back ----

// A capture record a rank tried (CaptureSet::Record's part rank 0 needs).
struct CaptureTry {
  Time at;
  uint64_t order = 0;
  uint32_t seq = 0;
  uint32_t bytes = 0;
  static constexpr auto fields() {
    return std::tuple{&CaptureTry::at, &CaptureTry::order, &CaptureTry::seq, &CaptureTry::bytes};
  }
  bool operator==(const CaptureTry&) const = default;
};

// Where one process's captures stopped (none: rank 0 found no such record).
struct CaptureCut {
  Time at;
  uint64_t order = 0;
  uint32_t seq = 0;
  static constexpr auto fields() { return std::tuple{&CaptureCut::at, &CaptureCut::order, &CaptureCut::seq}; }
  bool operator==(const CaptureCut&) const = default;
};

// ---- the end of a run, to rank 0 ----

// A pair workload's parts of its flows (SpanningPairs::result), by flow.
using PairParts = std::map<uint64_t, Flow::Part>;

// A `kind: flows` workload's part (SpanningFlows::result): the statistics
// of the flows this rank sent, each latency sample with its flow end's
// key, the records of those flows and when the first of them started.
struct FlowsPart {
  struct Sample {
    Time at;
    uint64_t event = 0, seq = 0;
    int64_t latency_ps = 0;
    static constexpr auto fields() {
      return std::tuple{&Sample::at, &Sample::event, &Sample::seq, &Sample::latency_ps};
    }
    bool operator==(const Sample&) const = default;
  };
  struct Sent {
    uint64_t id = 0;
    bool completed = false;
    Time end;
    static constexpr auto fields() { return std::tuple{&Sent::id, &Sent::completed, &Sent::end}; }
    bool operator==(const Sent&) const = default;
  };
  FlowStats stats;  // ops, bytes, completions, end, verified, mismatch, finished, retransmitted count
  std::vector<Sample> samples;
  std::vector<Sent> sent;
  std::optional<Time> start;
  static constexpr auto fields() {
    return std::tuple{&FlowsPart::stats, &FlowsPart::samples, &FlowsPart::sent, &FlowsPart::start};
  }
};

// The time series' rows a rank sampled (apps/timeseries.cpp).
struct SeriesRows {
  std::vector<uint32_t> queue_lens, qp_lens;  // rows per sample, rows per QP
  std::string queues, qps;
  static constexpr auto fields() {
    return std::tuple{&SeriesRows::queue_lens, &SeriesRows::qp_lens, &SeriesRows::queues, &SeriesRows::qps};
  }
  bool operator==(const SeriesRows&) const = default;
};

// A rank's results at the end of a run, for rank 0 to merge
// (apps/runner.cpp): its results.json (JSON, as it is written), its CSVs
// by workload, the events its own nodes ran, and what it cost (parallel.json).
struct RankPart {
  struct Stats {
    uint64_t windows = 0, frames_sent = 0, bytes_sent = 0, notes_sent = 0, credits_sent = 0;
    int64_t nodes = 0, hosts = 0;  // of the network's, this rank's
    uint64_t events = 0;
    double run_s = 0, wait_s = 0, pack_s = 0;
    int64_t max_rss_kib = 0;
    static constexpr auto fields() {
      return std::tuple{&Stats::windows,      &Stats::frames_sent, &Stats::bytes_sent, &Stats::notes_sent,
                        &Stats::credits_sent, &Stats::nodes,       &Stats::hosts,      &Stats::events,
                        &Stats::run_s,        &Stats::wait_s,      &Stats::pack_s,     &Stats::max_rss_kib};
    }
    bool operator==(const Stats&) const = default;
  };
  std::string results;
  std::vector<std::string> flows_csv, latency_csv;
  uint64_t own_events = 0;
  Stats stats;
  static constexpr auto fields() {
    return std::tuple{&RankPart::results, &RankPart::flows_csv, &RankPart::latency_csv, &RankPart::own_events,
                      &RankPart::stats};
  }
  bool operator==(const RankPart&) const = default;
};

}  // namespace rdmasim::message

namespace rdmasim::codec {

template <>
struct Fields<Network::PfcStuck> {
  static constexpr auto fields() {
    return std::tuple{&Network::PfcStuck::at, &Network::PfcStuck::node, &Network::PfcStuck::port};
  }
};

template <>
struct Fields<Flow::Part> {
  static constexpr auto fields() {
    return std::tuple{&Flow::Part::stats, &Flow::Part::all_ok,      &Flow::Part::ended,
                      &Flow::Part::held,  &Flow::Part::held_so_far, &Flow::Part::received};
  }
};

}  // namespace rdmasim::codec
