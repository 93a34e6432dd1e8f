#include "fabrics/ip/wire/address.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace rdmasim {

std::optional<Ipv4Address> Ipv4Address::parse(std::string_view text) {
  // inet_pton accepts only the strict dotted-quad form, which is what we want.
  if (text.size() >= INET_ADDRSTRLEN) return std::nullopt;
  char buf[INET_ADDRSTRLEN] = {};
  std::memcpy(buf, text.data(), text.size());
  Ipv4Address a;
  if (inet_pton(AF_INET, buf, a.octets.data()) != 1) return std::nullopt;
  return a;
}

std::string Ipv4Address::to_string() const {
  char buf[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, octets.data(), buf, sizeof buf);
  return buf;
}

std::optional<Ipv6Address> Ipv6Address::parse(std::string_view text) {
  if (text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  char buf[INET6_ADDRSTRLEN] = {};
  std::memcpy(buf, text.data(), text.size());
  Ipv6Address a;
  if (inet_pton(AF_INET6, buf, a.octets.data()) != 1) return std::nullopt;
  return a;
}

std::string Ipv6Address::to_string() const {
  // glibc's inet_ntop follows RFC 5952 (it is what Wireshark's resolver shows too).
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, octets.data(), buf, sizeof buf);
  return buf;
}

}  // namespace rdmasim
