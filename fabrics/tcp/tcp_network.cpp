// Builds a `tcp` network: the IP network of fabrics/ip/l3_network.hpp (the
// same L3 switches as roce_v2 and iwarp), hosts with plain Ethernet NICs
// whose frames go through the kernel stack (kernel_nic.hpp).
#include "fabrics/tcp/tcp_network.hpp"

#include "fabrics/ethernet/ethernet_sections.hpp"
#include "fabrics/ip/ip_section.hpp"
#include "fabrics/ip/l3_network.hpp"
#include "fabrics/ip/tcp/tcp_section.hpp"
#include "fabrics/network.hpp"
#include "fabrics/tcp/kernel_nic.hpp"
#include "topologies/experiment_draft.hpp"

namespace rdmasim {

std::vector<SectionType> TcpNet::sections() const {
  std::vector<SectionType> s = ethernet_sections();
  s.push_back(ip_section());
  s.push_back(tcp_section());
  return s;
}

std::string TcpNet::mtu_error(uint32_t mtu) const {
  if (mtu >= kMinIpMtu && mtu <= kMaxIpMtu) return {};
  return "tcp needs an IP MTU from 576 to 9000, got " + std::to_string(mtu);
}

// congestion_control and loss_recovery are the RNICs'; the kernel's TCP has its own.
std::string TcpNet::cc_error(CcAlgorithm a) const {
  if (a == CcAlgorithm::none) return {};
  return "the kernel's TCP has its own congestion control, tcp.congestion_control";
}
std::string TcpNet::recovery_error(LossRecovery r) const {
  if (r == LossRecovery::go_back_n) return {};
  return "the kernel's TCP recovers its own losses";
}

// Kernel sockets: SEND's messages over a TCP byte stream (udp and compute
// check themselves); nothing of RDMA (no remote memory, no immediates, no
// QP types). The verbs settings of the same file (qp: rc, outstanding,
// inline_threshold, retries) have no socket counterpart and no effect, so
// that one file runs on every fabric.
bool TcpNet::check_workload(ExperimentDraft& d, const WorkloadConfig& w, const WorkloadSites& at) const {
  const WorkloadKind op = basic_op(w);
  if (op != WorkloadKind::send) {
    d.c.error(at.op.value, at.op.path,
              "fabric: tcp has no RDMA: " + std::string(to_string(w.kind)) +
                  (w.kind == op ? "" : " with op: " + w.op) +
                  " needs ib, roce_v1, roce_v2 or iwarp; on tcp run send (and send_bw, send_lat, pingpong, "
                  "or incast, all_to_all and flows with op: send), udp or compute workloads");
    return true;
  }
  if (w.qp != QpType::rc)
    d.c.error(at.qp.value, at.qp.path,
              "fabric: tcp sends over kernel TCP sockets, a reliable stream: qp: " +
                  std::string(to_string(w.qp)) + " has no counterpart; use qp: rc or leave it out");
  if (!w.post_recvs)
    d.c.error(at.kind.value, at.kind.path,
              "post_recvs: false is an RNR test of verbs; a socket has no receive queue to leave empty");
  if (at.size && w.size.count() == 0)
    d.c.error(at.size->value, at.size->path, "a socket message needs at least 1 byte");
  return false;
}

std::string TcpNet::completion_error(Completion m) const {
  if (m != Completion::polling && m != Completion::hybrid) return {};
  return "the kernel stack (fabric: tcp) receives by interrupt (one per frame, or per coalesced batch) or "
         "napi; " +
         std::string(to_string(m)) +
         " is how RDMA programs wait on a CQ (busy polling of a socket, SO_BUSY_POLL, " + "is not modelled)";
}

void TcpNet::create_nodes(Network& net) const { build_l3_switches(net); }

BuiltFabric TcpNet::finish(Network& net) const {
  const auto eps = finish_l3(net);
  const TcpEndpointConfig tcp = tcp_endpoint_config(net.cfg, path_mtu(net.cfg));
  for (int h = 0; h < net.graph.host_count(); ++h) {
    Host& host = net.host(h);
    TcpEndpointConfig mine = tcp;
    // The socket buffers bound what TCP keeps to send and what it offers.
    mine.send_buffer = static_cast<uint32_t>(host.config().kernel.sndbuf);
    mine.receive_buffer = static_cast<uint32_t>(host.config().kernel.rcvbuf);
    host.nic().set_fabric(std::make_unique<KernelNic>(host, eps[h], mine));
  }
  if (net.cfg.pfc) enable_l3_pfc(net, eps);
  BuiltFabric built;
  built.sealer =
      KernelNic::seal_kernel_frame;  // UDP's are written when a frame is built, TCP's when observed
  built.address = ip_address;
  return built;
}

const Fabric& tcp_fabric() {
  static const TcpNet f;
  return f;
}

}  // namespace rdmasim
