// ParallelRun and Cluster as one process runs them (no mpirun): a rank of
// one, and links "cut" with both ends on it, so that every frame, note and
// agreement goes the whole way through the window exchange and its codec,
// and must leave the run exactly as one engine runs it.
#include "parallel/parallel_run.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <stdexcept>

#include "core/errors.hpp"
#include "tests/fixtures/network.hpp"
#include "tests/fixtures/verbs_end.hpp"

using namespace rdmasim;

namespace {

// What a 200 KiB RDMA WRITE from a to b left: when it completed, the
// bytes b holds, and what b's port sent and received.
struct Outcome {
  Time completed;
  std::vector<std::byte> landed;
  uint64_t b_rx_frames = 0, b_tx_frames = 0;
  ParallelRun::Stats stats;
};

Partition one_rank(const Network& net, std::vector<int> cut) {
  Partition p;
  p.ranks = 1;
  p.rank.assign(net.nodes.size(), 0);
  p.cut_links = std::move(cut);
  return p;
}

Outcome write_over(std::optional<std::vector<int>> cut, const char* fabric = "roce_v2") {
  test::BuiltNetwork n{test::two_hosts(fabric)};
  std::unique_ptr<ParallelRun> par;
  if (cut) par = std::make_unique<ParallelRun>(Cluster::get(), n.net, one_rank(n.net, *cut));
  if (par && n.fabric.seal_before_crossing) par->seal_crossing(n.fabric.sealer);
  test::VerbsEnd a = test::make_end(n.host(0)), b = test::make_end(n.host(1));
  auto path = [&](int from, const test::VerbsEnd& peer) {
    test::RcPath p;
    p.ah = n.fabric.address(n.host(from), *peer.host);
    p.dest_qp = peer.qp->qp_num();
    return p;
  };
  test::connect_rc(*a.qp, path(0, b));
  test::connect_rc(*b.qp, path(1, a));
  constexpr uint32_t kLen = 200 * 1024;
  auto src = a.mem(0, kLen);
  for (size_t i = 0; i < src.size(); ++i) src[i] = std::byte(i * 13 + 1);
  REQUIRE(test::post_send(a, IBV_WR_RDMA_WRITE, 0, kLen, b.buf, b.mr->rkey, 1) == 0);
  Outcome o;
  ibv_wc wc{};
  // In steps, as the runner runs: each step's end is where both runs stop.
  for (Time t = Time::us(5); a.cq->poll(1, &wc) == 0; t += Time::us(5)) {
    REQUIRE(t < Time::ms(10));
    if (par)
      par->run(t);
    else
      n.net.sim.run(t);
    o.completed = n.net.sim.now();
  }
  CHECK(wc.status == IBV_WC_SUCCESS);
  const auto got = b.mem(0, kLen);
  o.landed.assign(got.begin(), got.end());
  o.b_rx_frames = n.host(1).port(0).stats().rx_frames;
  o.b_tx_frames = n.host(1).port(0).stats().tx_frames;
  if (par) o.stats = par->stats();
  return o;
}

}  // namespace

TEST_CASE("cluster: one process is rank 0 of 1, its collectives its own values") {
  Cluster& c = Cluster::get();
  CHECK(c.rank() == 0);
  CHECK(c.size() == 1);
  CHECK(!c.parallel());
  std::vector<std::string> from;
  c.exchange({"to myself"}, from);
  CHECK(from == std::vector<std::string>{"to myself"});
  std::vector<int64_t> v{3, -4};
  c.min(v);
  c.max(v);
  CHECK(v == std::vector<int64_t>{3, -4});
  std::vector<uint64_t> s{7};
  c.sum(s);
  CHECK(s[0] == 7);
  CHECK(c.gather("mine") == std::vector<std::string>{"mine"});
  CHECK(c.broadcast("all") == "all");
}

TEST_CASE("parallel run: frames across cut links arrive as on the one wire") {
  for (const char* fabric : {"roce_v2", "ib"}) {
    CAPTURE(std::string(fabric));
    const Outcome one = write_over(std::nullopt, fabric);
    const Outcome split = write_over(std::vector<int>{0, 1}, fabric);  // a - s1 and b - s1
    CHECK(split.completed == one.completed);
    CHECK(split.landed == one.landed);
    CHECK(split.b_rx_frames == one.b_rx_frames);
    CHECK(split.b_tx_frames == one.b_tx_frames);
    // Every frame crossed: the data frames and the ACKs, each twice (a host to s1, s1 to a host).
    CHECK(split.stats.frames_sent == 2 * (one.b_rx_frames + one.b_tx_frames));
    CHECK(split.stats.bytes_sent > 200 * 1024 * 2);
    CHECK(split.stats.windows > 1);
  }
}

