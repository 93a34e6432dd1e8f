#include "fabrics/iba/wire/cm.hpp"

#include <algorithm>

namespace rdmasim {
namespace {

void put_gid(std::span<std::byte> b, const std::array<uint8_t, 16>& g) {
  for (size_t i = 0; i < 16; ++i) b[i] = std::byte(g[i]);
}
std::array<uint8_t, 16> get_gid(std::span<const std::byte> b) {
  std::array<uint8_t, 16> g{};
  for (size_t i = 0; i < 16; ++i) g[i] = u8(b[i]);
  return g;
}
template <size_t N>
void put_bytes(std::span<std::byte> b, const std::array<uint8_t, N>& a) {
  for (size_t i = 0; i < N; ++i) b[i] = std::byte(a[i]);
}
template <size_t N>
std::array<uint8_t, N> get_bytes(std::span<const std::byte> b) {
  std::array<uint8_t, N> a{};
  for (size_t i = 0; i < N; ++i) a[i] = u8(b[i]);
  return a;
}

// The 44 bytes of a path (12.6.5, primary or alternate).
void emit_path(std::span<std::byte> b, const CmPath& p) {
  store_be16(b.subspan(0, 2), p.local_lid);
  store_be16(b.subspan(2, 2), p.remote_lid);
  put_gid(b.subspan(4, 16), p.local_gid);
  put_gid(b.subspan(20, 16), p.remote_gid);
  store_be32(b.subspan(36, 4), (p.flow_label & 0xFFFFF) << 12 | (p.packet_rate & 0x3F));
  b[40] = std::byte(p.traffic_class);
  b[41] = std::byte(p.hop_limit);
  b[42] = std::byte((p.sl & 0xF) << 4 | (p.subnet_local ? 1 : 0) << 3);
  b[43] = std::byte((p.local_ack_timeout & 0x1F) << 3);
}
CmPath parse_path(std::span<const std::byte> b) {
  CmPath p;
  p.local_lid = load_be16(b.subspan(0, 2));
  p.remote_lid = load_be16(b.subspan(2, 2));
  p.local_gid = get_gid(b.subspan(4, 16));
  p.remote_gid = get_gid(b.subspan(20, 16));
  const uint32_t w = load_be32(b.subspan(36, 4));
  p.flow_label = w >> 12;
  p.packet_rate = w & 0x3F;
  p.traffic_class = u8(b[40]);
  p.hop_limit = u8(b[41]);
  p.sl = u8(b[42]) >> 4;
  p.subnet_local = (u8(b[42]) >> 3) & 1;
  p.local_ack_timeout = u8(b[43]) >> 3;
  return p;
}

}  // namespace

std::optional<CmReq> CmReq::parse(std::span<const std::byte> d) {
  if (d.size() < kMadDataLen) return std::nullopt;
  CmReq r;
  r.local_comm_id = load_be32(d.subspan(0, 4));
  r.service_id = load_be64(d.subspan(8, 8));
  r.local_ca_guid = load_be64(d.subspan(16, 8));
  r.local_qkey = load_be32(d.subspan(28, 4));
  r.local_qpn = load_be24(d.subspan(32, 3));
  r.responder_resources = u8(d[35]);
  r.initiator_depth = u8(d[39]);
  r.remote_cm_response_timeout = u8(d[43]) >> 3;
  r.transport_service_type = (u8(d[43]) >> 1) & 3;
  r.e2e_flow_control = u8(d[43]) & 1;
  r.starting_psn = load_be24(d.subspan(44, 3));
  r.local_cm_response_timeout = u8(d[47]) >> 3;
  r.retry_count = u8(d[47]) & 7;
  r.pkey = load_be16(d.subspan(48, 2));
  r.path_mtu = u8(d[50]) >> 4;
  r.rnr_retry_count = u8(d[50]) & 7;
  r.max_cm_retries = u8(d[51]) >> 4;
  r.srq = (u8(d[51]) >> 3) & 1;
  r.primary = parse_path(d.subspan(52, 44));
  r.private_data = get_bytes<kCmReqPrivateLen>(d.subspan(140, kCmReqPrivateLen));
  return r;
}

void CmReq::emit(std::span<std::byte> d) const {
  std::fill(d.begin(), d.begin() + kMadDataLen, std::byte{0});
  store_be32(d.subspan(0, 4), local_comm_id);
  store_be64(d.subspan(8, 8), service_id);
  store_be64(d.subspan(16, 8), local_ca_guid);
  store_be32(d.subspan(28, 4), local_qkey);
  store_be24(d.subspan(32, 3), local_qpn);
  d[35] = std::byte(responder_resources);
  d[39] = std::byte(initiator_depth);
  d[43] = std::byte((remote_cm_response_timeout & 0x1F) << 3 | (transport_service_type & 3) << 1 |
                    (e2e_flow_control ? 1 : 0));
  store_be24(d.subspan(44, 3), starting_psn);
  d[47] = std::byte((local_cm_response_timeout & 0x1F) << 3 | (retry_count & 7));
  store_be16(d.subspan(48, 2), pkey);
  d[50] = std::byte((path_mtu & 0xF) << 4 | (rnr_retry_count & 7));
  d[51] = std::byte((max_cm_retries & 0xF) << 4 | (srq ? 1 : 0) << 3);
  emit_path(d.subspan(52, 44), primary);
  // No alternate path: its 44 bytes stay zero.
  put_bytes(d.subspan(140, kCmReqPrivateLen), private_data);
}

std::optional<CmRep> CmRep::parse(std::span<const std::byte> d) {
  if (d.size() < kMadDataLen) return std::nullopt;
  CmRep r;
  r.local_comm_id = load_be32(d.subspan(0, 4));
  r.remote_comm_id = load_be32(d.subspan(4, 4));
  r.local_qkey = load_be32(d.subspan(8, 4));
  r.local_qpn = load_be24(d.subspan(12, 3));
  r.starting_psn = load_be24(d.subspan(20, 3));
  r.responder_resources = u8(d[24]);
  r.initiator_depth = u8(d[25]);
  r.target_ack_delay = u8(d[26]) >> 3;
  r.failover_accepted = (u8(d[26]) >> 1) & 3;
  r.e2e_flow_control = u8(d[26]) & 1;
  r.rnr_retry_count = u8(d[27]) >> 5;
  r.srq = (u8(d[27]) >> 4) & 1;
  r.local_ca_guid = load_be64(d.subspan(28, 8));
  r.private_data = get_bytes<kCmRepPrivateLen>(d.subspan(36, kCmRepPrivateLen));
  return r;
}

void CmRep::emit(std::span<std::byte> d) const {
  std::fill(d.begin(), d.begin() + kMadDataLen, std::byte{0});
  store_be32(d.subspan(0, 4), local_comm_id);
  store_be32(d.subspan(4, 4), remote_comm_id);
  store_be32(d.subspan(8, 4), local_qkey);
  store_be24(d.subspan(12, 3), local_qpn);
  store_be24(d.subspan(20, 3), starting_psn);
  d[24] = std::byte(responder_resources);
  d[25] = std::byte(initiator_depth);
  d[26] =
      std::byte((target_ack_delay & 0x1F) << 3 | (failover_accepted & 3) << 1 | (e2e_flow_control ? 1 : 0));
  d[27] = std::byte((rnr_retry_count & 7) << 5 | (srq ? 1 : 0) << 4);
  store_be64(d.subspan(28, 8), local_ca_guid);
  put_bytes(d.subspan(36, kCmRepPrivateLen), private_data);
}

std::optional<CmRtu> CmRtu::parse(std::span<const std::byte> d) {
  if (d.size() < kMadDataLen) return std::nullopt;
  return CmRtu{load_be32(d.subspan(0, 4)), load_be32(d.subspan(4, 4))};
}

void CmRtu::emit(std::span<std::byte> d) const {
  std::fill(d.begin(), d.begin() + kMadDataLen, std::byte{0});
  store_be32(d.subspan(0, 4), local_comm_id);
  store_be32(d.subspan(4, 4), remote_comm_id);
}

std::optional<CmDreq> CmDreq::parse(std::span<const std::byte> d) {
  if (d.size() < kMadDataLen) return std::nullopt;
  return CmDreq{load_be32(d.subspan(0, 4)), load_be32(d.subspan(4, 4)), load_be24(d.subspan(8, 3))};
}

void CmDreq::emit(std::span<std::byte> d) const {
  std::fill(d.begin(), d.begin() + kMadDataLen, std::byte{0});
  store_be32(d.subspan(0, 4), local_comm_id);
  store_be32(d.subspan(4, 4), remote_comm_id);
  store_be24(d.subspan(8, 3), remote_qpn);
}

// A DREP has the layout of an RTU (the two IDs, then private data).
std::optional<CmDrep> CmDrep::parse(std::span<const std::byte> d) {
  const auto r = CmRtu::parse(d);
  if (!r) return std::nullopt;
  return CmDrep{r->local_comm_id, r->remote_comm_id};
}

void CmDrep::emit(std::span<std::byte> d) const { CmRtu{local_comm_id, remote_comm_id}.emit(d); }

std::optional<IpCmHeader> IpCmHeader::parse(std::span<const std::byte> p) {
  if (p.size() < kIpCmHeaderLen) return std::nullopt;
  IpCmHeader h;
  h.ip_version = u8(p[1]) >> 4;
  h.source_port = load_be16(p.subspan(2, 2));
  h.source_ip = get_gid(p.subspan(4, 16));
  h.destination_ip = get_gid(p.subspan(20, 16));
  return h;
}

void IpCmHeader::emit(std::span<std::byte> p) const {
  p[0] = std::byte{0};  // MajV 0, MinV 0
  p[1] = std::byte(ip_version << 4);
  store_be16(p.subspan(2, 2), source_port);
  put_gid(p.subspan(4, 16), source_ip);
  put_gid(p.subspan(20, 16), destination_ip);
}

}  // namespace rdmasim
