// Which failures make `run` exit 4 (docs/reliability.md, exit codes): an
// NVMe job whose commands completed with an error status, unless the
// experiment asked for failures with `faults`.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "apps/commands.hpp"
#include "topologies/config.hpp"

using namespace rdmasim;
using nlohmann::json;

namespace {

json nvme_results(uint64_t errors) {
  return {
      {"workloads",
       {{{"name", "r"}, {"kind", "nvme"}, {"ops", 16}, {"errors", errors}, {"data_verified", errors == 0}}}}};
}

ExperimentConfig one_nvme_job() {
  ExperimentConfig cfg;
  WorkloadConfig w;
  w.name = "r";
  w.kind_name = "nvme";
  cfg.workloads.push_back(w);
  return cfg;
}

}  // namespace

TEST_CASE("unexpected failure: NVMe commands completed with an error status") {
  ExperimentConfig cfg = one_nvme_job();
  CHECK(cli::unexpected_failure(cfg, nvme_results(0)).empty());
  CHECK(cli::unexpected_failure(cfg, nvme_results(3)) ==
        "workload r: 3 NVMe command(s) completed with an error status or failed");
  cfg.faults.emplace_back();  // failures asked for
  CHECK(cli::unexpected_failure(cfg, nvme_results(3)).empty());
}
