// Configuration of one TCP endpoint. The defaults are tuned for a datacenter
// (microsecond round trips) rather than the Internet; docs/fabrics/iwarp.md
// explains each choice.
#pragma once

#include <cstdint>
#include <optional>

#include "core/units.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

struct TcpEndpointConfig {
  // IP MTU; the MSS we announce is the MTU less the IP and TCP headers
  // (RFC 9293 3.7.1) unless `mss` is set.
  uint32_t mtu = 1500;
  uint32_t mss = 0;  // 0: derive from mtu

  // RFC 5681 + RFC 6582 (newreno, RFC 6675 loss recovery when SACK is on), RFC
  // 9438 (cubic), RFC 8257 (dctcp, which turns ECN on): `tcp.congestion_control`'s
  // enum (topologies/config.hpp), the one the loader fills.
  CongestionControl congestion_control = CongestionControl::newreno;
  uint32_t initial_cwnd_segments = 10;  // RFC 6928

  // RFC 6298 retransmission timer. RFC 6298 asks for a 1 s initial RTO and
  // a 1 s minimum; inside a datacenter that is 10^4 round trips, so these are
  // datacenter values (Vasudevan et al., SIGCOMM 2009, argue for ~200 us).
  Time initial_rto = Time::ms(1);
  Time min_rto = Time::us(200);
  Time max_rto = Time::s(1);
  uint32_t max_retries = 15;  // consecutive timeouts before the connection is aborted

  // RFC 5681 4.2 / RFC 1122 4.2.3.2: acknowledge at least every second
  // full-sized segment, and no later than this after the first unacked one.
  // Well below min_rto, so a lone segment's delayed ACK never looks lost.
  Time delayed_ack = Time::us(40);
  bool delayed_acks = true;

  uint32_t receive_buffer = 1 << 20;  // bytes the receiver offers (the window)
  uint32_t send_buffer = 1 << 20;     // bytes of records queued or unacknowledged
  // RFC 7323 2: shift for our receive window; nullopt = the smallest that
  // covers receive_buffer.
  std::optional<uint8_t> window_scale;

  bool sack = true;           // RFC 2018 / RFC 6675
  bool ecn = false;           // RFC 3168; forced on by dctcp
  double dctcp_g = 1.0 / 16;  // RFC 8257 4.2 gain of the marked-fraction estimate

  Time time_wait = Time::ms(1);  // 2*MSL, shortened like the timers above

  // Frame room left in front of the TCP header for IP and Ethernet.
  uint32_t headroom = 128;

  bool ecn_enabled() const { return ecn || congestion_control == CongestionControl::dctcp; }
};

}  // namespace rdmasim
