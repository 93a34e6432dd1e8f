#include "fabrics/iwarp/rdmap.hpp"

namespace rdmasim {

std::string_view describe(const TermError& e) {
  // The names Wireshark's iWARP dissector prints (packet-iwarp-ddp-rdmap.c).
  switch (e.layer) {
    case TermLayer::rdmap:
      switch (e.code) {
        case 0x00:
          return e.etype == 0 ? "RDMAP: local catastrophic error" : "RDMAP: invalid STag";
        case 0x01:
          return "RDMAP: base or bounds violation";
        case 0x02:
          return "RDMAP: access rights violation";
        case 0x03:
          return "RDMAP: STag not associated with RDMAP stream";
        case 0x04:
          return "RDMAP: TO wrap";
        case 0x05:
          return "RDMAP: invalid RDMAP version";
        case 0x06:
          return "RDMAP: unexpected opcode";
        case 0x07:
          return "RDMAP: catastrophic error, localized to RDMAP stream";
        case 0x08:
          return "RDMAP: catastrophic error, global";
        case 0x09:
          return "RDMAP: STag cannot be invalidated";
        default:
          return "RDMAP: unspecified error";
      }
    case TermLayer::ddp:
      if (e.etype == 0x1) {
        switch (e.code) {
          case 0x00:
            return "DDP tagged buffer: invalid STag";
          case 0x01:
            return "DDP tagged buffer: base or bounds violation";
          case 0x02:
            return "DDP tagged buffer: STag not associated with DDP stream";
          case 0x03:
            return "DDP tagged buffer: TO wrap";
          case 0x04:
            return "DDP tagged buffer: invalid DDP version";
          default:
            break;
        }
      } else if (e.etype == 0x2) {
        switch (e.code) {
          case 0x01:
            return "DDP untagged buffer: invalid QN";
          case 0x02:
            return "DDP untagged buffer: invalid MSN, no buffer available";
          case 0x03:
            return "DDP untagged buffer: invalid MSN, MSN range is not valid";
          case 0x04:
            return "DDP untagged buffer: invalid MO";
          case 0x05:
            return "DDP untagged buffer: DDP message too long for available buffer";
          case 0x06:
            return "DDP untagged buffer: invalid DDP version";
          default:
            break;
        }
      }
      return "DDP: local catastrophic error";
    case TermLayer::llp:
      switch (e.code) {
        case 0x01:
          return "MPA: TCP connection lost";
        case 0x02:
          return "MPA: CRC error";
        case 0x03:
          return "MPA: marker and ULPDU length mismatch";
        case 0x04:
          return "MPA: invalid request or reply frame";
        default:
          return "MPA: unspecified error";
      }
  }
  return "unknown error";
}

}  // namespace rdmasim
