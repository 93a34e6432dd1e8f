#include "fabrics/iwarp/mpa_seal.hpp"

#include "fabrics/iwarp/fpdu.hpp"
#include "fabrics/iwarp/mpa.hpp"

namespace rdmasim {

void mpa_seal_segment(std::span<std::byte> tcp_segment, const MpaStreamInfo& info) {
  if (!info.crc) return;
  auto v = TcpView::check(tcp_segment);
  if (!v || !v->valid()) return;
  auto payload = v->payload();
  if (payload.empty() || mpa::is_frame(payload)) return;
  // Stream positions relative to the first FPDU: only their value modulo 512
  // matters, and 2^32 is a multiple of 512, so sequence wrap is harmless.
  const MarkerPlan plan{info.markers, 0};
  const uint32_t start = v->seq() - info.first_fpdu_seq;
  for_each_record(payload, start, plan, [](std::span<std::byte> record, uint16_t) { fpdu_fill_crc(record); });
}

void iwarp_seal(std::span<std::byte> tcp_segment, const TcpPseudoHeader& ph, const MpaStreamInfo* info) {
  if (info) mpa_seal_segment(tcp_segment, *info);  // the CRC is inside what the checksum covers
  tcp_fill_checksum(tcp_segment, ph);
}

void MpaStreamRegistry::seal(std::span<std::byte> tcp_segment, const TcpPseudoHeader& ph) const {
  auto v = ConstTcpView::check(tcp_segment);
  const MpaStreamInfo* info = v ? find(ph, v->src_port(), v->dst_port()) : nullptr;
  iwarp_seal(tcp_segment, ph, info);
}

MpaStreamRegistry::Key MpaStreamRegistry::key(const TcpPseudoHeader& ip, uint16_t src_port,
                                              uint16_t dst_port) {
  Key k{};
  k[0] = ip.ipv6;
  if (ip.ipv6) {
    for (size_t i = 0; i < 16; ++i) {
      k[1 + i] = ip.src6.octets[i];
      k[17 + i] = ip.dst6.octets[i];
    }
  } else {
    for (size_t i = 0; i < 4; ++i) {
      k[1 + i] = ip.src4.octets[i];
      k[17 + i] = ip.dst4.octets[i];
    }
  }
  k[33] = static_cast<uint8_t>(src_port >> 8);
  k[34] = static_cast<uint8_t>(src_port);
  k[35] = static_cast<uint8_t>(dst_port >> 8);
  k[36] = static_cast<uint8_t>(dst_port);
  return k;
}

}  // namespace rdmasim
