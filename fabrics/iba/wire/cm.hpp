// Communication Management messages (IBA 12.6), the class data of a CM MAD
// (mad.hpp), as RDMA CM sends them to connect an RC QP (REQ, REP, RTU)
// and to disconnect it (DREQ, DREP).
// Offsets are from the start of the class data (MAD byte 24).
//
// REQ (12.6.5): 0 Local Communication ID, 8 ServiceID(64), 16 Local CA
// GUID, 28 Local Q_Key, 32 Local QPN(24) Responder Resources(8), 36 Local
// EECN(24) Initiator Depth(8), 40 Remote EECN(24) Remote CM Response
// Timeout(5) Transport Service Type(2) E2E Flow Control(1), 44 Starting
// PSN(24) Local CM Response Timeout(5) Retry Count(3), 48 P_Key(16), 50
// Path MTU(4) RDC Exists(1) RNR Retry Count(3), 51 Max CM Retries(4) SRQ(1)
// Extended Transport Type(3), 52 the primary path (Local LID, Remote LID,
// Local GID, Remote GID, Flow Label(20) Packet Rate(6), Traffic Class, Hop
// Limit, SL(4) Subnet Local(1), Local ACK Timeout(5)), 96 the alternate
// path (same layout, 44 bytes), 140 private data (92 bytes).
//
// REP (12.6.8): 0 Local Communication ID, 4 Remote Communication ID, 8
// Local Q_Key, 12 Local QPN(24), 16 Local EECN(24), 20 Starting PSN(24), 24
// Responder Resources, 25 Initiator Depth, 26 Target ACK Delay(5) Failover
// Accepted(2) E2E Flow Control(1), 27 RNR Retry Count(3) SRQ(1), 28 Local
// CA GUID, 36 private data (196 bytes).
//
// RTU (12.6.9): 0 Local Communication ID, 4 Remote Communication ID, 8
// private data (224 bytes).
//
// DREQ (12.6.10): 0 Local Communication ID, 4 Remote Communication ID, 8
// Remote QPN/EECN(24) reserved(8), 12 private data (220 bytes).
// DREP (12.6.11): 0 Local Communication ID, 4 Remote Communication ID, 8
// private data (224 bytes).
//
// RDMA CM's IP addressing (IBA Annex A11): the ServiceID is
// 0x0000000001 PS(8) Port(16), PS 0x06 for TCP port space; the REQ's
// private data begins with a 36-byte header: MajV(4) MinV(4), IPV(4)
// reserved(4), source port(16), source IP(128), destination IP(128) (IPv4:
// the last 4 bytes, 12 zero bytes before). Big-endian.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/bytes.hpp"
#include "fabrics/iba/wire/mad.hpp"

namespace rdmasim {

enum class CmAttribute : uint16_t {
  req = 0x0010,
  mra = 0x0011,
  rej = 0x0012,
  rep = 0x0013,
  rtu = 0x0014,
  dreq = 0x0015,
  drep = 0x0016,
};

inline constexpr size_t kCmReqPrivateLen = 92, kCmRepPrivateLen = 196, kCmRtuPrivateLen = 224;
inline constexpr size_t kCmDreqPrivateLen = 220, kCmDrepPrivateLen = 224;
inline constexpr size_t kIpCmHeaderLen = 36;

// RDMA CM's service ID for a TCP-space port (Annex A11.2.1).
constexpr uint64_t ip_cm_service_id(uint16_t port) { return 0x0000000001060000ull | port; }

struct CmPath {
  uint16_t local_lid = 0, remote_lid = 0;
  std::array<uint8_t, 16> local_gid{}, remote_gid{};
  uint32_t flow_label = 0;
  uint8_t packet_rate = 0, traffic_class = 0, hop_limit = 0, sl = 0;
  bool subnet_local = true;
  uint8_t local_ack_timeout = 0;
  bool operator==(const CmPath&) const = default;
};

struct CmReq {
  uint32_t local_comm_id = 0;
  uint64_t service_id = 0;
  uint64_t local_ca_guid = 0;
  uint32_t local_qkey = 0;
  uint32_t local_qpn = 0;
  uint8_t responder_resources = 0, initiator_depth = 0;
  uint8_t remote_cm_response_timeout = 20, transport_service_type = 0;  // 0: RC
  bool e2e_flow_control = true;
  uint32_t starting_psn = 0;
  uint8_t local_cm_response_timeout = 20, retry_count = 7;
  uint16_t pkey = 0xFFFF;
  uint8_t path_mtu = 5;  // IBA MTU code (ibv_mtu): 5 = 4096
  uint8_t rnr_retry_count = 7, max_cm_retries = 15;
  bool srq = false;
  CmPath primary;
  std::array<uint8_t, kCmReqPrivateLen> private_data{};

  static std::optional<CmReq> parse(std::span<const std::byte> d);
  void emit(std::span<std::byte> d) const;
  bool operator==(const CmReq&) const = default;
};

struct CmRep {
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  uint32_t local_qkey = 0, local_qpn = 0, starting_psn = 0;
  uint8_t responder_resources = 0, initiator_depth = 0;
  uint8_t target_ack_delay = 0, failover_accepted = 0;
  bool e2e_flow_control = true;
  uint8_t rnr_retry_count = 7;
  bool srq = false;
  uint64_t local_ca_guid = 0;
  std::array<uint8_t, kCmRepPrivateLen> private_data{};

  static std::optional<CmRep> parse(std::span<const std::byte> d);
  void emit(std::span<std::byte> d) const;
  bool operator==(const CmRep&) const = default;
};

struct CmRtu {
  uint32_t local_comm_id = 0, remote_comm_id = 0;

  static std::optional<CmRtu> parse(std::span<const std::byte> d);
  void emit(std::span<std::byte> d) const;
  bool operator==(const CmRtu&) const = default;
};

// The private data of a DREQ and a DREP are zeros (rdma_disconnect sends none).
struct CmDreq {
  uint32_t local_comm_id = 0, remote_comm_id = 0;
  uint32_t remote_qpn = 0;  // the QP the receiver disconnects

  static std::optional<CmDreq> parse(std::span<const std::byte> d);
  void emit(std::span<std::byte> d) const;
  bool operator==(const CmDreq&) const = default;
};

struct CmDrep {
  uint32_t local_comm_id = 0, remote_comm_id = 0;

  static std::optional<CmDrep> parse(std::span<const std::byte> d);
  void emit(std::span<std::byte> d) const;
  bool operator==(const CmDrep&) const = default;
};

// The IP CM header at the start of a REQ's private data (Annex A11.2.2.1).
struct IpCmHeader {
  uint8_t ip_version = 4;  // 4 or 6
  uint16_t source_port = 0;
  std::array<uint8_t, 16> source_ip{}, destination_ip{};  // IPv4: in the last 4 bytes

  static std::optional<IpCmHeader> parse(std::span<const std::byte> p);
  void emit(std::span<std::byte> p) const;
  bool operator==(const IpCmHeader&) const = default;
};

}  // namespace rdmasim
