#include "workloads/flows.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

using namespace rdmasim;

namespace {
std::vector<CdfPoint> builtin(std::string_view name) {
  std::string error;
  auto pts = parse_cdf(*builtin_cdf(name), error);
  REQUIRE_MESSAGE(pts, error);
  return *pts;
}
}  // namespace

TEST_CASE("flows: the built-in CDFs are HPCC's web-search and Hadoop distributions") {
  const auto web = builtin("websearch");
  REQUIRE(web.size() == 12);
  CHECK(web[5].size_bytes == 80000);
  CHECK(web[5].percent == 53);
  CHECK(web.back().size_bytes == 30e6);
  const auto hdp = builtin("hadoop");
  REQUIRE(hdp.size() == 20);
  CHECK(hdp[17].percent == 97.5);
  // Mean of the piecewise-linear distribution, summed by hand segment by
  // segment: 750 + 750 + 2500 + 4000 + 8450 + 9800 + 60000 + 150000 +
  // 350000 + 525000 + 600000 bytes.
  CHECK(FlowSizes(web).mean() == doctest::Approx(1'711'250));
  CHECK_FALSE(builtin_cdf("uniform"));
}

TEST_CASE("flows: CDF files are checked line by line") {
  std::string error;
  CHECK(parse_cdf("# comment\n0 0\n\n100 50  # half\n200 100\n", error));
  CHECK_FALSE(parse_cdf("0 0\n100 x\n", error));
  CHECK(error == "line 2: cumulative percent must be a number from 0 to 100, got '100 x'");
  CHECK_FALSE(parse_cdf("0 0\n100 60\n50 100\n", error));
  CHECK(error == "line 3: sizes must not fall from one line to the next");
  CHECK_FALSE(parse_cdf("0 0\n100 60\n200 50\n", error));
  CHECK(error == "line 3: cumulative percents must not fall");
  CHECK_FALSE(parse_cdf("0 10\n100 100\n", error));
  CHECK(error == "the first point's cumulative percent must be 0");
  CHECK_FALSE(parse_cdf("0 0\n100 90\n", error));
  CHECK(error == "the last point's cumulative percent must be 100");
  CHECK_FALSE(parse_cdf("0 0\n", error));
  CHECK_FALSE(parse_cdf("100\n", error));
  CHECK(error == "line 1: expected 'size_bytes cumulative_percent', got '100'");
}

TEST_CASE("flows: sampled sizes follow the CDF within sampling error") {
  for (const char* name : {"websearch", "hadoop"}) {
    CAPTURE(name);
    const auto pts = builtin(name);
    const FlowSizes sizes(pts);
    Rng rng(7);
    const int n = 200'000;
    std::vector<uint64_t> v(n);
    for (auto& s : v) s = sizes.sample(rng);
    std::sort(v.begin(), v.end());
    for (const CdfPoint& p : pts) {
      // Fraction of samples at or below the point's size, against its percent:
      // within 4 standard deviations of a binomial proportion.
      const auto below =
          std::upper_bound(v.begin(), v.end(), static_cast<uint64_t>(p.size_bytes)) - v.begin();
      const double got = static_cast<double>(below) / n, want = p.percent / 100;
      const double sd = std::sqrt(std::max(want * (1 - want), 1e-6) / n);
      CAPTURE(p.size_bytes);
      CHECK(std::abs(got - want) <= 4 * sd + 1e-5);
    }
    // And the sample mean matches the distribution's.
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
    CHECK(mean == doctest::Approx(sizes.mean()).epsilon(0.03));
  }
}

