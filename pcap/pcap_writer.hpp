// A capture file writer over libpcap: classic pcap with nanosecond
// timestamps (magic 0xa1b23c4d), one linktype a file. It holds a 64 KiB
// buffer and no file descriptor: the file is opened for each write of the
// buffer, so that a run may capture more ports than it may open files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "core/units.hpp"

struct pcap;         // pcap_t
struct pcap_dumper;  // pcap_dumper_t

namespace rdmasim {

// tcpdump.org link-layer header types.
enum class Linktype : uint16_t {
  Ethernet = 1,      // LINKTYPE_ETHERNET: Ethernet fabrics (roce_v1, roce_v2, iwarp)
  Erf = 197,         // LINKTYPE_ERF: ib frames, each in an ERF record of type INFINIBAND
  Infiniband = 247,  // LINKTYPE_INFINIBAND: raw ib frames (Wireshark 4.0 cannot open it)
};

// Which way a frame crossed the capture point. Only ERF records keep it (as
// the capture interface: 0 sent, 1 received); classic pcap has no field for it.
enum class Direction : uint8_t { Tx, Rx };

class PcapWriter {
 public:
  static constexpr uint32_t kDefaultSnaplen = 65535;
  static constexpr uint64_t kFileHeaderBytes = 24;  // the pcap file header, before the first record

  // Creates (truncates) `path`. Throws OutputError (path, reason) when it cannot.
  PcapWriter(const std::filesystem::path& path, Linktype linktype, uint32_t snaplen = kDefaultSnaplen);
  ~PcapWriter();  // closes, swallowing errors: call close() to see them
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // Appends one frame seen at simulated time `t` (>= 0; written truncated to
  // nanoseconds). Frames longer than the snap length are cut to it, keeping
  // their original length in the record. Throws std::logic_error when closed,
  // OutputError when the file cannot take it (then it is closed).
  void write(Time t, std::span<const std::byte> frame, Direction dir = Direction::Tx);

  // Pushes buffered records to the file. Throws OutputError on a write error.
  void flush();
  // Flushes and closes; the file is complete afterwards. Idempotent. Throws
  // OutputError if a write failed (the file is closed anyway).
  void close();

  bool is_open() const { return dumper_ != nullptr; }
  Linktype linktype() const { return linktype_; }
  uint32_t snaplen() const { return snaplen_; }
  const std::filesystem::path& path() const { return path_; }
  uint64_t frames() const { return frames_; }
  uint64_t bytes() const { return bytes_; }
  // What write() adds to bytes() for a frame of `frame_len` bytes.
  uint64_t record_bytes(size_t frame_len) const;  // records written, headers included (not the file header)

 private:
  void release() noexcept;

  std::filesystem::path path_;
  Linktype linktype_;
  uint32_t snaplen_;
  pcap* pcap_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  std::unique_ptr<char[]> buffer_;  // the file's stdio buffer; outlives the FILE
  uint64_t frames_ = 0;
  uint64_t bytes_ = 0;
  std::vector<std::byte> record_;  // ERF header + frame, reused between writes
};

}  // namespace rdmasim
