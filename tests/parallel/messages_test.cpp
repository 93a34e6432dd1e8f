// The codec (core/codec.hpp) and every message a split run's ranks hand
// each other (parallel/messages.hpp, workloads/flow_messages.hpp): each
// goes to another rank and back whole, and a damaged message is refused.
#include "parallel/messages.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>

using namespace rdmasim;

namespace {

// What comes back from another rank.
template <typename T>
T round_trip(const T& v) {
  const std::string bytes = codec::encode(v);
  T back = codec::decode<T>(bytes);
  CHECK(codec::encode(back) == bytes);
  return back;
}

// Every field of a FlowStats away from its default.
FlowStats full_stats() {
  FlowStats s;
  s.ops = UINT64_MAX;
  s.bytes = (uint64_t{1} << 63) + 5;  // beyond a double's integers
  s.completions = {{"IBV_WC_SUCCESS", 7}, {"IBV_WC_RETRY_EXC_ERR", 1}};
  s.recv_completions = {{"IBV_WC_WR_FLUSH_ERR", 3}};
  s.start = Time::max();  // never started
  s.end = Time::ps(123456789012345);
  s.latency_ps = {1, INT64_MAX, 0, -1};
  s.work_done = Time::ns(77);
  s.datagrams = FlowStats::Datagrams{1, 2, 3, 4, 5, 6, 7};
  s.data_verified = false;
  s.data_mismatch = true;
  s.finished = true;
  s.planned_ops = 11;
  s.undelivered_bytes = 4096;
  s.retransmitted_packets = 9;
  s.posted_ps = {10, 20};
  s.completed_ps = {{1, 30}, {2, 40}};
  return s;
}

void check_stats(const FlowStats& q) {
  const FlowStats p = full_stats();
  CHECK(q.ops == p.ops);
  CHECK(q.bytes == p.bytes);
  CHECK(q.completions == p.completions);
  CHECK(q.recv_completions == p.recv_completions);
  CHECK(q.start == Time::max());
  CHECK(q.end == p.end);
  CHECK(q.latency_ps == p.latency_ps);
  CHECK(q.work_done == p.work_done);
  REQUIRE(q.datagrams);
  CHECK(q.datagrams->offered == 1);
  CHECK(q.datagrams->received == 2);
  CHECK(q.datagrams->ring_drops == 3);
  CHECK(q.datagrams->backlog_drops == 4);
  CHECK(q.datagrams->socket_drops == 5);
  CHECK(q.datagrams->delivered == 6);
  CHECK(q.datagrams->delivered_in_time == 7);
  CHECK(!q.data_verified);
  CHECK(q.data_mismatch);
  CHECK(q.finished);
  CHECK(q.planned_ops == 11);
  CHECK(q.undelivered_bytes == 4096);
  CHECK(q.retransmitted_packets == 9);
  CHECK(q.posted_ps == std::vector<int64_t>{10, 20});
  CHECK(q.completed_ps == std::vector<std::pair<uint64_t, int64_t>>{{1, 30}, {2, 40}});
}

}  // namespace

TEST_CASE("codec: values of every kind go and come back") {
  CHECK(round_trip(int64_t{-5}) == -5);
  CHECK(round_trip(true));
  CHECK(round_trip(Time::ps(-3)) == Time::ps(-3));
  CHECK(round_trip(std::string("a\0b", 3)) == std::string("a\0b", 3));
  CHECK(round_trip(std::string()).empty());
  CHECK(round_trip(std::vector<uint32_t>{}).empty());
  CHECK(round_trip(std::vector<std::string>{"x", "", "yz"}) == std::vector<std::string>{"x", "", "yz"});
  CHECK(round_trip(std::map<std::string, uint64_t>{{"b", 2}, {"a", 1}}) ==
        std::map<std::string, uint64_t>{{"a", 1}, {"b", 2}});
  CHECK(!round_trip(std::optional<int>()));
  CHECK(round_trip(std::optional<int>(4)) == 4);
  // A view read back points into the message.
  const std::string bytes = codec::encode(std::string_view("frame"));
  const auto view = codec::decode<std::string_view>(bytes);
  CHECK(view == "frame");
  CHECK(view.data() >= bytes.data());
  CHECK(view.data() + view.size() <= bytes.data() + bytes.size());
}

TEST_CASE("codec: a damaged message is refused, not read past its end") {
  const std::string good = codec::encode(message::Gate{1, 1, Time::ns(5), 2, 3, 4});
  for (size_t n = 0; n < good.size(); ++n)
    CHECK_THROWS_AS(codec::decode<message::Gate>(good.substr(0, n)), std::runtime_error);
  CHECK_THROWS_AS(codec::decode<message::Gate>(good + "x"), std::runtime_error);
  // A length larger than what follows: refused before anything is allocated.
  std::string huge;
  codec::Writer(huge).put(uint64_t{1} << 60);
  CHECK_THROWS_AS(codec::decode<std::vector<int64_t>>(huge), std::runtime_error);
  CHECK_THROWS_AS(codec::decode<std::string>(huge), std::runtime_error);
  // A kind no variant has, a bool that is neither.
  CHECK_THROWS_AS(codec::decode<message::WindowItem>(std::string(1, '\x07')), std::runtime_error);
  CHECK_THROWS_AS(codec::decode<bool>(std::string(1, '\x02')), std::runtime_error);
}

