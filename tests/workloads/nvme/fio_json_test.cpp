// fio.json's latency buckets against fio's io_u_mark_latency: ns below
// 1 us, us below 1 ms, else ms; a bucket holds what is below its key and
// at or above the key before it.
#include "workloads/nvme/fio_json.hpp"

#include <doctest/doctest.h>

using namespace rdmasim::nvme;

TEST_CASE("fio json: latency buckets split at fio's bounds, in percent of the I/Os") {
  constexpr int64_t kNs = 1000, kUs = 1000 * kNs, kMs = 1000 * kUs;  // in ps
  const auto b = latency_buckets_json(
      {1999, 2 * kNs, 999 * kNs, kUs, 999 * kUs + 999 * kNs, kMs, 1999 * kMs, 2000 * kMs});
  CHECK(b["latency_ns"]["2"] == 12.5);     // 1.999 ns counts as 1
  CHECK(b["latency_ns"]["4"] == 12.5);     // 2 ns
  CHECK(b["latency_ns"]["1000"] == 12.5);  // 999 ns
  CHECK(b["latency_us"]["2"] == 12.5);     // 1 us
  CHECK(b["latency_us"]["1000"] == 12.5);  // 999.999 us
  CHECK(b["latency_ms"]["2"] == 12.5);     // 1 ms
  CHECK(b["latency_ms"]["2000"] == 12.5);  // 1999 ms
  CHECK(b["latency_ms"][">=2000"] == 12.5);
  CHECK(b["latency_ns"].size() == 10);
  CHECK(b["latency_us"].size() == 10);
  CHECK(b["latency_ms"].size() == 12);
  double total = 0;
  for (const char* unit : {"latency_ns", "latency_us", "latency_ms"})
    for (const auto& [key, percent] : b[unit].items()) total += percent.get<double>();
  CHECK(total == 100.0);
}

TEST_CASE("fio json: no I/O: every bucket 0") {
  const auto b = latency_buckets_json({});
  for (const char* unit : {"latency_ns", "latency_us", "latency_ms"})
    for (const auto& [key, percent] : b[unit].items()) CHECK(percent == 0.0);
}
