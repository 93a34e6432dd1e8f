// NVMe-oF's RDMA_CM private data (NVMe-oF 1.1, 7.3.4 to 7.3.6), carried in
// the consumer part of an RDMA CM REQ, REP or REJ (IB CM, or an MPA
// request/reply on iWARP). Little-endian, 32 bytes:
//
//  REQUEST  0 RECFMT(16) 2 QID(16) 4 HRQSIZE(16) 6 HSQSIZE(16, 0's based) 8 CNTLID(16) 10 reserved
//  ACCEPT   0 RECFMT(16) 2 CRQSIZE(16) 4 reserved
//  REJECT   0 RECFMT(16) 2 STS(16)
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "core/bytes.hpp"

namespace rdmasim::nvme {

inline constexpr size_t kCmPrivateLen = 32;

struct CmRequest {
  uint16_t recfmt = 0;
  uint16_t qid = 0;      // 0: the admin queue
  uint16_t hrqsize = 0;  // receive queue entries the host posts
  uint16_t hsqsize = 0;  // submission queue size, 0's based
  uint16_t cntlid = 0;

  static std::optional<CmRequest> parse(std::span<const std::byte> b) {
    if (b.size() < kCmPrivateLen) return std::nullopt;
    return CmRequest{load_le16(b.first(2)), load_le16(b.subspan(2, 2)), load_le16(b.subspan(4, 2)),
                     load_le16(b.subspan(6, 2)), load_le16(b.subspan(8, 2))};
  }
  void emit(std::span<std::byte> b) const {
    std::fill(b.begin(), b.begin() + kCmPrivateLen, std::byte{0});
    store_le16(b.first(2), recfmt);
    store_le16(b.subspan(2, 2), qid);
    store_le16(b.subspan(4, 2), hrqsize);
    store_le16(b.subspan(6, 2), hsqsize);
    store_le16(b.subspan(8, 2), cntlid);
  }
  bool operator==(const CmRequest&) const = default;
};

struct CmAccept {
  uint16_t recfmt = 0;
  uint16_t crqsize = 0;  // receive queue entries the controller posts

  static std::optional<CmAccept> parse(std::span<const std::byte> b) {
    if (b.size() < kCmPrivateLen) return std::nullopt;
    return CmAccept{load_le16(b.first(2)), load_le16(b.subspan(2, 2))};
  }
  void emit(std::span<std::byte> b) const {
    std::fill(b.begin(), b.begin() + kCmPrivateLen, std::byte{0});
    store_le16(b.first(2), recfmt);
    store_le16(b.subspan(2, 2), crqsize);
  }
  bool operator==(const CmAccept&) const = default;
};

}  // namespace rdmasim::nvme