TEST_CASE("parallel run: a cut link with no delay leaves no lookahead and is refused") {
  ExperimentConfig cfg = test::two_hosts("roce_v2");
  cfg.topology.links[0].config.delay = Time{};
  test::BuiltNetwork n{cfg};
  CHECK_THROWS_AS(ParallelRun(Cluster::get(), n.net, one_rank(n.net, {0})), InputError);
  CHECK_NOTHROW(ParallelRun(Cluster::get(), n.net, one_rank(n.net, {1})));
}

TEST_CASE("parallel run: windows end where one engine would be, notes are read at a window's end") {
  test::BuiltNetwork n{test::two_hosts("roce_v2")};
  ParallelRun par(Cluster::get(), n.net, one_rank(n.net, {0}));
  CHECK(par.lookahead() == n.cfg.link.delay);
  std::vector<std::pair<Time, std::string>> heard;
  par.on_note = [&](const std::string& note) { heard.emplace_back(n.net.sim.now(), note); };
  int ran = 0;
  n.net.sim.at(Time::us(3), [&] {
    ++ran;
    par.note(0, std::string("\0binary note", 12));
  });
  n.net.sim.at(Time::us(50), [&] { ++ran; });
  CHECK(par.run(Time::us(10)) == 1);  // one event still pending
  CHECK(n.net.sim.now() == Time::us(10));
  REQUIRE(heard.size() == 1);
  CHECK(heard[0].second == std::string("\0binary note", 12));
  CHECK(heard[0].first < Time::us(3) + par.lookahead());  // at the end of its window
  CHECK(par.run(Time::us(100)) == 0);                     // idle: now() is the last event's time
  CHECK(n.net.sim.now() == Time::us(50));
  CHECK(ran == 2);
  CHECK(par.stats().notes_sent == 1);

  par.on_note = nullptr;
  par.note(0, "unread");
  CHECK_THROWS_AS(par.run(Time::us(200)), std::runtime_error);  // every rank fails with it
}

TEST_CASE("parallel run: a failure reaches every rank with its kind and rank") {
  test::BuiltNetwork n{test::two_hosts("roce_v2")};
  ParallelRun par(Cluster::get(), n.net, one_rank(n.net, {}));
  CHECK_NOTHROW(par.agree(nullptr));
  auto fails_with = [&](auto e) {
    try {
      par.agree(std::make_exception_ptr(e));
    } catch (const InputError& x) {
      return std::string("input: ") + x.what();
    } catch (const OutputError& x) {
      return std::string("output: ") + x.what();
    } catch (const std::runtime_error& x) {
      return std::string("other: ") + x.what();
    }
    return std::string("none");
  };
  CHECK(fails_with(InputError("bad key")) == "input: rank 0: bad key");
  CHECK(fails_with(OutputError("disk full")) == "output: rank 0: disk full");
  CHECK(fails_with(std::logic_error("bug")) == "other: rank 0: bug");
  // An event that throws fails the run at its window, on every rank.
  n.net.sim.at(Time::us(1), [] { throw InputError("in an event"); });
  CHECK_THROWS_WITH_AS(par.run(Time::us(2)), "rank 0: in an event", InputError);
  CHECK(par.all(true));
  CHECK(!par.all(false));
  CHECK(par.sum({4, 5}) == std::vector<uint64_t>{4, 5});
}

TEST_CASE("parallel run: a gate update for a port not across a cut link is a bug") {
  test::BuiltNetwork n{test::two_hosts("ib")};
  ParallelRun par(Cluster::get(), n.net, one_rank(n.net, {0}));
  CHECK_THROWS_AS(par.gate_update(*n.net.links[1].a, Time::us(1), 0, 0, 64), std::logic_error);
  CHECK_THROWS_AS(par.gate_update(*n.net.links[0].a, Time::us(1), 0, 0, 64),
                  std::logic_error);  // its own rank
}
