#include "pcap/pcap_writer.hpp"

#include <fcntl.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/errors.hpp"
#include "pcap/erf.hpp"

namespace rdmasim {

namespace {

// The capture file as a stdio stream that holds no descriptor between
// writes: each time stdio writes out its buffer, the file is opened,
// appended to and closed again. One open file a capture ran past the usual
// 1,024 descriptors (ulimit -n) at 2,000 hosts' ports; an open and a close
// a 64 KiB buffer cost a few microseconds.
struct AppendTo {
  std::string path;
};

// fopencookie(3)'s write: the bytes written, 0 with errno on an error.
ssize_t append(void* cookie, const char* buf, size_t size) {
  const int fd = ::open(static_cast<AppendTo*>(cookie)->path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, buf + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const int err = errno;
  if (::close(fd) != 0 && done == size) return 0;  // the bytes may not have reached the file
  errno = err;
  return static_cast<ssize_t>(done);
}

int forget(void* cookie) {
  delete static_cast<AppendTo*>(cookie);
  return 0;
}

// Creates (truncates) `path` and returns a stream appending to it; null with errno when it cannot.
std::FILE* open_appending(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0 || ::close(fd) != 0) return nullptr;
  auto* cookie = new AppendTo{path.string()};
  std::FILE* f = fopencookie(cookie, "w", {nullptr, append, nullptr, forget});
  if (!f) delete cookie;
  return f;
}

}  // namespace

PcapWriter::PcapWriter(const std::filesystem::path& path, Linktype linktype, uint32_t snaplen)
    : path_(path), linktype_(linktype), snaplen_(snaplen) {
  if (linktype == Linktype::Erf && snaplen < ErfHeader::kLen)
    throw std::logic_error("an ERF capture needs a snap length of at least 16 bytes");
  pcap_ = pcap_open_dead_with_tstamp_precision(static_cast<int>(linktype), static_cast<int>(snaplen),
                                               PCAP_TSTAMP_PRECISION_NANO);
  if (!pcap_) throw std::runtime_error("cannot create a pcap handle for " + path.string());
  // stdio's default buffer (one file-system block) is smaller than one
  // 4 KiB-MTU frame: every frame would be a write(2). 64 KiB batches about
  // fifteen of them and stays small with a capture on every port.
  constexpr size_t kBuffer = 64 * 1024;
  buffer_ = std::make_unique<char[]>(kBuffer);
  std::FILE* f = open_appending(path);
  if (f && std::setvbuf(f, buffer_.get(), _IOFBF, kBuffer) == 0) dumper_ = pcap_dump_fopen(pcap_, f);
  if (!dumper_) {
    const std::string why = f ? std::string(pcap_geterr(pcap_)) : std::strerror(errno);
    if (f) std::fclose(f);
    pcap_close(pcap_);
    pcap_ = nullptr;
    throw OutputError(path.string() + ": cannot write capture: " + why);
  }
}

PcapWriter::~PcapWriter() { release(); }

void PcapWriter::write(Time t, std::span<const std::byte> frame, Direction dir) {
  if (!dumper_) throw std::logic_error("write to a closed capture " + path_.string());
  const uint64_t ns = static_cast<uint64_t>(std::max<int64_t>(t.count(), 0)) / 1000;

  std::span<const std::byte> record = frame;
  if (linktype_ == Linktype::Erf) {
    // The ERF length fields are 16 bits; no frame of any fabric comes near.
    if (frame.size() > UINT16_MAX - ErfHeader::kLen)
      throw std::logic_error("frame too long for an ERF record");
    const size_t kept = std::min<size_t>(frame.size(), snaplen_ - ErfHeader::kLen);
    record_.resize(ErfHeader::kLen + kept);
    ErfHeader h = ErfHeader::infiniband(ns, static_cast<uint16_t>(frame.size()));
    h.rlen = static_cast<uint16_t>(record_.size());
    // Records are packed back to back with no padding (varying length); the
    // interface bits tell the direction.
    h.flags = kErfFlagVaryingLength | (dir == Direction::Rx ? 1 : 0);
    h.emit(*ErfView::check(record_));
    std::memcpy(record_.data() + ErfHeader::kLen, frame.data(), kept);
    record = record_;
  }

  pcap_pkthdr hdr{};
  hdr.ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  hdr.ts.tv_usec = static_cast<suseconds_t>(ns % 1'000'000'000);  // nanoseconds: the file says so
  hdr.len =
      static_cast<bpf_u_int32>(linktype_ == Linktype::Erf ? ErfHeader::kLen + frame.size() : frame.size());
  hdr.caplen = static_cast<bpf_u_int32>(std::min<size_t>(record.size(), snaplen_));
  errno = 0;
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &hdr, reinterpret_cast<const u_char*>(record.data()));
  // A full disk shows here, at the first buffer that cannot be written, not
  // at the end of a long run.
  if (std::ferror(pcap_dump_file(dumper_))) {
    const int err = errno ? errno : EIO;
    release();
    throw OutputError(path_.string() + ": cannot write capture: " + std::strerror(err));
  }
  ++frames_;
  bytes_ += record_bytes(frame.size());
}

uint64_t PcapWriter::record_bytes(size_t frame_len) const {
  constexpr uint64_t kRecordHeader = 16;  // pcap_pkthdr on disk: seconds, fraction, caplen, len
  const uint64_t record = linktype_ == Linktype::Erf ? ErfHeader::kLen + frame_len : frame_len;
  return kRecordHeader + std::min<uint64_t>(record, snaplen_);
}

void PcapWriter::flush() {
  if (!dumper_) return;
  if (pcap_dump_flush(dumper_) != 0 || std::ferror(pcap_dump_file(dumper_)))
    throw OutputError(path_.string() + ": cannot write capture: " + std::strerror(errno));
}

void PcapWriter::close() {
  if (!dumper_) return;
  const bool failed = pcap_dump_flush(dumper_) != 0 || std::ferror(pcap_dump_file(dumper_));
  const int err = errno;
  release();
  if (failed) throw OutputError(path_.string() + ": cannot write capture: " + std::strerror(err));
}

void PcapWriter::release() noexcept {
  if (dumper_) pcap_dump_close(dumper_);  // flushes and fcloses
  if (pcap_) pcap_close(pcap_);
  dumper_ = nullptr;
  pcap_ = nullptr;
}

}  // namespace rdmasim
