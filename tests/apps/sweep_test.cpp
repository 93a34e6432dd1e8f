// apps/sweep.hpp: the grid a sweep runs, and the grids it refuses before
// loading a point.
#include "apps/sweep.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace rdmasim;

namespace {
SweepAxis axis(const std::string& text) {
  std::string why;
  auto a = parse_vary(text, why);
  REQUIRE(a);
  return *a;
}
}  // namespace

TEST_CASE("sweep: the grid is every combination, the last axis fastest") {
  const auto points = sweep_grid({axis("fabric=ib,roce_v2"), axis("seed=1,2,3")});
  REQUIRE(points.size() == 6);
  CHECK(points[0].name == "run-000");
  CHECK(points[1].values == std::vector<std::string>{"ib", "2"});
  CHECK(points[5].args == std::vector<std::string>{"--fabric", "roce_v2", "--seed", "3"});
  CHECK(grid_error({axis("fabric=ib,roce_v2"), axis("seed=1,2,3")}).empty());
}

TEST_CASE("sweep: a key varied twice, or a grid past the most runs, is refused before it is made") {
  CHECK(grid_error({axis("seed=1,2"), axis("link.delay=1us"), axis("seed=3")}) ==
        "seed is varied twice; give its values in one --vary");
  // 10^10 points once made a vector of as many (bad_alloc), and 2^64 of
  // them wrapped to an empty grid.
  std::vector<SweepAxis> axes;
  for (int k = 0; k < 10; ++k) axes.push_back(axis("k" + std::to_string(k) + "=0,1,2,3,4,5,6,7,8,9"));
  CHECK(
      grid_error(axes) ==
      "the grid has 10 x 10 x 10 x 10 x 10 x 10 x 10 x 10 x 10 x 10 points, more than a sweep runs (10000); "
      "split it into sweeps");
  axes.resize(4);
  CHECK(grid_error(axes).empty());  // 10,000: the most
  axes.push_back(axis("k9=0,1"));
  CHECK(grid_error(axes).find("10 x 10 x 10 x 10 x 2 points") != std::string::npos);
}

TEST_CASE("sweep: a value given twice in one --vary is refused (it ran the same point twice)") {
  std::string why;
  CHECK(!parse_vary("link.bandwidth=10Gbps,25Gbps,10Gbps", why));
  CHECK(why ==
        "'10Gbps' is given twice in 'link.bandwidth=10Gbps,25Gbps,10Gbps'; each point runs once (vary seed "
        "for repeats)");
  CHECK(parse_vary("link.bandwidth=10Gbps,10000Mbps", why));  // spelt apart: two points
}
