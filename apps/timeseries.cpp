#include "apps/timeseries.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "apps/csv.hpp"
#include "apps/output_dir.hpp"
#include "parallel/messages.hpp"

namespace rdmasim {

namespace {

constexpr std::string_view kQueuesHeader = "time_ps,node,port,queue_bytes\n";
constexpr std::string_view kQpsHeader = "time_ps,workload,qp,rate_bps,window_bytes\n";

// One rank's rows, read in turn as rank 0 interleaves them.
struct Rows {
  std::vector<uint32_t> lens;
  std::string text;
  size_t next = 0, at = 0;
  std::string_view take() {
    if (next == lens.size()) throw std::logic_error("timeseries: a rank has fewer rows than its samples");
    const std::string_view row = std::string_view(text).substr(at, lens[next]);
    at += lens[next++];
    return row;
  }
};

}  // namespace

TimeSeries::TimeSeries(Network& net, const std::vector<std::unique_ptr<WorkloadRun>>& runs,
                       const TimeSeriesConfig& config, uint64_t max_bytes, ParallelRun* par)
    : net_(net),
      par_(par),
      interval_(config.interval),
      max_bytes_(max_bytes),
      next_(Time{}),
      bytes_(kQueuesHeader.size() + kQpsHeader.size()),
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

int TimeSeries::owner(const Node& node) const {
  return par_ ? par_->partition().rank[node.context() - 1] : 0;
}

void TimeSeries::sample() {
  const Time now = next_;
  if (bytes_ >= max_bytes_) {
    full_at_ = now;
    next_ = Time::max();
    return;
  }
  const int me = par_ ? par_->cluster().rank() : 0;
  const uint64_t before = queues_.size() + qps_.size();
  const std::string t = std::to_string(now.count()) + ",";
  for (const auto& [node, p] : ports_) {
    if (owner(*node) != me) continue;
    const size_t at = queues_.size();
    queues_ += t + csv_field(nlohmann::json(node->name())) + "," + std::to_string(p) + "," +
               std::to_string(node->queued_bytes(p)) + "\n";
    queue_lens_.push_back(static_cast<uint32_t>(queues_.size() - at));
  }
  // Every rank lists every QP (parallel/spanning_flows.hpp); the rank of
  // its host holds and runs it.
  for (const WorkloadRun* run : runs_) {
    const std::string w = csv_field(nlohmann::json(run->config().name));
    run->each_qp([&](const Host& h, const verbs::QueuePair* qp) {
      const int rank = owner(h);
      if (par_ && me == 0) qp_ranks_.push_back(static_cast<uint32_t>(rank));
      if (rank != me || !qp) return;
      const auto l = qp->send_limits();
      const size_t at = qps_.size();
      qps_ += t + w + "," + csv_field(nlohmann::json(h.name() + ":" + std::to_string(qp->qp_num()))) + "," +
              std::to_string(l.rate_bps) + "," + std::to_string(l.window_bytes) + "\n";
      qp_lens_.push_back(static_cast<uint32_t>(qps_.size() - at));
    });
  }
  uint64_t added = queues_.size() + qps_.size() - before;
  if (par_) added = par_->sum({added})[0];
  bytes_ += added;
  ++samples_;
  next_ = now + interval_;
}

void TimeSeries::write(const std::filesystem::path& dir) const {
  std::string queues(kQueuesHeader), qps(kQpsHeader);
  if (!par_) {
    queues += queues_;
    qps += qps_;
  } else {
    const std::vector<std::string> all =
        par_->cluster().gather(codec::encode(message::SeriesRows{queue_lens_, qp_lens_, queues_, qps_}));
    if (par_->cluster().rank() != 0) return;
    std::vector<Rows> q(all.size()), r(all.size());
    for (size_t i = 0; i < all.size(); ++i) {
      message::SeriesRows rows = codec::decode<message::SeriesRows>(all[i]);
      q[i].lens = std::move(rows.queue_lens);
      r[i].lens = std::move(rows.qp_lens);
      q[i].text = std::move(rows.queues);
      r[i].text = std::move(rows.qps);
    }
    // One process's order: each sample's ports in the network's order; the
    // QPs as rank 0 listed them, with the rank holding each.
    for (uint64_t s = 0; s < samples_; ++s)
      for (const auto& [node, p] : ports_) queues += q[static_cast<size_t>(owner(*node))].take();
    for (uint32_t rank : qp_ranks_) qps += r[rank].take();
    for (size_t i = 0; i < all.size(); ++i)
      if (q[i].next != q[i].lens.size() || r[i].next != r[i].lens.size())
        throw std::logic_error("timeseries: a rank has more rows than its samples");
  }
  std::filesystem::create_directories(dir / "timeseries");
  if (write_queues_) write_file_atomic(dir / "timeseries" / "queues.csv", queues);
  if (write_qps_) write_file_atomic(dir / "timeseries" / "qps.csv", qps);
}

}  // namespace rdmasim
