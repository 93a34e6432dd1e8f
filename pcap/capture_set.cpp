#include "pcap/capture_set.hpp"

#include <algorithm>
#include <string>

#include "core/errors.hpp"
#include "core/packet.hpp"
#include "nodes/node.hpp"
#include "nodes/port.hpp"

namespace rdmasim {

struct CaptureSet::Point {
  const Port* port;
  uint32_t index;  // in points_
  PcapWriter writer;

  Point(const Port& p, uint32_t i, const std::filesystem::path& path, Linktype lt, uint32_t snaplen)
      : port(&p), index(i), writer(path, lt, snaplen) {}
};

CaptureSet::CaptureSet(std::filesystem::path dir, Linktype linktype, Sealer sealer, uint32_t snaplen,
                       uint64_t max_bytes)
    : pcap_dir_(std::move(dir) / "pcap"),
      linktype_(linktype),
      snaplen_(snaplen),
      sealer_(std::make_shared<const Sealer>(std::move(sealer))),
      budget_(std::make_shared<Budget>(max_bytes)) {}

CaptureSet::~CaptureSet() {
  for (auto& p : points_) {
    try {
      p->writer.close();
    } catch (...) {
      // A destructor cannot report; close() explicitly to see write errors.
    }
  }
}

void CaptureSet::capture(Port& port) {
  if (std::any_of(points_.begin(), points_.end(), [&](const auto& p) { return p->port == &port; })) return;
  std::filesystem::create_directories(pcap_dir_);
  const auto path = pcap_dir_ / (port.owner().name() + "-" + std::to_string(port.index()) + ".pcap");
  auto point =
      std::make_shared<Point>(port, static_cast<uint32_t>(points_.size()), path, linktype_, snaplen_);
  auto observe = [point, sealer = sealer_, budget = budget_](Direction dir) {
    return [point, sealer, budget, dir](Time t, Packet& p) {
      if (!point->writer.is_open() || budget->full_at) return;
      const uint64_t record = point->writer.record_bytes(p.size());
      const bool fits = budget->used + record <= budget->max;
      if (budget->sim) {
        const Simulator& sim = *budget->sim;
        if (sim.now() != budget->last_at || sim.running_order() != budget->last_order) {
          budget->last_at = sim.now();
          budget->last_order = sim.running_order();
          budget->seq = 0;
        }
        budget->log.push_back({sim.now(), sim.running_order(), budget->seq++, static_cast<uint32_t>(record),
                               point->index, fits, point->writer.bytes()});
      }
      if (!fits) {
        budget->full_at = t;
        return;
      }
      if (p.meta().crc_pending && *sealer) (*sealer)(p);
      point->writer.write(t, p.bytes(), dir);
      budget->used += record;
    };
  };
  port.on_tx(observe(Direction::Tx));
  port.on_rx(observe(Direction::Rx));
  points_.push_back(std::move(point));
}

void CaptureSet::capture(Node& node) {
  for (size_t i = 0; i < node.port_count(); ++i) capture(node.port(i));
}

void CaptureSet::close() {
  std::string failures;
  for (auto& p : points_) {
    try {
      p->writer.close();
    } catch (const OutputError& e) {
      failures += failures.empty() ? e.what() : std::string("; ") + e.what();
    }
  }
  if (!failures.empty()) throw OutputError(failures);
}

void CaptureSet::end_at(const std::vector<Record>& log, const Record& cut) {
  // A file's records are in the order of events: it keeps those before its first one from the cut on.
  std::vector<std::optional<uint64_t>> keep(points_.size());
  for (const Record& r : log) {
    if (!r.written || r.key() < cut.key()) continue;
    budget_->used -= r.bytes;
    if (!keep[r.point]) keep[r.point] = r.offset;
  }
  budget_->full_at = cut.at;
  close();
  for (size_t i = 0; i < points_.size(); ++i) {
    if (!keep[i]) continue;
    std::error_code ec;
    std::filesystem::resize_file(points_[i]->writer.path(), PcapWriter::kFileHeaderBytes + *keep[i], ec);
    if (ec)
      throw OutputError(points_[i]->writer.path().string() + ": cannot cut the capture: " + ec.message());
  }
}

std::vector<std::filesystem::path> CaptureSet::files() const {
  std::vector<std::filesystem::path> out;
  for (const auto& p : points_) out.push_back(p->writer.path());
  return out;
}

}  // namespace rdmasim
