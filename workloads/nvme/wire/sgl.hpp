// NVMe SGL descriptor (NVM Express Base 2.0, 4.1.8), 16 bytes, as NVMe over
// Fabrics uses it in a command's DPTR (NVMe-oF 1.1, 2.3 and 7.3.2):
//
//  Keyed SGL Data Block (type 4): the host's buffer the target reaches by
//  RDMA (READ for host-to-controller data, WRITE for controller-to-host):
//   0  Address(64)     the host's virtual address
//   8  Length(24)      bytes
//  11  Key(32)         the R_Key (STag) of the host's region
//  15  Identifier      type << 4 | subtype (0: address, 0xF: invalidate the key)
//
//  SGL Data Block (type 0) with subtype 1 (offset): in-capsule data
//   0  Address(64)     offset of the data in the capsule, after the SQE
//   8  Length(32)
//  12  reserved(24)
//  15  Identifier      0x01
//
//  Transport SGL Data Block (type 5, subtype 0xA): data the transport
//  moves by itself (NVMe/TCP: R2T and H2CData, C2HData), as Linux's
//  nvme-tcp describes a command's data that is not in the capsule:
//   0  Address(64)     0
//   8  Length(32)
//  15  Identifier      0x5A
//
// Everything is little-endian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

#include "core/bytes.hpp"

namespace rdmasim::nvme {

enum class SglType : uint8_t { data_block = 0x0, keyed_data_block = 0x4, transport_data_block = 0x5 };
enum class SglSubtype : uint8_t { address = 0x0, offset = 0x1, transport_a = 0xA, invalidate_key = 0xF };

template <class B>
class SglViewT {
  template <class>
  friend class SglViewT;
  static constexpr bool kMut = !std::is_const_v<B>;
  std::span<B> b_;
  explicit SglViewT(std::span<B> b) : b_(b) {}

 public:
  static constexpr size_t kLen = 16;
  static std::optional<SglViewT> check(std::span<B> b) {
    if (b.size() < kLen) return std::nullopt;
    return SglViewT(b.first(kLen));
  }
  operator SglViewT<const std::byte>() const requires kMut { return SglViewT<const std::byte>(b_); }

  uint8_t identifier() const { return u8(b_[15]); }
  SglType type() const { return static_cast<SglType>(identifier() >> 4); }
  SglSubtype subtype() const { return static_cast<SglSubtype>(identifier() & 0xF); }
  uint64_t address() const { return load_le64(b_.first(8)); }
  bool keyed() const { return type() == SglType::keyed_data_block; }
  // Keyed: 24-bit length and the key; unkeyed: a 32-bit length.
  uint32_t length() const { return keyed() ? load_le24(b_.subspan(8, 3)) : load_le32(b_.subspan(8, 4)); }
  uint32_t key() const { return load_le32(b_.subspan(11, 4)); }

  void clear() requires kMut {
    for (auto& x : b_) x = std::byte{0};
  }
  void set_identifier(SglType t, SglSubtype s) requires kMut {
    b_[15] = std::byte(static_cast<uint8_t>(t) << 4 | static_cast<uint8_t>(s));
  }
  void set_address(uint64_t v) requires kMut { store_le64(b_.first(8), v); }
  void set_keyed_length(uint32_t v) requires kMut { store_le24(b_.subspan(8, 3), v); }
  void set_key(uint32_t v) requires kMut { store_le32(b_.subspan(11, 4), v); }
  void set_length(uint32_t v) requires kMut { store_le32(b_.subspan(8, 4), v); }
};
using SglView = SglViewT<std::byte>;
using ConstSglView = SglViewT<const std::byte>;

// What a descriptor says: where the data of a command is.
struct Sgl {
  bool keyed = true;  // false: in-capsule (data block, offset), or the transport's (transport)
  bool invalidate = false;
  uint64_t address = 0;  // keyed: host VA; in-capsule: offset after the SQE
  uint32_t length = 0;
  uint32_t key = 0;
  bool transport = false;  // a transport data block (NVMe/TCP)

  bool in_capsule() const { return !keyed && !transport; }

  static constexpr uint32_t kMaxKeyedLength = 0xFFFFFF;

  static Sgl keyed_block(uint64_t va, uint32_t len, uint32_t rkey) { return {true, false, va, len, rkey}; }
  static Sgl in_capsule(uint32_t len, uint64_t offset = 0) { return {false, false, offset, len, 0}; }
  static Sgl transport_block(uint32_t len) { return {false, false, 0, len, 0, true}; }

  // nullopt: a descriptor type NVMe-oF's RDMA and TCP bindings do not use here.
  static std::optional<Sgl> parse(ConstSglView v) {
    if (v.type() == SglType::keyed_data_block &&
        (v.subtype() == SglSubtype::address || v.subtype() == SglSubtype::invalidate_key))
      return Sgl{true, v.subtype() == SglSubtype::invalidate_key, v.address(), v.length(), v.key()};
    if (v.type() == SglType::data_block && v.subtype() == SglSubtype::offset)
      return Sgl{false, false, v.address(), v.length(), 0};
    if (v.type() == SglType::transport_data_block && v.subtype() == SglSubtype::transport_a)
      return Sgl{false, false, v.address(), v.length(), 0, true};
    return std::nullopt;
  }
  void emit(SglView v) const {
    v.clear();
    v.set_address(address);
    if (keyed) {
      v.set_keyed_length(length);
      v.set_key(key);
      v.set_identifier(SglType::keyed_data_block,
                       invalidate ? SglSubtype::invalidate_key : SglSubtype::address);
    } else {
      v.set_length(length);
      if (transport)
        v.set_identifier(SglType::transport_data_block, SglSubtype::transport_a);
      else
        v.set_identifier(SglType::data_block, SglSubtype::offset);
    }
  }
  bool operator==(const Sgl&) const = default;
};

}  // namespace rdmasim::nvme
