#include "apps/timeseries.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "apps/csv.hpp"
#include "apps/output_dir.hpp"

namespace rdmasim {

TimeSeries::TimeSeries(Network& net, const std::vector<std::unique_ptr<WorkloadRun>>& runs,
                       const TimeSeriesConfig& config, uint64_t max_bytes)
    : net_(net),
      interval_(config.interval),
      max_bytes_(max_bytes),
      write_queues_(config.all_ports || !config.ports.empty()),
      write_qps_(config.all_qps || !config.workloads.empty()) {
  // The loader checked every name; rows keep the network's and the workloads' order, as unfiltered.
  for (const auto& node : net.nodes)
    for (size_t p = 0; p < node->port_count(); ++p) {
      const bool chosen =
          config.all_ports || std::any_of(config.ports.begin(), config.ports.end(), [&](const auto& c) {
            return c.node == node->name() && (!c.port || *c.port == p);
          });
      if (chosen) ports_.emplace_back(node.get(), p);
    }
  for (const auto& run : runs)
    if (config.all_qps || std::ranges::find(config.workloads, run->config().name) != config.workloads.end())
      runs_.push_back(run.get());
}

void TimeSeries::start() {
  net_.sim.at(Time{}, [this] { sample(); });
}

void TimeSeries::sample() {
  if (bytes() >= max_bytes_) {
    full_at_ = net_.sim.now();
    return;
  }
  const std::string t = std::to_string(net_.sim.now().count()) + ",";
  for (const auto& [node, p] : ports_)
    queues_ += t + csv_field(nlohmann::json(node->name())) + "," + std::to_string(p) + "," +
               std::to_string(node->queued_bytes(p)) + "\n";
  for (const WorkloadRun* run : runs_) {
    const std::string w = csv_field(nlohmann::json(run->config().name));
    run->each_qp([&](const Host& h, const verbs::QueuePair& qp) {
      const auto l = qp.send_limits();
      qps_ += t + w + "," + csv_field(nlohmann::json(h.name() + ":" + std::to_string(qp.qp_num()))) + "," +
              std::to_string(l.rate_bps) + "," + std::to_string(l.window_bytes) + "\n";
    });
  }
  // Only while something else is scheduled: the sampler alone does not keep a run going.
  if (net_.sim.pending() > 0) net_.sim.after(interval_, [this] { sample(); });
}

void TimeSeries::write(const std::filesystem::path& dir) const {
  std::filesystem::create_directories(dir / "timeseries");
  if (write_queues_) write_file_atomic(dir / "timeseries" / "queues.csv", queues_);
  if (write_qps_) write_file_atomic(dir / "timeseries" / "qps.csv", qps_);
}

}  // namespace rdmasim
