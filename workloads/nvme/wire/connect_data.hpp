// The data of a Fabrics Connect command (NVMe-oF 1.1, Figure 20), 1024
// bytes, host to controller:
//
//    0  HOSTID(128)   the host identifier (a UUID)
//   16  CNTLID(16)    0xFFFF on the admin queue (dynamic controller); the
//                     controller's on I/O queues
//   18  reserved
//  256  SUBNQN        NVMe Qualified Name of the subsystem (UTF-8, NUL padded)
//  512  HOSTNQN
//  768  reserved
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "core/bytes.hpp"

namespace rdmasim::nvme {

inline constexpr size_t kConnectDataLen = 1024;
inline constexpr uint16_t kDynamicController = 0xFFFF;

struct ConnectData {
  std::array<uint8_t, 16> hostid{};
  uint16_t cntlid = kDynamicController;
  std::string subnqn, hostnqn;  // at most 255 bytes each (the field keeps a NUL)

  static std::optional<ConnectData> parse(std::span<const std::byte> b) {
    if (b.size() < kConnectDataLen) return std::nullopt;
    ConnectData d;
    for (size_t i = 0; i < 16; ++i) d.hostid[i] = u8(b[i]);
    d.cntlid = load_le16(b.subspan(16, 2));
    auto str = [&](size_t at) {
      std::string s;
      for (size_t i = at; i < at + 256 && b[i] != std::byte{0}; ++i) s.push_back(static_cast<char>(b[i]));
      return s;
    };
    d.subnqn = str(256);
    d.hostnqn = str(512);
    return d;
  }
  void emit(std::span<std::byte> b) const {
    std::fill(b.begin(), b.begin() + kConnectDataLen, std::byte{0});
    for (size_t i = 0; i < 16; ++i) b[i] = std::byte(hostid[i]);
    store_le16(b.subspan(16, 2), cntlid);
    auto put = [&](size_t at, const std::string& s) {
      for (size_t i = 0; i < std::min<size_t>(s.size(), 255); ++i) b[at + i] = std::byte(s[i]);
    };
    put(256, subnqn);
    put(512, hostnqn);
  }
  bool operator==(const ConnectData&) const = default;
};

}  // namespace rdmasim::nvme
