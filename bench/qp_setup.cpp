// What a connected RC queue pair costs: N QP pairs between two RoCE v2
// hosts, each QP created and taken through INIT, RTR and RTS to its peer, as
// a `flows` workload connects one pair per flow. Prints the heap bytes the
// pairs hold (malloc's count of bytes in use, before and after) per QP and
// per pair (both ends), and the wall-clock time of the set-up, the median
// of --repeat runs, each on fresh hosts.
//
//   bench_qp_setup [--qps 100000] [--repeat 3]
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "fabrics/ip/l3_network.hpp"
#include "fabrics/roce_v2/roce_v2_fabric.hpp"
#include "nodes/host/host.hpp"

using namespace rdmasim;

namespace {

size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

void connect(verbs::QueuePair& qp, const ibv_gid& peer_gid, uint32_t peer_qpn) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  int rc = qp.modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = peer_gid;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = peer_qpn;
  a.rq_psn = 1;
  a.max_dest_rd_atomic = 4;
  a.min_rnr_timer = 1;
  rc |= qp.modify(a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                         IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 1;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 4;
  rc |= qp.modify(a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                         IBV_QP_MAX_QP_RD_ATOMIC);
  if (rc != 0) {
    std::fprintf(stderr, "modify_qp failed\n");
    std::exit(1);
  }
}

struct Result {
  double seconds;
  size_t bytes;
};

Result run(size_t pairs) {
  Simulator sim;
  PacketPool pool;
  Host a{sim, pool, "a", NicConfig{}, HostConfig{}};
  Host b{sim, pool, "b", NicConfig{}, HostConfig{}};
  Port::connect(a.port(0), b.port(0), LinkParams{}, 1);
  IpEndpoint ea = host_endpoint(0), eb = host_endpoint(1);
  ea.gateway_mac = eb.mac;
  eb.gateway_mac = ea.mac;
  a.nic().set_fabric(std::make_unique<RoceV2Fabric>(a.nic(), IpVersion::ipv4, ea, 0, false));
  b.nic().set_fabric(std::make_unique<RoceV2Fabric>(b.nic(), IpVersion::ipv4, eb, 0, false));
  a.nic().set_gid(roce_v2_gid(IpVersion::ipv4, ea));
  b.nic().set_gid(roce_v2_gid(IpVersion::ipv4, eb));
  // One PD and CQ a host, shared by its QPs: the QPs' own cost is measured.
  verbs::ProtectionDomain* pda = a.device().alloc_pd();
  verbs::ProtectionDomain* pdb = b.device().alloc_pd();
  verbs::QpInitAttr ia, ib;
  ia.send_cq = ia.recv_cq = a.device().create_cq(1024);
  ib.send_cq = ib.recv_cq = b.device().create_cq(1024);

  const size_t before = heap_in_use();
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < pairs; ++i) {
    verbs::QueuePair* qa = a.device().create_qp(pda, ia);
    verbs::QueuePair* qb = b.device().create_qp(pdb, ib);
    if (!qa || !qb) {
      std::fprintf(stderr, "create_qp failed\n");
      std::exit(1);
    }
    connect(*qa, b.nic().gid(), qb->qp_num());
    connect(*qb, a.nic().gid(), qa->qp_num());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {secs, heap_in_use() - before};
}

}  // namespace

int main(int argc, char** argv) {
  size_t pairs = 50000;
  int repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--qps"))
      pairs = std::strtoull(argv[i + 1], nullptr, 10) / 2;
    else if (!std::strcmp(argv[i], "--repeat"))
      repeat = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: %s [--qps N] [--repeat R]\n", argv[0]);
      return 2;
    }
  }
  std::vector<Result> runs;
  for (int r = 0; r < repeat; ++r) runs.push_back(run(pairs));
  std::sort(runs.begin(), runs.end(), [](const Result& x, const Result& y) { return x.seconds < y.seconds; });
  const Result& med = runs[runs.size() / 2];
  const double qps = static_cast<double>(2 * pairs);
  std::printf(
      "qps=%zu bytes_per_qp=%.0f bytes_per_pair=%.0f setup_s=%.3f (min %.3f, max %.3f) "
      "setup_us_per_qp=%.2f\n",
      2 * pairs, static_cast<double>(med.bytes) / qps, 2 * static_cast<double>(med.bytes) / qps, med.seconds,
      runs.front().seconds, runs.back().seconds, med.seconds * 1e6 / qps);
  return 0;
}
