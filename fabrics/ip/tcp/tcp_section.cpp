// `tcp:`, the settings of the TCP model (fabrics/ip/tcp/) under iwarp and tcp.
#include "fabrics/ip/tcp/tcp_section.hpp"

#include "fabrics/ip/tcp/tcp_config.hpp"
#include "topologies/experiment_draft.hpp"
#include "topologies/key_table.hpp"

namespace rdmasim {

using namespace keys;

namespace {

// delayed_ack: a time, or false (acknowledge every segment at once).
ValueType<Time> time_or_false() {
  return {"time, or `false`", "", "", [](YamlReader& c, const Entry& e) -> std::optional<Time> {
            if (e.value.IsScalar() && (e.value.Scalar() == "false" || e.value.Scalar() == "off"))
              return Time();
            return c.time(e);
          }};
}

// min_rto: the RTO is clamped to [min_rto, max_rto]: a floor above the
// ceiling would be lost, and one under a microsecond is no kernel's timer
// (Linux's is 200 ms; data centres lower it to about 1 ms, research to 200 us).
ValueType<Time> min_rto() {
  const Time ceiling = TcpEndpointConfig{}.max_rto;
  return {"time", to_string(kShortestTimer) + ".." + to_string(ceiling), "",
          [ceiling](YamlReader& c, const Entry& e) -> std::optional<Time> {
            auto t = c.time(e);
            if (t && *t > ceiling) {
              c.error(e.value, e.path,
                      "at most " + to_string(ceiling) +
                          ", the TCP model's largest retransmission timeout; got " + describe(e.value));
              return std::nullopt;
            }
            if (t && *t < kShortestTimer) {
              c.error(e.value, e.path,
                      "at least " + to_string(kShortestTimer) + " (a kernel's retransmission timer), got " +
                          describe(e.value));
              return std::nullopt;
            }
            return t;
          }};
}

const KeyTable<TcpConfig>& tcp_keys() {
  using T = TcpConfig;
  static const KeyTable<T> t{
      "tcp",
      "TCP settings",
      {
          key("congestion_control", &T::congestion_control, choice<CongestionControl>("congestion control"),
              "newreno", "congestion control algorithm"),
          key("delayed_ack", &T::delayed_ack, time_or_false(), "40us",
              "delay before a lone ACK; `false` or `0` acknowledges every segment at once"),
          key("min_rto", &T::min_rto, min_rto(), "200us",
              "lower bound of the retransmission timeout (its upper bound is 1 s)"),
          key("initial_cwnd", &T::initial_cwnd, whole(1, 1000, "segments"), "10",
              "initial congestion window (RFC 6928)"),
          key("listen_port", &T::listen_port, whole(1, 49151), "18515",
              "the TCP port the passive end of every connection listens on (perftest's default); the active "
              "end "
              "connects from an ephemeral port, 49152 + its QPN mod 16384"),
      }};
  return t;
}

void read_tcp(ExperimentDraft& d, const Entry& e) { tcp_keys().read(d.c, e.value, e.path, d.x.tcp); }

}  // namespace

SectionType tcp_section() {
  return plain_section<read_tcp>(
      "tcp", {"map", "", "the TCP model under iwarp, and the kernel's TCP on tcp", &tcp_keys()});
}

}  // namespace rdmasim
