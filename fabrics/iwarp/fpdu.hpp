// MPA FPDUs (RFC 5044): how a ULPDU (a DDP segment) is framed on
// the TCP stream, with optional markers and the CRC32c.
//
//   FPDU = ULPDU_LENGTH(16) | ULPDU | PAD (0-3, to a multiple of 4) | CRC(32)
//
// ULPDU_LENGTH counts the ULPDU only. The CRC covers everything before it,
// markers included, and goes on the wire least significant byte first
// (docs/captures.md); it is zero when neither side asked for CRCs.
//
// Markers: when the receiver asked for them (M flag), the sender puts a
// 4-byte marker at every 512th octet of its stream, counted from the first
// octet of its first FPDU. A marker is 16 reserved zero bits and FPDUPTR,
// the distance back from the marker to the ULPDU_LENGTH field of the FPDU
// it sits in (0 when the marker comes just before that field). A marker
// that falls exactly where an FPDU starts belongs to that FPDU; Wireshark
// sees it the same way (its CRC covers a leading marker).
//
// A "record" below is one FPDU as it lies in the stream: markers and all.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "core/bytes.hpp"
#include "core/crc.hpp"

namespace rdmasim {

namespace mpa {
inline constexpr size_t kLengthLen = 2;
inline constexpr size_t kCrcLen = 4;
inline constexpr size_t kMarkerLen = 4;
inline constexpr size_t kMarkerInterval = 512;

constexpr size_t pad_length(size_t ulpdu_len) { return (4 - (ulpdu_len + kLengthLen) % 4) % 4; }
// Length of the FPDU without markers.
constexpr size_t fpdu_length(size_t ulpdu_len) {
  return kLengthLen + ulpdu_len + pad_length(ulpdu_len) + kCrcLen;
}

// RFC 5044 (MULPDU): the largest ULPDU whose FPDU, markers included, fits a
// TCP segment of `emss` bytes wherever it starts in the stream.
constexpr size_t mulpdu(size_t emss, bool markers) {
  const size_t overhead = 6 + (markers ? 4 * ((emss + kMarkerInterval - 1) / kMarkerInterval) : 0) + emss % 4;
  return emss > overhead ? emss - overhead : 0;
}
}  // namespace mpa

// Where the markers of one direction of a stream fall: at `base` + 512 k.
// Offsets are positions in the TCP stream (any origin, as long as `base`
// uses the same one; only the difference modulo 512 matters).
struct MarkerPlan {
  bool enabled = false;
  uint64_t base = 0;

  bool at(uint64_t pos) const { return enabled && (pos - base) % mpa::kMarkerInterval == 0; }
  // Stream bytes from `pos` up to the next marker position (512 when at one).
  uint64_t to_next(uint64_t pos) const {
    const uint64_t r = (pos - base) % mpa::kMarkerInterval;
    return r == 0 ? mpa::kMarkerInterval : mpa::kMarkerInterval - r;
  }

  // Bytes a record takes when it starts at `start` and carries an FPDU of
  // `fpdu_len` bytes: the FPDU plus every marker from `start` (inclusive)
  // until its last byte. A marker just after the record belongs to the next.
  size_t record_length(uint64_t start, size_t fpdu_len) const {
    if (!enabled) return fpdu_len;
    uint64_t pos = start;
    size_t left = fpdu_len;
    while (left > 0) {
      if (at(pos)) pos += mpa::kMarkerLen;
      const uint64_t run = std::min<uint64_t>(left, to_next(pos));
      pos += run;
      left -= static_cast<size_t>(run);
    }
    return static_cast<size_t>(pos - start);
  }

  // Lays out `fpdu` (markers not included) at stream position `start` into
  // `record` (record_length() bytes), inserting the markers.
  void scatter(uint64_t start, std::span<const std::byte> fpdu, std::span<std::byte> record) const {
    uint64_t pos = start;
    size_t in = 0, out = 0;
    const bool leading = at(start);
    const uint64_t header_pos = leading ? start + mpa::kMarkerLen : start;
    while (in < fpdu.size()) {
      if (at(pos)) {
        const uint64_t ptr = pos <= header_pos ? 0 : pos - header_pos;
        store_be16(record.subspan(out, 2), 0);
        store_be16(record.subspan(out + 2, 2), static_cast<uint16_t>(ptr));
        out += mpa::kMarkerLen;
        pos += mpa::kMarkerLen;
      }
      const size_t run = static_cast<size_t>(std::min<uint64_t>(fpdu.size() - in, to_next(pos)));
      std::memcpy(record.data() + out, fpdu.data() + in, run);
      in += run;
      out += run;
      pos += run;
    }
  }

  // The reverse: copies the FPDU bytes of `record` (which starts at stream
  // position `start`) to `fpdu`, leaving the markers out. Returns the count.
  size_t gather(uint64_t start, std::span<const std::byte> record, std::span<std::byte> fpdu) const {
    uint64_t pos = start;
    size_t in = 0, out = 0;
    while (in < record.size()) {
      if (at(pos)) {
        in += mpa::kMarkerLen;
        pos += mpa::kMarkerLen;
        continue;
      }
      const size_t run = static_cast<size_t>(std::min<uint64_t>(record.size() - in, to_next(pos)));
      std::memcpy(fpdu.data() + out, record.data() + in, std::min(run, fpdu.size() - out));
      in += run;
      out += run;
      pos += run;
    }
    return out;
  }
};

// CRC32c over a record, its last four bytes (the CRC field) excluded.
inline uint32_t fpdu_crc(std::span<const std::byte> record) {
  return crc32c(record.first(record.size() - mpa::kCrcLen));
}
inline void fpdu_fill_crc(std::span<std::byte> record) {
  store_le32(record.last(mpa::kCrcLen), fpdu_crc(record));
}
inline bool fpdu_crc_ok(std::span<const std::byte> record) {
  return load_le32(record.last(mpa::kCrcLen)) == fpdu_crc(record);
}

// Walks the records of a TCP payload that starts at stream position `start`
// on a record boundary (as every iWARP segment does) and calls
// fn(record_span, ulpdu_length) for each. Stops at the first record that
// does not fit. Returns the bytes walked.
template <class B, class Fn>
size_t for_each_record(std::span<B> payload, uint64_t start, const MarkerPlan& plan, Fn&& fn) {
  size_t i = 0;
  while (i < payload.size()) {
    const uint64_t pos = start + i;
    const size_t hdr = i + (plan.at(pos) ? mpa::kMarkerLen : 0);
    if (hdr + mpa::kLengthLen > payload.size()) break;
    const uint16_t ulpdu = load_be16(payload.subspan(hdr, 2));
    const size_t len = plan.record_length(pos, mpa::fpdu_length(ulpdu));
    if (i + len > payload.size()) break;
    fn(payload.subspan(i, len), ulpdu);
    i += len;
  }
  return i;
}

}  // namespace rdmasim
