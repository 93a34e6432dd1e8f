// The capture points of a run: one pcap file a captured port, written as
// DIR/pcap/<node>-<port>.pcap, holding every frame the port sends (when it
// starts on the wire) and receives (when it has fully arrived). The files
// together hold at most `max_bytes` of records: the first frame that does
// not fit ends every capture at once, so they stay consistent with each
// other, and full_at() says when.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "core/engine.hpp"
#include "pcap/pcap_writer.hpp"

namespace rdmasim {

class Node;
class Packet;
class Port;

class CaptureSet {
 public:
  // Fills the CRC fields of a frame whose meta.crc_pending is set, and clears
  // the flag. Given by the fabric: CRCs are computed only for frames that a
  // capture observes.
  using Sealer = std::function<void(Packet&)>;

  // Files go under `dir`/pcap/ (created on the first capture).
  CaptureSet(std::filesystem::path dir, Linktype linktype, Sealer sealer = {},
             uint32_t snaplen = PcapWriter::kDefaultSnaplen, uint64_t max_bytes = UINT64_MAX);
  ~CaptureSet();  // closes every file: captures are complete even when a run is cut short
  CaptureSet(const CaptureSet&) = delete;
  CaptureSet& operator=(const CaptureSet&) = delete;

  // Opens the port's file and subscribes to its tx and rx signals. Capturing
  // a port twice is harmless. Throws OutputError if the file cannot
  // be created.
  void capture(Port& port);
  // Captures every port the node has now.
  void capture(Node& node);

  // Flushes and closes every file; frames the ports see afterwards are not
  // written. Throws OutputError if a write failed.
  void close();

  const std::filesystem::path& pcap_dir() const { return pcap_dir_; }
  std::vector<std::filesystem::path> files() const;
  size_t size() const { return points_.size(); }
  // Bytes of records written (headers included) and when the budget ran out.
  uint64_t bytes() const { return budget_->used; }
  std::optional<Time> full_at() const { return budget_->full_at; }

  // A run split over ranks holds each rank's captures in one CaptureSet;
  // the budget is the whole run's. Each set keeps to it alone (the first
  // record that would pass it ends its captures), and logs where each
  // record it tried stands in the one order of events: (time, key of the
  // event, how many records that event had written before). The ranks
  // total what they tried at each check; when it passes the budget, the
  // logs say which record one process would have stopped at, and end_at()
  // cuts every set's files back to the records before it.
  struct Record {
    Time at;
    uint64_t order;   // the event's key (Simulator::running_order)
    uint32_t seq;     // records the same event wrote before it
    uint32_t bytes;   // what it adds to bytes()
    uint32_t point;   // its file, in capture order
    bool written;     // false: the one that did not fit
    uint64_t offset;  // the file's bytes of records before it
    auto key() const { return std::tie(at, order, seq); }
  };
  void log_records(const Simulator& sim) { budget_->sim = &sim; }
  // The records tried since the last call.
  std::vector<Record> take_log() { return std::exchange(budget_->log, {}); }
  // Removes every record of `log` (this set's latest) from `cut` on,
  // closes every file and ends the captures at cut.at.
  void end_at(const std::vector<Record>& log, const Record& cut);

 private:
  struct Point;
  struct Budget {
    explicit Budget(uint64_t m) : max(m) {}
    uint64_t max, used = 0;
    std::optional<Time> full_at;
    const Simulator* sim = nullptr;  // logging (log_records)
    std::vector<Record> log;
    Time last_at;
    uint64_t last_order = 0;
    uint32_t seq = 0;
  };

  std::filesystem::path pcap_dir_;
  Linktype linktype_;
  uint32_t snaplen_;
  std::shared_ptr<const Sealer> sealer_;
  std::shared_ptr<Budget> budget_;
  // Shared with the ports' observers, so that a port outliving this set
  // never calls into freed memory.
  std::vector<std::shared_ptr<Point>> points_;
};

}  // namespace rdmasim