TEST_CASE("messages: a window's frames, notes and gate updates") {
  const message::Frame frame{7,
                             1,
                             Time::ns(1500),
                             42,
                             true,
                             true,
                             0xdeadbeef,
                             3,
                             2,
                             Time::ns(1400),
                             64,
                             std::string_view("\x00\x01\xff payload", 11)};
  const message::Gate gate{9, 0, Time::us(2), UINT64_MAX, 15, 1ull << 40};
  const message::NoteText note{"a note"};
  // A window's message to a rank: items one after another, read in turn.
  std::string window;
  codec::Writer w(window);
  for (const message::WindowItem& item :
       {message::WindowItem{frame}, message::WindowItem{note}, message::WindowItem{gate}})
    w.put(item);
  codec::Reader r(window);
  CHECK(std::get<message::Frame>(r.get<message::WindowItem>()) == frame);
  CHECK(std::get<message::NoteText>(r.get<message::WindowItem>()) == note);
  CHECK(std::get<message::Gate>(r.get<message::WindowItem>()) == gate);
  CHECK(r.done());
}

TEST_CASE("messages: notes of pair and flows workloads") {
  const message::Note pair = message::PairNote{3, 17, 2, 99};
  CHECK(round_trip(pair) == pair);
  const message::Note flows = message::FlowsNote{4, std::string("\x01\x02", 2)};
  CHECK(round_trip(flows) == flows);

  const auto ended = round_trip(FlowsRunNote{5, FlowsRunNote::Ended{}});
  CHECK(ended.id == 5);
  CHECK(std::holds_alternative<FlowsRunNote::Ended>(ended.what));
  const auto sent = round_trip(FlowsRunNote{6, FlowsRunNote::Sent{Time::ns(8)}});
  CHECK(std::get<FlowsRunNote::Sent>(sent.what).at == Time::ns(8));
  const auto b = round_trip(
      FlowsRunNote{7, FlowsRunNote::BEnded{{full_stats(), 12, false}, {Time::us(3), 44, 2}, false}});
  CHECK(b.id == 7);
  const auto& be = std::get<FlowsRunNote::BEnded>(b.what);
  check_stats(be.b.stats);
  CHECK(be.b.received == 12);
  CHECK(!be.b.ok);
  CHECK(be.at == FlowsRun::EndKey{Time::us(3), 44, 2});
  CHECK(!be.placed);
}

TEST_CASE("messages: a failure, the captures' log and cut, stuck ports") {
  const message::Failure f{message::Failure::Kind::output, "rank's disk is full"};
  CHECK(round_trip(f) == f);
  const std::vector<message::CaptureTry> log{{Time::ns(1), 2, 3, 4}, {Time::max(), UINT64_MAX, 0, 1}};
  CHECK(round_trip(log) == log);
  CHECK(round_trip(std::optional<message::CaptureCut>(message::CaptureCut{Time::ns(9), 8, 7})) ==
        message::CaptureCut{Time::ns(9), 8, 7});
  CHECK(!round_trip(std::optional<message::CaptureCut>()));
  const auto stuck =
      round_trip(std::vector<Network::PfcStuck>{{Time::us(5), 12, 3}, {Time::us(6), -1, 65535}});
  REQUIRE(stuck.size() == 2);
  CHECK(stuck[0].at == Time::us(5));
  CHECK(stuck[0].node == 12);
  CHECK(stuck[0].port == 3);
  CHECK(stuck[1].node == -1);
  CHECK(stuck[1].port == 65535);
}

TEST_CASE("messages: a rank's parts of pair flows and of flows workloads, its time series") {
  Flow::Part p;
  p.stats = full_stats();
  p.all_ok = false;
  p.ended = false;
  p.held = false;
  p.held_so_far = false;
  p.received = 41;
  const auto parts = round_trip(message::PairParts{{0, Flow::Part{}}, {12, p}});
  REQUIRE(parts.size() == 2);
  const Flow::Part& q = parts.at(12);
  check_stats(q.stats);
  CHECK(!q.all_ok);
  CHECK(!q.ended);
  CHECK(!q.held);
  CHECK(!q.held_so_far);
  CHECK(q.received == 41);
  CHECK(parts.at(0).all_ok);

  message::FlowsPart fp;
  fp.stats = full_stats();
  fp.samples = {{Time::ns(1), 2, 3, 4}, {Time::max(), UINT64_MAX, 0, -4}};
  fp.sent = {{5, true, Time::ns(6)}, {7, false, Time{}}};
  fp.start = Time::ns(1);
  const auto fq = round_trip(fp);
  check_stats(fq.stats);
  CHECK(fq.samples == fp.samples);
  CHECK(fq.sent == fp.sent);
  CHECK(fq.start == Time::ns(1));
  CHECK(!round_trip(message::FlowsPart{}).start);

  const message::SeriesRows rows{{3, 0, 2}, {1}, "a,b,c\n1,2\n", "q\n"};
  CHECK(round_trip(rows) == rows);

  const message::RankPart rank{R"({"events": 3, "ports": []})",
                               {"id,fct\n", ""},
                               {"", "1\n2\n"},
                               77,
                               {1, 2, 3, 4, 5, 6, 7, 8, 0.25, 1e-9, 3.5, 4096}};
  CHECK(round_trip(rank) == rank);
}
