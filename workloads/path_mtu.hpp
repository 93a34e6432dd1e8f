// The IBA MTU code (ibv_mtu, IBA 9.6.1: 256..4096 bytes) of a path MTU in
// bytes, as ibv_modify_qp and the CM REQ carry it.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace rdmasim {

inline ibv_mtu mtu_enum(uint32_t mtu) {
  switch (mtu) {
    case 256:
      return IBV_MTU_256;
    case 512:
      return IBV_MTU_512;
    case 1024:
      return IBV_MTU_1024;
    case 2048:
      return IBV_MTU_2048;
    default:
      return IBV_MTU_4096;
  }
}

}  // namespace rdmasim
