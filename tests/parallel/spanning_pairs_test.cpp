// A pair flow's parts, as ranks hand them to rank 0: exact round trips,
// and merged parts give the whole as one engine holds it.
#include "parallel/spanning_pairs.hpp"

#include <doctest/doctest.h>

#include <cstdint>

using namespace rdmasim;

TEST_CASE("spanning pairs: a flow's part goes to rank 0 and back whole") {
  Flow::Part p;
  p.stats.ops = UINT64_MAX;
  p.stats.bytes = (uint64_t{1} << 63) + 5;  // beyond a double's integers
  p.stats.completions = {{"IBV_WC_SUCCESS", 7}, {"IBV_WC_RETRY_EXC_ERR", 1}};
  p.stats.recv_completions = {{"IBV_WC_WR_FLUSH_ERR", 3}};
  p.stats.start = Time::max();  // never started
  p.stats.end = Time::ps(123456789012345);
  p.stats.latency_ps = {1, INT64_MAX, 0};
  p.stats.data_verified = false;
  p.stats.retransmitted_packets = 9;
  p.all_ok = false;
  p.ended = false;
  p.held = false;
  p.received = 41;
  const Flow::Part q = SpanningPairs::decode(SpanningPairs::encode(p));
  CHECK(q.stats.ops == p.stats.ops);
  CHECK(q.stats.bytes == p.stats.bytes);
  CHECK(q.stats.completions == p.stats.completions);
  CHECK(q.stats.recv_completions == p.stats.recv_completions);
  CHECK(q.stats.start == Time::max());
  CHECK(q.stats.end == p.stats.end);
  CHECK(q.stats.latency_ps == p.stats.latency_ps);
  CHECK(!q.stats.data_verified);
  CHECK(q.stats.retransmitted_packets == 9);
  CHECK(!q.all_ok);
  CHECK(!q.ended);
  CHECK(!q.held);
  CHECK(q.received == 41);
  CHECK_THROWS(SpanningPairs::decode("{\"stats\": {}}"));
}

TEST_CASE("spanning pairs: the sender's and the receiver's parts merge into the whole") {
  Flow::Part sender, receiver, whole;  // whole: as rank 0 starts, an empty part
  sender.stats.ops = 4;
  sender.stats.bytes = 4096;
  sender.stats.completions = {{"IBV_WC_SUCCESS", 4}};
  sender.stats.start = Time::ps(100);
  sender.stats.end = Time::ps(900);
  sender.stats.latency_ps = {10, 20, 30, 40};
  sender.stats.retransmitted_packets = 2;
  receiver.stats.recv_completions = {{"IBV_WC_LOC_LEN_ERR", 1}};
  receiver.stats.data_verified = false;  // a placement its rank checked
  receiver.received = 3;
  receiver.ended = false;  // its program still waits
  for (const Flow::Part* p : {&sender, &receiver}) whole.merge(*p);
  CHECK(whole.stats.ops == 4);
  CHECK(whole.stats.bytes == 4096);
  CHECK(whole.stats.completions.at("IBV_WC_SUCCESS") == 4);
  CHECK(whole.stats.recv_completions.at("IBV_WC_LOC_LEN_ERR") == 1);
  CHECK(whole.stats.start == Time::ps(100));  // an empty part's start (never) does not count
  CHECK(whole.stats.end == Time::ps(900));
  CHECK(whole.stats.latency_ps == std::vector<int64_t>{10, 20, 30, 40});
  CHECK(!whole.stats.data_verified);
  CHECK(whole.stats.retransmitted_packets == 2);
  CHECK(whole.received == 3);
  CHECK(whole.all_ok);
  CHECK(!whole.ended);
  CHECK(whole.held);
}
