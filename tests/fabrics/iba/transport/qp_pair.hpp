// Two hosts joined by one RoCE v2 link, each with a PD, a CQ, a QP and a
// 1 MiB registered buffer: the setup the IBA transport's unit tests share.
#pragma once

#include <arpa/inet.h>
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "fabrics/iba/opcodes.hpp"
#include "fabrics/iba/transport/iba_qp.hpp"
#include "fabrics/roce_v2/roce_v2_fabric.hpp"
#include "nodes/host/host.hpp"
#include "tests/fixtures/verbs_end.hpp"

namespace rdmasim::test {

struct Pair {
  Simulator sim;
  PacketPool pool;
  Host a{sim, pool, "a", NicConfig{}, HostConfig{}};
  Host b{sim, pool, "b", NicConfig{}, HostConfig{}};

  using Side = VerbsEnd;
  Side sa{}, sb{};

  explicit Pair(double loss = 0, ibv_qp_type type = IBV_QPT_RC, IpVersion ip = IpVersion::ipv4) {
    LinkParams p;
    p.loss = loss;
    Port::connect(a.port(0), b.port(0), p, 42);
    IpEndpoint ea = host_endpoint(0), eb = host_endpoint(1);
    ea.gateway_mac = eb.mac;
    eb.gateway_mac = ea.mac;
    a.nic().set_fabric(std::make_unique<RoceV2Fabric>(a.nic(), ip, ea, 0, false));
    b.nic().set_fabric(std::make_unique<RoceV2Fabric>(b.nic(), ip, eb, 0, false));
    a.nic().set_gid(roce_v2_gid(ip, ea));
    b.nic().set_gid(roce_v2_gid(ip, eb));
    sa = make(a, type);
    sb = make(b, type);
  }

  Side make(Host& h, ibv_qp_type type) {
    VerbsEndOptions o;
    o.type = type;
    return make_end(h, o);
  }
  // Gives `s` a new RC QP (the old one stays in RESET) completing to `cq`,
  // with receives from `srq` when given.
  static void new_qp(Host& h, Side& s, verbs::CompletionQueue* cq, verbs::SharedReceiveQueue* srq = nullptr) {
    verbs::QpInitAttr init;
    init.send_cq = init.recv_cq = s.cq = cq;
    init.srq = srq;
    s.qp = h.device().create_qp(s.pd, init);
    REQUIRE(s.qp);
  }

