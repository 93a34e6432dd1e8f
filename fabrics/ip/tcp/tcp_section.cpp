// `tcp:`, the settings of the TCP model (fabrics/ip/tcp/) under iwarp.
#include "fabrics/ip/tcp/tcp_section.hpp"

#include "fabrics/ip/tcp/tcp_config.hpp"
#include "topologies/experiment_draft.hpp"

namespace rdmasim {

namespace {

void read_tcp(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "TCP settings",
                      {"congestion_control", "delayed_ack", "min_rto", "initial_cwnd", "listen_port"});
  if (!f) return;
  d.c.read(*f, "congestion_control", d.x.tcp.congestion_control,
           [&](const Entry& v) { return d.c.choice<CongestionControl>(v, "congestion control"); });
  if (auto v = f->find("delayed_ack")) {
    if (v->value.IsScalar() && (v->value.Scalar() == "false" || v->value.Scalar() == "off"))
      d.x.tcp.delayed_ack = Time();
    else if (auto t = d.c.time(*v))
      d.x.tcp.delayed_ack = *t;
  }
  if (auto v = f->find("min_rto")) {
    // The RTO is clamped to [min_rto, max_rto]: a floor above the ceiling would be lost.
    const Time ceiling = TcpEndpointConfig{}.max_rto;
    if (auto t = d.c.time(*v); t && *t > ceiling)
      d.c.error(v->value, v->path,
                "at most " + to_string(ceiling) + ", the TCP model's largest retransmission timeout; got " +
                    describe(v->value));
    else if (t)
      d.x.tcp.min_rto = *t;
  }
  d.c.read(*f, "initial_cwnd", d.x.tcp.initial_cwnd, [&](const Entry& v) { return d.c.whole(v, 1, 1000); });
  d.c.read(*f, "listen_port", d.x.tcp.listen_port, [&](const Entry& v) { return d.c.whole(v, 1, 49151); });
}

}  // namespace

SectionType tcp_section() { return plain_section<read_tcp>("tcp"); }

}  // namespace rdmasim