TEST_CASE("flows: Poisson arrivals offer the load asked for") {
  FlowsConfig f;
  f.points = builtin("websearch");
  f.load = 0.3;
  f.duration = Time::ms(2000);
  const std::vector<DataRate> rate(8, DataRate(100'000'000'000));
  const auto flows = flow_arrivals(f, Time::us(10), rate, 42);
  std::vector<double> offered(rate.size());
  Time last;
  for (const FlowArrival& a : flows) {
    CHECK(a.from != a.to);
    CHECK(a.at >= last);  // in time order
    CHECK(a.at >= Time::us(10));
    CHECK(a.at < Time::us(10) + f.duration);
    last = a.at;
    offered[a.from] += static_cast<double>(a.size) * 8;
  }
  // Bytes offered over the window, per sender and in all, against load * rate.
  const double want = f.load * 100e9 * f.duration.to_s();
  double all = 0;
  for (double o : offered) {
    CHECK(o / want == doctest::Approx(1).epsilon(0.08));
    all += o;
  }
  CHECK(all / (want * 8) == doctest::Approx(1).epsilon(0.03));
  // The same seed gives the same flows; another gives others.
  CHECK(flow_arrivals(f, Time::us(10), rate, 42).size() == flows.size());
  CHECK(flow_arrivals(f, Time::us(10), rate, 43).size() != flows.size());
}

TEST_CASE("flows: a load so small that the mean gap passes the clock's range ends with no flow") {
  // 1e-300 of a 100 Gb/s link: a gap of about 1e300 ps, which llround
  // once turned negative, so arrivals never reached the end (a hang).
  FlowsConfig f;
  f.points = builtin("hadoop");
  f.load = 1e-300;
  f.duration = Time::ms(1);
  CHECK(flow_arrivals(f, Time(), std::vector<DataRate>(3, DataRate(100'000'000'000)), 1).empty());
}

TEST_CASE("flows: ideal FCT of a hand-worked case") {
  // Two 1 us links and one switch (300 ns) one way; 100 Gb/s. 10,000 bytes
  // at 1,024 payload bytes a frame: 10 frames of 82 bytes overhead each,
  // 10,820 bytes = 865.6 ns. Data there, ACK back: 2 * 2.3 us.
  const PathCost path{Time::ns(2300), DataRate(100'000'000'000)};
  CHECK(ideal_fct(10'000, path, 1024, 82, 84) == Time::ps(4'600'000 + 865'600));
  // A flow smaller than a frame is still one frame.
  CHECK(ideal_fct(1, path, 1024, 82, 84) == Time::ps(4'600'000 + 6'720));
  // Ethernet pads a short last frame to 60 bytes (84 on the wire): a
  // 1-byte flow under 54 bytes of headers (kernel TCP) takes 84, not 79;
  // so does the last of a 10,241-byte flow's 11 frames, which carries one byte.
  CHECK(ideal_fct(1, path, 1024, 78, 84) == Time::ps(4'600'000 + 6'720));
  CHECK(ideal_fct(1, path, 1024, 78, 0) == Time::ps(4'600'000 + 6'320));
  CHECK(ideal_fct(10'241, path, 1024, 78, 84) == Time::ps(4'600'000 + (10'241 + 10 * 78 + 5 + 78) * 80));
}

TEST_CASE("flows: fct summary and flows.csv rows") {
  std::vector<FlowRecord> r(3);
  r[0] = {0, 0, 1, 5'000, Time::us(1), Time::us(3), Time::us(1), true};      // slowdown 2
  r[1] = {1, 1, 0, 2'000'000, Time::us(2), Time::us(6), Time::us(4), true};  // slowdown 1
  r[2] = {2, 1, 0, 50'000'000, Time::us(5), Time{}, Time::us(100), false};   // cut off
  const auto j = fct_json(r);
  CHECK(j["started"] == 3);
  CHECK(j["completed"] == 2);
  CHECK(j["slowdown"]["p50"] == 1.0);
  CHECK(j["slowdown"]["p99"] == 2.0);
  CHECK(j["buckets"][0]["max_size_bytes"] == 10'000);
  CHECK(j["buckets"][0]["count"] == 1);
  CHECK(j["buckets"][3]["count"] == 1);
  CHECK(j["buckets"][4]["max_size_bytes"].is_null());
  CHECK(j["buckets"][4]["count"] == 0);
  CHECK(flows_csv_rows("w0", {"a", "b"}, r) ==
        "0,w0,a,b,5000,1000000,3000000,2000000,1000000,2.0000\n"
        "1,w0,b,a,2000000,2000000,6000000,4000000,4000000,1.0000\n"
        "2,w0,b,a,50000000,5000000,,,100000000,\n");
}
