// Builds an iWARP network: the IP network of fabrics/ip/l3_network.hpp
// (the same L3 switches as roce_v2), hosts whose RNICs run RDMAP/DDP/MPA
// over TCP (iwarp_fabric.hpp).
#include "fabrics/iwarp/iwarp_network.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "fabrics/ethernet/ethernet_sections.hpp"
#include "fabrics/ethernet/pfc.hpp"
#include "fabrics/ip/ip_section.hpp"
#include "fabrics/ip/l3_network.hpp"
#include "fabrics/ip/l3_switch.hpp"
#include "fabrics/ip/tcp/tcp_section.hpp"
#include "fabrics/iwarp/iwarp_fabric.hpp"
#include "fabrics/network.hpp"
#include "topologies/experiment_draft.hpp"

namespace rdmasim {

namespace {

ibv_gid gid_of(IpVersion v, const IpEndpoint& e) {
  const Ipv6Address a = v == IpVersion::ipv4 ? Ipv6Address::v4_mapped(e.ipv4) : e.ipv6;
  ibv_gid g;
  std::memcpy(g.raw, a.octets.data(), 16);
  return g;
}

}  // namespace

std::vector<SectionType> IwarpNet::sections() const {
  std::vector<SectionType> s = ethernet_sections();
  s.push_back(ip_section());
  s.push_back(tcp_section());
  s.push_back(mpa_section());
  return s;
}

// RDMAP and DDP leave congestion and loss to the TCP below MPA (RFC 5044).
std::string IwarpNet::cc_error(CcAlgorithm a) const {
  if (a == CcAlgorithm::none) return {};
  return "iWARP runs over TCP, whose congestion control is tcp.congestion_control";
}
std::string IwarpNet::recovery_error(LossRecovery r) const {
  if (r == LossRecovery::go_back_n) return {};
  return "iWARP runs over TCP, which recovers its own losses";
}

// Links give TCP an IP MTU.
std::string IwarpNet::mtu_error(uint32_t mtu) const {
  if (mtu >= kMinIpMtu && mtu <= kMaxIpMtu) return {};
  return "iwarp needs an IP MTU from 576 to 9000, got " + std::to_string(mtu);
}

// RFC 5040: reliable connections only, no atomics, no immediate data.
bool IwarpNet::check_workload(ExperimentDraft& d, const WorkloadConfig& w, const WorkloadSites& at) const {
  const WorkloadKind op = basic_op(w);
  // A kind such as atomic_bw without an op: line names its operation
  // through op's default: say both, so the message fits the line it points at.
  const std::string what = &at.op != &at.kind || w.op == to_string(w.kind)
                               ? w.op
                               : std::string(to_string(w.kind)) + " (op " + w.op + ")";
  if (w.qp != QpType::rc)
    d.c.error(at.qp.value, at.qp.path,
              "iwarp has only reliable connections (RFC 5040): no " + std::string(to_string(w.qp)) +
                  " QPs; use qp: rc");
  if (is_atomic(op))
    d.c.error(at.op.value, at.op.path,
              "iwarp has no atomic operations (RFC 5040); " + what + " is not available");
  if (has_immediate(op))
    d.c.error(at.op.value, at.op.path,
              "iwarp has no immediate data (RFC 5040); " + what + " is not available");
  return false;
}

// MPA's length (2), DDP's tagged header (14), and MPA's CRC when on.
uint32_t IwarpNet::data_frame_headers(const ExperimentConfig& x) const {
  return kEthernetHeader + ip_header(x) + kTcpHeader + 2 + 14 + (x.settings<MpaConfig>("mpa").crc ? 4 : 0);
}

void IwarpNet::create_nodes(Network& net) const { build_l3_switches(net); }

BuiltFabric IwarpNet::finish(Network& net) const {
  const ExperimentConfig& cfg = net.cfg;
  const auto eps = finish_l3(net);
  uint32_t mtu = cfg.link.mtu;  // the IP MTU of the path: the smallest of any link
  for (const auto& l : cfg.topology.links) mtu = std::min(mtu, l.config.mtu);
  auto streams = std::make_shared<MpaStreamRegistry>();
  IwarpNicConfig nc;
  nc.ip = cfg.ip;
  nc.tcp = tcp_endpoint_config(cfg, mtu);
  const auto& mpa = cfg.settings<MpaConfig>("mpa");
  nc.mpa_crc = mpa.crc;
  nc.mpa_markers = mpa.markers;
  nc.mpa_revision = mpa.revision;
  nc.listen_port = cfg.tcp.listen_port;
  nc.priority = cfg.pfc ? cfg.pfc_config.priority : 0;
  nc.seed = cfg.seed;
  nc.streams = streams;
  for (int h = 0; h < net.graph.host_count(); ++h) {
    Rnic& nic = net.host(h).nic();
    nc.self = eps[h];
    nic.set_fabric(std::make_unique<IwarpFabric>(nic, nc));
    nic.set_gid(gid_of(cfg.ip, eps[h]));
  }
  if (cfg.pfc)  // 802.1Qbb on every port, as roce_v2 (fabrics/ethernet/pfc.hpp)
    enable_l3_pfc(net, eps);
  BuiltFabric built;
  built.sealer = [streams](Packet& p) { seal_iwarp(p, *streams); };
  built.seal_before_crossing = true;  // only the sender's endpoint publishes its stream
  built.address = ip_address;
  return built;
}

const Fabric& iwarp_fabric() {
  static const IwarpNet f;
  return f;
}

}  // namespace rdmasim
