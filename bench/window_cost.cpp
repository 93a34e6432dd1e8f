// What one window's synchronisation costs the ranks, apart from the
// events: the exchange (an all-to-all of sizes, then point-to-point where
// a rank has bytes for another) and the one agreement reduction, as
// ParallelRun::run does them every window (docs/parallel.md). Each rank
// hands every other rank --bytes bytes a window (0: nothing crosses, the
// collectives alone). Prints microseconds per window, the median of
// --repeat rounds of --windows windows.
//
//   mpirun -np 2 bench_window_cost [--windows 20000] [--bytes 0] [--repeat 5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "parallel/cluster.hpp"

using namespace rdmasim;

int main(int argc, char** argv) {
  Cluster& cluster = Cluster::init(argc, argv);
  long windows = 20000, bytes = 0, repeat = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const long v = std::strtol(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--windows") == 0) windows = std::max(1L, v);
    if (std::strcmp(argv[i], "--bytes") == 0) bytes = std::max(0L, v);
    if (std::strcmp(argv[i], "--repeat") == 0) repeat = std::max(1L, v);
  }
  if (!cluster.parallel()) {
    std::fprintf(stderr, "bench_window_cost: start it with mpirun -np N (N >= 2)\n");
    return 2;
  }
  const auto n = static_cast<size_t>(cluster.size());
  std::vector<std::string> out(n), in;
  for (size_t r = 0; r < n; ++r)
    if (static_cast<int>(r) != cluster.rank()) out[r].assign(static_cast<size_t>(bytes), 'x');
  std::vector<double> per_window;
  for (long round = 0; round < repeat; ++round) {
    std::vector<int64_t> agree(4);
    cluster.min(agree);  // start together
    const auto t0 = std::chrono::steady_clock::now();
    for (long w = 0; w < windows; ++w) {
      cluster.exchange(out, in);
      agree = {INT64_MAX, w, -w, 0};
      cluster.min(agree);
    }
    per_window.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
        static_cast<double>(windows));
  }
  std::sort(per_window.begin(), per_window.end());
  if (cluster.rank() == 0)
    std::printf("ranks=%zu bytes_per_peer=%ld windows=%ld us_per_window_median=%.2f min=%.2f max=%.2f\n", n,
                bytes, windows, per_window[per_window.size() / 2], per_window.front(), per_window.back());
  return 0;
}
