// The experiment keys of the host CPU model: host.cores and its costs,
// kind: compute, capture.cpu_trace.
#include <doctest/doctest.h>

#include "experiment/loader.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

constexpr std::string_view kBase = R"(
fabric: roce_v2
topology: {hosts: [a, b], switches: [s], links: [[a, s], [b, s]]}
)";

LoadResult load(const std::string& rest) {
  return load_experiment_text(std::string(kBase) + rest, "exp.yaml", {}, {}, {});
}

std::string errors(const LoadResult& r) {
  std::string s;
  for (const LoadError& e : r.errors) s += e.format() + "\n";
  return s;
}

}  // namespace

TEST_CASE("loader: host CPU keys and their defaults") {
  LoadResult r = load("workloads: [{kind: write_lat, from: a, to: b}]\n");
  REQUIRE(r.config);
  CHECK(r.config->host.cores == 1);
  CHECK(r.config->host.context_switch == 1_us);
  CHECK(r.config->host.interrupt_cost == 1_us);
  CHECK(r.config->host.max_inline == 256);
  CHECK_FALSE(r.config->capture.cpu_trace);

  r = load(
      "host: {cores: 4, context_switch: 2us, pio_bandwidth: 16Gbps, max_inline: 4KiB}\n"
      "workloads: [{kind: write_lat, from: a, to: b}]\n"
      "capture: {cpu_trace: {from: 10us, to: 50us}}\n");
  INFO(errors(r));
  REQUIRE(r.config);
  CHECK(r.config->host.cores == 4);
  CHECK(r.config->host.context_switch == 2_us);
  CHECK(r.config->host.pio_bandwidth.bps() == 16'000'000'000);
  CHECK(r.config->host.max_inline == 4096);
  CHECK(r.config->capture.cpu_trace);
  CHECK(r.config->capture.cpu_trace_from == 10_us);
  CHECK(r.config->capture.cpu_trace_to == 50_us);

  CHECK(errors(load("host: {cores: 0}\nworkloads: [{kind: write_lat, from: a, to: b}]\n"))
            .starts_with("exp.yaml:4:15: host.cores:"));
  CHECK(
      errors(
          load(
              "workloads: [{kind: write_lat, from: a, to: b}]\ncapture: {cpu_trace: {from: 5us, to: 5us}}\n"))
          .find("exp.yaml:5:") == 0);
}

TEST_CASE("loader: kind compute") {
  LoadResult r =
      load("workloads:\n  - {name: calc, kind: compute, on: b, work: 2ms, chunk: 50us, start: 1us}\n");
  INFO(errors(r));
  REQUIRE(r.config);
  const WorkloadConfig& w = r.config->workloads.at(0);
  CHECK(w.kind == WorkloadKind::compute);
  CHECK(w.from == std::vector<std::string>{"b"});
  CHECK(w.work == 2_ms);
  CHECK(w.chunk == 50_us);
  CHECK(w.start == 1_us);
  CHECK_FALSE(is_perftest(w.kind));

  r = load("workloads:\n  - {kind: compute, on: a, work: 1ms}\n");
  REQUIRE(r.config);
  CHECK(r.config->workloads.at(0).chunk == 10_us);

  // Each mistake, located at its key or value.
  CHECK(errors(load("workloads:\n  - {kind: compute, on: a}\n")).find("exp.yaml:5:5: workloads[0]") == 0);
  CHECK(errors(load("workloads:\n  - {kind: compute, on: a, work: 0us}\n")).find("above 0") !=
        std::string::npos);
  CHECK(errors(load("workloads:\n  - {kind: compute, on: a, work: 1ms, size: 4KiB}\n"))
            .find("compute takes on, work, chunk and start, not size") != std::string::npos);
  CHECK(errors(load("workloads:\n  - {kind: compute, on: q, work: 1ms}\n")).find("unknown host 'q'") !=
        std::string::npos);
  CHECK(errors(load("workloads:\n  - {kind: write_lat, from: a, to: b, work: 1ms}\n"))
            .find("only compute takes work") != std::string::npos);
}