  static void connect(Side& s, Host& peer_host, const Side& peer, uint32_t sq_psn, uint32_t rq_psn,
                      uint8_t rnr_retry = 7, uint8_t retry_cnt = 7, uint8_t timeout = 10,
                      uint8_t min_rnr_timer = 1, uint8_t max_dest_rd_atomic = 4) {
    RcPath p;
    p.ah.is_global = 1;
    p.ah.grh.dgid = peer_host.nic().gid();
    p.dest_qp = peer.qp->qp_num();
    p.sq_psn = sq_psn;
    p.rq_psn = rq_psn;
    p.timeout = timeout;
    p.retry_cnt = retry_cnt;
    p.rnr_retry = rnr_retry;
    p.min_rnr_timer = min_rnr_timer;
    p.max_rd_atomic = 4;
    p.max_dest_rd_atomic = max_dest_rd_atomic;
    connect_rc(*s.qp, p);
  }
  void connect_both(uint32_t psn_a = 100, uint32_t psn_b = 200, uint8_t rnr_retry = 7, uint8_t retry_cnt = 7,
                    uint8_t min_rnr_timer = 1) {
    connect(sa, b, sb, psn_a, psn_b, rnr_retry, retry_cnt, 10, min_rnr_timer);
    connect(sb, a, sa, psn_b, psn_a, rnr_retry, retry_cnt, 10, min_rnr_timer);
  }
  // UD or UC (the QPs' type): both QPs to RTS at PSN 0; UD with Q_Key
  // `qkey`, UC each the other's peer with a 1024-byte path MTU.
  void ready(uint32_t qkey = 0) {
    const bool ud = sa.qp->type() == IBV_QPT_UD;
    for (auto [s, peer, host] : {std::tuple{&sa, &sb, &b}, std::tuple{&sb, &sa, &a}}) {
      ibv_qp_attr at{};
      at.qp_state = IBV_QPS_INIT;
      at.port_num = 1;
      at.qkey = qkey;
      at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
      const int init = IBV_QP_PKEY_INDEX | IBV_QP_PORT | (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
      REQUIRE(s->qp->modify(at, IBV_QP_STATE | init) == 0);
      at.qp_state = IBV_QPS_RTR;
      at.ah_attr.is_global = 1;
      at.ah_attr.grh.dgid = host->nic().gid();
      at.path_mtu = IBV_MTU_1024;
      at.dest_qp_num = peer->qp->qp_num();
      const int path = ud ? 0 : IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
      REQUIRE(s->qp->modify(at, IBV_QP_STATE | path) == 0);
      at.qp_state = IBV_QPS_RTS;
      REQUIRE(s->qp->modify(at, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0);
    }
  }
  void ud_ready(uint32_t qkey) { ready(qkey); }
  // An address handle on a towards b (RoCE: a GRH with b's GID).
  verbs::AddressHandle* ah_to_b() {
    ibv_ah_attr ah{};
    ah.is_global = 1;
    ah.grh.dgid = b.nic().gid();
    return a.device().create_ah(sa.pd, ah);
  }
  // A UD SEND of `len` bytes from a's buffer to b's QP (gathered with `lkey`
  // when given, else the buffer's own).
  int post_ud(verbs::AddressHandle* ah, uint32_t len, uint32_t qkey, uint64_t wr_id = 1,
              std::optional<uint32_t> lkey = std::nullopt) {
    ibv_sge sge{sa.buf, len, lkey.value_or(sa.mr->lkey)};
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = sb.qp->qp_num();
    wr.wr.ud.remote_qkey = qkey;
    ibv_send_wr* bad = nullptr;
    return sa.qp->post_send(&wr, &bad);
  }
  // Changes the QP access flags of an RTS QP (RTS -> RTS).
  static void set_access(Side& s, int access) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTS;
    a.qp_access_flags = access;
    REQUIRE(s.qp->modify(a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS) == 0);
  }
  IbaQp& iba(const Side& s) const { return *static_cast<IbaQp*>(s.qp); }

  // A request with headers `h` (dest_qp filled in) and `len` zero bytes of
  // payload, as a's QP would send it, straight into b's NIC.
  void inject(IbaHeaders h, size_t len) { inject_from(a, sa, b, sb, h, len); }
  // The same from `from`'s QP `s` to `to`'s QP `peer`, with IRN's extension
  // header `ext` when given.
  static void inject_from(Host& from, const Side& s, Host& to, const Side& peer, IbaHeaders h, size_t len,
                          const IrnExt* ext = nullptr) {
    Packet pkt = from.nic().alloc();
    std::memset(pkt.push_back(len).data(), 0, len);
    h.dest_qp = peer.qp->qp_num();
    REQUIRE(iba_emit(pkt, h));
    auto& fabric = static_cast<IbaFabric&>(from.nic().fabric());
    if (ext)
      fabric.encap_irn(pkt, s.qp->attr().ah_attr, s.qp->qp_num(), h.dest_qp, *ext);
    else
      fabric.encap(pkt, s.qp->attr().ah_attr, s.qp->qp_num(), h.dest_qp);
    to.nic().fabric().receive(std::move(pkt));
  }

  // The BTH (and AETH syndrome) of every frame a host sends; RoCE v2 over
  // IPv4, so the BTH follows Ethernet, IPv4 (with its options: IHL) and UDP.
  struct SentBth {
    uint8_t opcode;
    bool se, ack_req;
    uint32_t psn;
    uint8_t syndrome;  // ACKs only
  };
  static std::shared_ptr<std::vector<SentBth>> record_bth(Host& h) {
    auto out = std::make_shared<std::vector<SentBth>>();
    h.port(0).on_tx([out](Time, Packet& p) {
      auto b = p.raw_bytes();
      const size_t bth = 14 + 4 * (std::to_integer<size_t>(b[14]) & 0x0F) + 8;
      auto u8 = [&](size_t i) { return std::to_integer<uint8_t>(b[bth + i]); };
      out->push_back({u8(0), (u8(1) & 0x80) != 0, (u8(8) & 0x80) != 0,
                      uint32_t{u8(9)} << 16 | uint32_t{u8(10)} << 8 | u8(11),
                      u8(0) == RC_ACKNOWLEDGE ? u8(12) : uint8_t{0}});
    });
    return out;
  }

  int post(Side& s, ibv_wr_opcode op, uint64_t local, uint32_t len, uint64_t remote, uint32_t rkey,
           uint64_t wr_id = 1, unsigned flags = 0, uint32_t imm = 0) {
    ibv_sge sge{local, len, s.mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = op;
    wr.send_flags = IBV_SEND_SIGNALED | flags;
    wr.imm_data = htonl(imm);
    if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
      wr.wr.atomic.remote_addr = remote;
      wr.wr.atomic.rkey = rkey;
      wr.wr.atomic.compare_add = 5;
    } else {
      wr.wr.rdma.remote_addr = remote;
      wr.wr.rdma.rkey = rkey;
    }
    ibv_send_wr* bad = nullptr;
    return s.qp->post_send(&wr, &bad);
  }
  int post_recv(Side& s, uint64_t addr, uint32_t len, uint64_t wr_id = 7) {
    ibv_sge sge{addr, len, s.mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    return s.qp->post_recv(&wr, &bad);
  }
  std::vector<ibv_wc> drain(Side& s) {
    std::vector<ibv_wc> out(64);
    out.resize(static_cast<size_t>(s.cq->poll(64, out.data())));
    return out;
  }
  // Runs until nothing is left to do; the one completion `s`'s CQ then holds.
  ibv_wc one_completion(Side& s) {
    sim.run();
    auto wc = drain(s);
    REQUIRE(wc.size() == 1);
    return wc[0];
  }
  void fill(Host& h, uint64_t addr, size_t len, uint8_t seed) {
    auto v = h.memory().view(addr, len);
    for (size_t i = 0; i < len; ++i) v[i] = std::byte(static_cast<uint8_t>(seed + i * 7));
  }
  bool same(uint64_t addr_a, uint64_t addr_b, size_t len) {
    return std::memcmp(a.memory().view(addr_a, len).data(), b.memory().view(addr_b, len).data(), len) == 0;
  }
};

// A pair of RC QPs with IRN loss recovery at both NICs (connect_both's
// local ACK timeout is 10: 4.19 ms).
struct IrnPair : Pair {
  IrnConfig irn;
  explicit IrnPair(uint8_t retry_cnt = 7) {
    for (Host* h : {&a, &b})
      static_cast<IbaFabric&>(h->nic().fabric()).set_loss_recovery(LossRecovery::irn, &irn);
    connect_both(100, 200, 7, retry_cnt);
  }
};

}  // namespace rdmasim::test
