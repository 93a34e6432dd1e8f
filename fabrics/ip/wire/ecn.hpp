// ECN codepoints (RFC 3168 section 5): the low two bits of the IPv4 TOS byte
// and of the IPv6 Traffic Class.
#pragma once

#include <cstdint>

namespace rdmasim {

enum class Ecn : uint8_t {
  NotEct = 0b00,  // not ECN-capable transport
  Ect1 = 0b01,
  Ect0 = 0b10,  // what RoCE v2 NICs send (DCQCN) and ECN-capable TCP uses
  Ce = 0b11,    // congestion experienced: set by a switch instead of dropping
};

// A switch may mark only ECN-capable packets (RFC 3168 5).
constexpr bool is_ect(Ecn e) { return e == Ecn::Ect0 || e == Ecn::Ect1; }

}  // namespace rdmasim
