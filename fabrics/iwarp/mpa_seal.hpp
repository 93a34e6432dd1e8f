// Sealing iWARP segments: filling, when a frame is observed, the fields the
// model leaves as placeholders (meta.crc_pending): each FPDU's MPA CRC
// (RFC 5044), then the TCP checksum over the IP pseudo-header.
//
// The MPA CRC depends on state the bytes do not carry: whether CRCs were
// negotiated (a zero CRC field is correct when they were not) and where the
// markers of this direction fall. IwarpEndpoint describes its sending
// direction with an MpaStreamInfo and can publish it in an
// MpaStreamRegistry, which a capture point consults by 4-tuple.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>

#include "fabrics/ip/tcp/tcp_connection.hpp"
#include "fabrics/ip/wire/tcp.hpp"

namespace rdmasim {

struct MpaStreamInfo {
  bool crc = false;
  bool markers = false;
  uint32_t first_fpdu_seq = 0;  // TCP sequence number of the first FPDU octet: the marker base
  bool operator==(const MpaStreamInfo&) const = default;
};

// Fills the MPA CRC of every FPDU in `tcp_segment` (bytes from the TCP
// header on). Segments that carry an MPA request or reply, or no payload,
// are left alone; so is everything when CRCs are off.
void mpa_seal_segment(std::span<std::byte> tcp_segment, const MpaStreamInfo& info);

// MPA CRCs (when `info` is given) and then the TCP checksum.
void iwarp_seal(std::span<std::byte> tcp_segment, const TcpPseudoHeader& ph, const MpaStreamInfo* info);

// MPA stream descriptions by sending 4-tuple.
class MpaStreamRegistry {
 public:
  void publish(const TcpFlow& sender, const MpaStreamInfo& info) {
    streams_[key(sender.ip, sender.local_port, sender.remote_port)] = info;
  }
  void forget(const TcpFlow& sender) {
    streams_.erase(key(sender.ip, sender.local_port, sender.remote_port));
  }
  const MpaStreamInfo* find(const TcpPseudoHeader& ip, uint16_t src_port, uint16_t dst_port) const {
    auto it = streams_.find(key(ip, src_port, dst_port));
    return it == streams_.end() ? nullptr : &it->second;
  }
  // Looks the segment's stream up and seals it (only the TCP checksum when unknown).
  void seal(std::span<std::byte> tcp_segment, const TcpPseudoHeader& ph) const;
  size_t size() const { return streams_.size(); }

 private:
  using Key = std::array<uint8_t, 37>;
  static Key key(const TcpPseudoHeader& ip, uint16_t src_port, uint16_t dst_port);
  std::map<Key, MpaStreamInfo> streams_;
};

}  // namespace rdmasim
