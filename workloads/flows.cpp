#include "workloads/flows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

namespace rdmasim {

double FlowSizes::mean() const {
  double m = 0;
  for (size_t i = 1; i < p_.size(); ++i)
    m += (p_[i].percent - p_[i - 1].percent) / 100 * (p_[i].size_bytes + p_[i - 1].size_bytes) / 2;
  return m;
}

uint64_t FlowSizes::sample(Rng& rng) const {
  const double u = rng.uniform() * 100;
  // The first point at or above u; u lies in (p[i-1], p[i]].
  auto it =
      std::lower_bound(p_.begin(), p_.end(), u, [](const CdfPoint& c, double v) { return c.percent < v; });
  if (it == p_.begin()) it = std::next(it);
  if (it == p_.end()) --it;
  const CdfPoint& hi = *it;
  const CdfPoint& lo = *std::prev(it);
  const double span = hi.percent - lo.percent;
  const double size =
      span > 0 ? lo.size_bytes + (u - lo.percent) / span * (hi.size_bytes - lo.size_bytes) : hi.size_bytes;
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(size)));
}

std::vector<FlowArrival> flow_arrivals(const FlowsConfig& f, Time start, const std::vector<DataRate>& rate,
                                       uint64_t seed) {
  std::vector<FlowArrival> out;
  const FlowSizes sizes(f.points);
  const double mean = sizes.mean();
  const auto hosts = static_cast<uint32_t>(rate.size());
  if (hosts < 2 || mean <= 0) return out;
  const Time end = start + f.duration;
  for (uint32_t i = 0; i < hosts; ++i) {
    // Mean time between arrivals: a mean-sized flow at load * link rate.
    const double gap_ps = mean * 8 / (f.load * static_cast<double>(rate[i].bps())) * 1e12;
    Rng rng = Rng::stream(seed, "flows:" + std::to_string(i));
    Time t = start;
    for (;;) {
      // Compared as a double first: a tiny load makes a gap past what Time
      // holds (llround of it is undefined, and came back negative: a hang).
      const double gap = -std::log1p(-rng.uniform()) * gap_ps;
      if (gap >= static_cast<double>((end - t).count())) break;
      t = t + Time::ps(static_cast<int64_t>(std::llround(gap)));
      if (t >= end) break;
      auto to = static_cast<uint32_t>(rng.between(0, hosts - 2));
      if (to >= i) ++to;
      out.push_back({t, i, to, sizes.sample(rng)});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const FlowArrival& a, const FlowArrival& b) { return a.at < b.at; });
  return out;
}

Time ideal_fct(uint64_t size, const PathCost& path, uint32_t payload_per_frame, uint32_t frame_overhead,
               uint32_t min_wire_frame) {
  const uint64_t frames = std::max<uint64_t>(1, (size + payload_per_frame - 1) / payload_per_frame);
  const uint64_t last = size - (frames - 1) * payload_per_frame + frame_overhead;
  const uint64_t pad = last < min_wire_frame ? min_wire_frame - last : 0;
  return path.one_way + path.one_way + path.bottleneck.tx_time(size + frames * frame_overhead + pad);
}

std::vector<uint64_t> fct_buckets() { return {10'000, 100'000, 1'000'000, 10'000'000, UINT64_MAX}; }

namespace {
double slowdown(const FlowRecord& r) {
  const double ideal = static_cast<double>(r.ideal.count());
  return ideal > 0 ? static_cast<double>((r.end - r.start).count()) / ideal : 0;
}

// Nearest-rank percentiles of sorted values.
nlohmann::json percentiles(std::vector<double> v) {
  if (v.empty()) return {{"p50", nullptr}, {"p95", nullptr}, {"p99", nullptr}};
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
  };
  return {{"p50", at(0.50)}, {"p95", at(0.95)}, {"p99", at(0.99)}};
}
}  // namespace

nlohmann::json fct_json(const std::vector<FlowRecord>& flows) {
  std::vector<double> all;
  const std::vector<uint64_t> bounds = fct_buckets();
  std::vector<std::vector<double>> by_bucket(bounds.size());
  uint64_t completed = 0;
  for (const FlowRecord& r : flows) {
    if (!r.completed) continue;
    ++completed;
    const double s = slowdown(r);
    all.push_back(s);
    const size_t b =
        static_cast<size_t>(std::lower_bound(bounds.begin(), bounds.end(), r.size) - bounds.begin());
    by_bucket[b].push_back(s);
  }
  nlohmann::json buckets = nlohmann::json::array();
  for (size_t b = 0; b < bounds.size(); ++b) {
    nlohmann::json j;
    j["max_size_bytes"] = bounds[b] == UINT64_MAX ? nlohmann::json(nullptr) : nlohmann::json(bounds[b]);
    j["count"] = by_bucket[b].size();
    j["slowdown"] = percentiles(std::move(by_bucket[b]));
    buckets.push_back(std::move(j));
  }
  return {{"started", flows.size()},
          {"completed", completed},
          {"slowdown", percentiles(std::move(all))},
          {"buckets", std::move(buckets)}};
}

std::string flows_csv_rows(const std::string& workload, const std::vector<std::string>& hosts,
                           const std::vector<FlowRecord>& flows) {
  std::string out;
  for (const FlowRecord& r : flows) {
    out += fmt::format("{},{},{},{},{},{},", r.id, workload, hosts[r.from], hosts[r.to], r.size,
                       r.start.count());
    if (r.completed)
      out += fmt::format("{},{},{},{:.4f}\n", r.end.count(), (r.end - r.start).count(), r.ideal.count(),
                         slowdown(r));
    else
      out += fmt::format(",,{},\n", r.ideal.count());
  }
  return out;
}

}  // namespace rdmasim
