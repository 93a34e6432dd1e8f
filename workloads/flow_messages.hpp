// What a flow's ends tell each other across the ranks of a split run
// (docs/parallel.md), with the fields of each listed once for the codec
// (core/codec.hpp) that writes and reads them; parallel/messages.hpp
// lists the rest of what crosses ranks.
#pragma once

#include <tuple>
#include <variant>

#include "core/codec.hpp"
#include "workloads/flow.hpp"
#include "workloads/flows_run.hpp"

namespace rdmasim {

// A note of a `kind: flows` workload about its flow `id`, from one end's
// rank to the other's (FlowsRun::on_note):
struct FlowsRunNote {
  // the flow of one program ended (its receiver's rank checks what landed);
  struct Ended {
    static constexpr auto fields() { return std::tuple{}; }
    bool operator==(const Ended&) const = default;
  };
  // a socket client sent its message (the server times it from then);
  struct Sent {
    Time at;
    static constexpr auto fields() { return std::tuple{&Sent::at}; }
    bool operator==(const Sent&) const = default;
  };
  // b's program ended: what it found, when, and whether its memory holds
  // what the flow sent.
  struct BEnded {
    PairFlow::EndPart b;
    FlowsRun::EndKey at;
    bool placed = true;
    static constexpr auto fields() { return std::tuple{&BEnded::b, &BEnded::at, &BEnded::placed}; }
  };
  uint64_t id = 0;
  std::variant<Ended, Sent, BEnded> what;
  static constexpr auto fields() { return std::tuple{&FlowsRunNote::id, &FlowsRunNote::what}; }
};

}  // namespace rdmasim

namespace rdmasim::codec {

template <>
struct Fields<FlowStats::Datagrams> {
  using D = FlowStats::Datagrams;
  static constexpr auto fields() {
    return std::tuple{&D::offered,      &D::received,  &D::ring_drops,       &D::backlog_drops,
                      &D::socket_drops, &D::delivered, &D::delivered_in_time};
  }
};

template <>
struct Fields<FlowStats> {
  using S = FlowStats;
  static constexpr auto fields() {
    return std::tuple{
        &S::ops,           &S::bytes,       &S::completions, &S::recv_completions,  &S::start,
        &S::end,           &S::latency_ps,  &S::work_done,   &S::datagrams,         &S::data_verified,
        &S::data_mismatch, &S::finished,    &S::planned_ops, &S::undelivered_bytes, &S::retransmitted_packets,
        &S::posted_ps,     &S::completed_ps};
  }
};

template <>
struct Fields<PairFlow::EndPart> {
  using P = PairFlow::EndPart;
  static constexpr auto fields() { return std::tuple{&P::stats, &P::received, &P::ok}; }
};

template <>
struct Fields<FlowsRun::EndKey> {
  using K = FlowsRun::EndKey;
  static constexpr auto fields() { return std::tuple{&K::at, &K::event, &K::seq}; }
};

}  // namespace rdmasim::codec
