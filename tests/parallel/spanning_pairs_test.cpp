// A pair flow's parts, as ranks hand them to rank 0 (their round trip:
// messages_test.cpp): merged parts give the whole as one engine holds it.
#include "parallel/spanning_pairs.hpp"

#include <doctest/doctest.h>

using namespace rdmasim;

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
