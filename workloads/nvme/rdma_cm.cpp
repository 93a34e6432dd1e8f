#include "workloads/nvme/rdma_cm.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "workloads/workload.hpp"

namespace rdmasim::nvme {
namespace {

constexpr uint64_t kRecvSlots = 64, kSendSlots = 64;
constexpr uint64_t kGrh = 40;
constexpr uint64_t kRecvSlotLen = kGrh + kMadLen;
// ib_cm's work per MAD, beyond the interrupt that brought it.
constexpr Time kMadCost = Time::us(2);
constexpr uint8_t kRdAtomic = 16;
// rdma_cm's choices (drivers/infiniband/core/cma.c): CMA_CM_RESPONSE_TIMEOUT
// and CMA_MAX_CM_RETRIES for every REQ, and the path's PacketLifeTime,
// CMA_IBOE_PACKET_LIFETIME on RoCE (on InfiniBand an SA path record gives
// it; the model has no SA and takes the same).
constexpr uint8_t kCmResponseTimeout = 20, kMaxCmRetries = 15, kPacketLifeTime = 16;

// An IBA time, 4.096 us x 2^t, as ib_cm sets its MAD timers: whole
// milliseconds, 2^(t - 8) (cm.c, cm_convert_to_ms).
Time cm_time(uint8_t t) { return Time::ms(int64_t{1} << std::max(t - 8, 0)); }

void check(int rc, const char* what) {
  if (rc != 0) throw std::logic_error(std::string("rdma_cm: ibv_modify_qp to ") + what + " failed");
}

std::array<uint8_t, 16> gid_of(Host& h) {
  std::array<uint8_t, 16> g{};
  std::memcpy(g.data(), h.nic().gid().raw, 16);
  return g;
}

bool ipv4_mapped(const std::array<uint8_t, 16>& g) {
  for (int i = 0; i < 10; ++i)
    if (g[i] != 0) return false;
  return g[10] == 0xFF && g[11] == 0xFF;
}

}  // namespace

CmAgent::CmAgent(WorkloadEnv& env, Host& h, CmDirectory& dir, uint32_t index)
    : env_(env),
      host_(h),
      dir_(dir),
      index_(index),
      next_port_(static_cast<uint16_t>(40000 + 97 * index % 20000)) {
  verbs::Device& d = h.device();
  pd_ = d.alloc_pd();
  cq_ = d.create_cq(static_cast<int>(kRecvSlots + kSendSlots + 4));
  verbs::QpInitAttr init;
  init.send_cq = init.recv_cq = cq_;
  init.qp_type = IBV_QPT_UD;
  init.cap.max_send_wr = kSendSlots;
  init.cap.max_recv_wr = kRecvSlots;
  init.cap.max_inline_data = 0;
  qp_ = d.create_gsi_qp(pd_, init);
  if (!qp_) throw std::logic_error("rdma_cm: no GSI QP on " + h.name() + ": " + std::strerror(errno));
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qkey = kGsiQkey;
  check(qp_->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), "INIT");
  a = {};
  a.qp_state = IBV_QPS_RTR;
  check(qp_->modify(a, IBV_QP_STATE), "RTR");
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0;
  check(qp_->modify(a, IBV_QP_STATE | IBV_QP_SQ_PSN), "RTS");
  const uint64_t len = kRecvSlots * kRecvSlotLen + kSendSlots * kMadLen;
  buf_ = h.memory().allocate(len);
  mr_ = d.reg_mr(pd_, buf_, len, IBV_ACCESS_LOCAL_WRITE);
  for (uint64_t i = 0; i < kRecvSlots; ++i) post_recv(i);
  process_ = &h.spawn("ib_cm");
  Simulator::Scope as(env_.sim, h.context());
  run();
}

CmAgent::~CmAgent() = default;

uint64_t CmAgent::guid() const {
  return load_be64(std::as_bytes(std::span(host_.nic().gid().raw)).subspan(8, 8));
}

void CmAgent::post_recv(uint64_t slot) {
  ibv_sge sge{buf_ + slot * kRecvSlotLen, static_cast<uint32_t>(kRecvSlotLen), mr_->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (qp_->post_recv(&wr, &bad) != 0) throw std::logic_error("rdma_cm: ibv_post_recv failed");
}

CmAgent::Mad CmAgent::build(const MadHeader& h, const std::function<void(std::span<std::byte>)>& body) const {
  Mad mad{};
  h.emit(mad);
  body(std::span(mad).subspan(kMadHeaderLen));
  return mad;
}

void CmAgent::post(Host& to, const Mad& mad) {
  const uint64_t slot = next_send_++ % kSendSlots;
  const uint64_t addr = buf_ + kRecvSlots * kRecvSlotLen + slot * kMadLen;
  std::span<std::byte> out = host_.memory().view(addr, kMadLen);
  std::copy(mad.begin(), mad.end(), out.begin());
  auto it = ahs_.find(&to);
  if (it == ahs_.end()) {
    verbs::AddressHandle* ah = host_.device().create_ah(pd_, env_.address(host_, to));
    if (!ah) throw std::logic_error("rdma_cm: no address handle to " + to.name());
    it = ahs_.emplace(&to, ah).first;
  }
  ibv_sge sge{addr, static_cast<uint32_t>(kMadLen), mr_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = kRecvSlots + slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud.ah = it->second;
  wr.wr.ud.remote_qpn = kGsiQpn;
  wr.wr.ud.remote_qkey = kGsiQkey;
  ibv_send_wr* bad = nullptr;
  if (qp_->post_send(&wr, &bad) != 0) throw std::logic_error("rdma_cm: ibv_post_send failed");
  ++stats_.sent;
}

void CmAgent::send_awaiting(Host& to, Resend& r, uint32_t comm_id, void (CmAgent::*expired)(uint32_t)) {
  post(to, r.mad);
  r.timer = env_.sim.after(r.timeout, [this, comm_id, expired] { (this->*expired)(comm_id); });
}

uint8_t CmAgent::max_cm_retries() { return kMaxCmRetries; }

void CmAgent::connect(verbs::QueuePair& qp, uint32_t psn, Host& to, uint16_t port,
                      std::span<const std::byte> consumer, Connected done,
                      std::function<void()> disconnected) {
  if (qp.state() == IBV_QPS_RESET) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    check(qp.modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "INIT");
  }
  const uint32_t comm_id = (index_ + 1) << 20 | next_comm_id_++;
  Active& act = active_[comm_id];
  act.qp = &qp;
  act.psn = psn;
  act.to = &to;
  act.done = std::move(done);
  act.close.on_dreq = std::move(disconnected);

  const ibv_ah_attr ah = env_.address(host_, to);
  CmReq r;
  r.local_comm_id = comm_id;
  r.service_id = ip_cm_service_id(port);
  r.local_ca_guid = guid();
  r.local_qpn = qp.qp_num();
  r.responder_resources = r.initiator_depth = kRdAtomic;
  r.remote_cm_response_timeout = r.local_cm_response_timeout = kCmResponseTimeout;
  r.starting_psn = psn;
  r.path_mtu = static_cast<uint8_t>(mtu_enum(env_.mtu));
  r.max_cm_retries = kMaxCmRetries;
  const bool global = ah.is_global;
  r.primary.local_lid = host_.nic().lid() ? host_.nic().lid() : 0xFFFF;
  r.primary.remote_lid = to.nic().lid() ? to.nic().lid() : 0xFFFF;
  r.primary.local_gid = gid_of(host_);
  r.primary.remote_gid = gid_of(to);
  r.primary.hop_limit = global ? 64 : 0;
  r.primary.subnet_local = !global;
  r.primary.sl = ah.sl;
  r.primary.local_ack_timeout = 18;
  IpCmHeader ip;
  ip.ip_version = ipv4_mapped(r.primary.local_gid) ? 4 : 6;
  ip.source_port = next_port_++;
  ip.source_ip = r.primary.local_gid;
  ip.destination_ip = r.primary.remote_gid;
  if (ip.ip_version == 4) {  // the address in the last 4 bytes, zeros before (not the ::ffff: mapping)
    ip.source_ip[10] = ip.source_ip[11] = 0;
    ip.destination_ip[10] = ip.destination_ip[11] = 0;
  }
  std::array<std::byte, kCmReqPrivateLen> pd{};
  ip.emit(pd);
  std::copy_n(consumer.begin(), std::min(consumer.size(), kCmReqPrivateLen - kIpCmHeaderLen),
              pd.begin() + kIpCmHeaderLen);
  for (size_t i = 0; i < kCmReqPrivateLen; ++i) r.private_data[i] = static_cast<uint8_t>(pd[i]);
  MadHeader h;
  h.transaction_id = tid(comm_id);
  h.attribute_id = static_cast<uint16_t>(CmAttribute::req);
  act.req.mad = build(h, [&](std::span<std::byte> body) { r.emit(body); });
  // The REP is awaited the Remote CM Response Timeout and a round trip of
  // the path's packet life time, for each of the REQ's sends (ib_send_cm_req).
  act.req.timeout = cm_time(kPacketLifeTime) * 2 + cm_time(r.remote_cm_response_timeout);
  act.req.left = r.max_cm_retries;
  send_awaiting(to, act.req, comm_id, &CmAgent::on_req_timeout);
}

// No REP in time: the REQ goes again, byte for byte (the MAD layer's
// retry_send); after the last wait, the connection is unreachable
// (cm_process_send_error in REQ Sent: IB_CM_REQ_ERROR).
void CmAgent::on_req_timeout(uint32_t comm_id) {
  const auto it = active_.find(comm_id);
  if (it == active_.end() || it->second.state != Active::State::req_sent) return;
  Active& a = it->second;
  if (a.req.left == 0) {
    Connected done = std::move(a.done);
    active_.erase(it);
    done(nullptr);
    return;
  }
  --a.req.left;
  ++stats_.resent;
  send_awaiting(*a.to, a.req, comm_id, &CmAgent::on_req_timeout);
}

// No RTU (nor a packet on the QP) in time: the REP goes again; after the
// last wait the passive side gives the connection up (IB_CM_REP_ERROR).
void CmAgent::on_rep_timeout(uint32_t comm_id) {
  const auto it = passive_.find(comm_id);
  if (it == passive_.end() || it->second.state != Passive::State::rep_sent) return;
  Passive& p = it->second;
  if (p.rep.left == 0) {
    passive_.erase(it);
    return;
  }
  --p.rep.left;
  ++stats_.resent;
  send_awaiting(*p.from, p.rep, comm_id, &CmAgent::on_rep_timeout);
}

Task CmAgent::run() {
  std::vector<ibv_wc> wcs(16);
  const HostConfig& hc = host_.config();
  while (true) {
    co_await cq_->interrupt();
    busy_ = true;
    co_await host_.cpu().interrupt(*process_, hc.interrupt_cost, CpuUse::softirq, hc.poll_cost);
    while (true) {
      const int n = cq_->poll(static_cast<int>(wcs.size()), wcs.data());
      if (n == 0) break;
      for (int i = 0; i < n; ++i) {
        const ibv_wc& wc = wcs[i];
        if (wc.wr_id >= kRecvSlots) continue;  // a MAD we sent
        if (wc.status == IBV_WC_SUCCESS && wc.byte_len >= kGrh + kMadLen) {
          ++stats_.received;
          co_await host_.cpu().run(*process_, CpuUse::softirq, kMadCost);
          std::vector<std::byte> mad(kMadLen);
          const auto v = host_.memory().view(buf_ + wc.wr_id * kRecvSlotLen + kGrh, kMadLen);
          std::copy(v.begin(), v.end(), mad.begin());
          post_recv(wc.wr_id);
          on_mad(mad);
        } else {
          post_recv(wc.wr_id);
        }
      }
    }
    // Communication established on a QP whose RTU was not among the MADs
    // just handled (they came before the packet that raised it).
    if (comm_est_pending()) {
      co_await host_.cpu().run(*process_, CpuUse::softirq, kMadCost);
      establish_pending();
    }
    busy_ = false;
  }
}

void CmAgent::on_mad(std::span<const std::byte> mad) {
  const auto h = MadHeader::parse(mad);
  if (!h || h->mgmt_class != kMgmtClassCm) return;
  const auto body = mad.subspan(kMadHeaderLen);
  switch (static_cast<CmAttribute>(h->attribute_id)) {
    case CmAttribute::req:
      if (auto r = CmReq::parse(body)) on_req(*h, *r);
      break;
    case CmAttribute::rep:
      if (auto r = CmRep::parse(body)) on_rep(*h, *r);
      break;
    case CmAttribute::rtu:
      if (auto r = CmRtu::parse(body)) on_rtu(*r);
      break;
    case CmAttribute::dreq:
      if (auto r = CmDreq::parse(body)) on_dreq(*h, *r);
      break;
    case CmAttribute::drep:
      if (auto r = CmDrep::parse(body)) on_drep(*r);
      break;
    default:
      break;
  }
}

void CmAgent::on_req(const MadHeader& h, const CmReq& r) {
  if ((r.service_id & ~uint64_t{0xFFFF}) != ip_cm_service_id(0)) return;
  const auto it = listeners_.find(static_cast<uint16_t>(r.service_id & 0xFFFF));
  Host* from = dir_.by_gid(r.primary.local_gid);
  if (it == listeners_.end() || !from) return;
  // A REQ sent again (our REP lost, or late): the connection is made, and a
  // lost REP goes again on its own timer (cm_match_req, cm_dup_req_handler).
  for (const auto& [id, p] : passive_)
    if (p.remote_comm_id == r.local_comm_id && p.remote_ca_guid == r.local_ca_guid) {
      ++stats_.duplicates;
      return;
    }
  std::array<std::byte, kCmReqPrivateLen> pd{};
  for (size_t i = 0; i < kCmReqPrivateLen; ++i) pd[i] = std::byte(r.private_data[i]);
  Incoming in{from, r, std::span<const std::byte>(pd).subspan(kIpCmHeaderLen)};
  Accepted acc = it->second(in);
  verbs::QueuePair& qp = *acc.qp;
  ibv_qp_attr a{};
  if (qp.state() == IBV_QPS_RESET) {
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    check(qp.modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "INIT");
  }
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.ah_attr = env_.address(host_, *from);
  a.path_mtu = static_cast<ibv_mtu>(r.path_mtu);
  a.dest_qp_num = r.local_qpn;
  a.rq_psn = r.starting_psn;
  a.max_dest_rd_atomic = std::min<uint8_t>(kRdAtomic, r.initiator_depth);
  a.min_rnr_timer = 12;
  check(qp.modify(a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                         IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
        "RTR");
  const uint32_t comm_id = (index_ + 1) << 20 | next_comm_id_++;
  Passive& p = passive_[comm_id];
  p.qp = &qp;
  p.from = from;
  p.remote_comm_id = r.local_comm_id;
  p.remote_ca_guid = r.local_ca_guid;
  p.psn = acc.psn;
  p.responder_resources = r.responder_resources;
  p.established = std::move(acc.established);
  p.close.on_dreq = std::move(acc.disconnected);
  CmRep rep;
  rep.local_comm_id = comm_id;
  rep.remote_comm_id = r.local_comm_id;
  rep.local_qpn = qp.qp_num();
  rep.starting_psn = acc.psn;
  rep.responder_resources = std::min<uint8_t>(kRdAtomic, r.initiator_depth);
  rep.initiator_depth = std::min<uint8_t>(kRdAtomic, r.responder_resources);
  rep.target_ack_delay = 15;
  rep.local_ca_guid = guid();
  for (size_t i = 0; i < std::min(acc.private_data.size(), kCmRepPrivateLen); ++i)
    rep.private_data[i] = static_cast<uint8_t>(acc.private_data[i]);
  MadHeader out = h;
  out.attribute_id = static_cast<uint16_t>(CmAttribute::rep);
  p.rep.mad = build(out, [&](std::span<std::byte> body) { rep.emit(body); });
  // The RTU is awaited as long as the REQ says its sender takes to answer,
  // and the REP sent as often as it says (cm_req_handler).
  p.rep.timeout = cm_time(r.local_cm_response_timeout);
  p.rep.left = r.max_cm_retries;
  send_awaiting(*from, p.rep, comm_id, &CmAgent::on_rep_timeout);
}

void CmAgent::on_rep(const MadHeader& h, const CmRep& r) {
  const auto it = active_.find(r.remote_comm_id);
  if (it == active_.end()) return;
  Active& act = it->second;
  if (act.state == Active::State::established) {
    // The REP again: our RTU was lost, and goes again (cm_dup_rep_handler).
    if (r.local_comm_id != act.remote_comm_id) return;
    ++stats_.duplicates;
    ++stats_.resent;
    post(*act.to, act.rtu);
    return;
  }
  env_.sim.cancel(act.req.timer);
  verbs::QueuePair& qp = *act.qp;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.ah_attr = env_.address(host_, *act.to);
  a.path_mtu = mtu_enum(env_.mtu);
  a.dest_qp_num = r.local_qpn;
  a.rq_psn = r.starting_psn;
  a.max_dest_rd_atomic = r.initiator_depth;
  a.min_rnr_timer = 12;
  check(qp.modify(a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                         IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
        "RTR");
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = act.psn;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = std::max<uint8_t>(1, r.responder_resources);
  check(qp.modify(a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                         IBV_QP_MAX_QP_RD_ATOMIC),
        "RTS");
  act.state = Active::State::established;
  act.remote_comm_id = r.local_comm_id;
  const CmRtu rtu{it->first, r.local_comm_id};
  MadHeader out = h;
  out.attribute_id = static_cast<uint16_t>(CmAttribute::rtu);
  act.rtu = build(out, [&](std::span<std::byte> body) { rtu.emit(body); });
  post(*act.to, act.rtu);
  const Connected done = std::move(act.done);
  done(&r);
}

void CmAgent::on_rtu(const CmRtu& r) {
  const auto it = passive_.find(r.remote_comm_id);
  if (it == passive_.end() || it->second.remote_comm_id != r.local_comm_id) return;
  if (it->second.state ==
      Passive::State::established) {  // established by a packet first, or an RTU sent again
    ++stats_.duplicates;
    return;
  }
  establish(it->second);
}

void CmAgent::establish(Passive& p) {
  env_.sim.cancel(p.rep.timer);
  p.state = Passive::State::established;
  p.comm_est = false;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = p.psn;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = std::max<uint8_t>(1, std::min<uint8_t>(kRdAtomic, p.responder_resources));
  check(p.qp->modify(a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                            IBV_QP_MAX_QP_RD_ATOMIC),
        "RTS");
  if (p.established) p.established();
}

void CmAgent::notify_established(verbs::QueuePair& qp) {
  for (auto& [id, p] : passive_) {
    if (p.qp != &qp) continue;
    if (p.state != Passive::State::rep_sent || p.comm_est) return;
    p.comm_est = true;
    // The event is written behind the completions of what came before the
    // packet (PCIe keeps the device's writes in order): run() acts on it
    // after the MADs it has, the RTU perhaps among them. With none, the
    // event's own interrupt brings ib_cm's work (cm_establish).
    if (!busy_ && cq_->depth() == 0) {
      Simulator::Scope as(env_.sim, host_.context());
      communication_established();
    }
    return;
  }
}

Task CmAgent::communication_established() {
  const HostConfig& hc = host_.config();
  co_await host_.cpu().interrupt(*process_, hc.interrupt_cost, CpuUse::softirq, hc.poll_cost);
  co_await host_.cpu().run(*process_, CpuUse::softirq, kMadCost);
  establish_pending();
}

bool CmAgent::comm_est_pending() const {
  return std::any_of(passive_.begin(), passive_.end(), [](const auto& e) {
    return e.second.comm_est && e.second.state == Passive::State::rep_sent;
  });
}

void CmAgent::establish_pending() {
  for (auto& [id, p] : passive_)
    if (p.comm_est && p.state == Passive::State::rep_sent) establish(p);
}

// ---- disconnecting

std::optional<CmAgent::Link> CmAgent::link(uint32_t comm_id) {
  if (const auto a = active_.find(comm_id); a != active_.end()) {
    Active& act = a->second;
    if (act.state != Active::State::established) return std::nullopt;
    return Link{act.qp, act.to, act.remote_comm_id, act.req.timeout, &act.close};
  }
  if (const auto p = passive_.find(comm_id); p != passive_.end())
    return Link{p->second.qp, p->second.from, p->second.remote_comm_id, p->second.rep.timeout,
                &p->second.close};
  return std::nullopt;
}

std::optional<std::pair<uint32_t, CmAgent::Link>> CmAgent::link_of(const verbs::QueuePair& qp) {
  std::optional<uint32_t> id;
  for (const auto& [i, a] : active_)
    if (a.qp == &qp) id = i;
  for (const auto& [i, p] : passive_)
    if (p.qp == &qp) id = i;
  const auto l = id ? link(*id) : std::nullopt;
  if (!l) return std::nullopt;
  return std::pair{*id, *l};
}

void CmAgent::disconnect(verbs::QueuePair& qp) {
  const auto found = link_of(qp);
  if (!found) return;
  const auto& [comm_id, l] = *found;
  Close& c = *l.close;
  if (c.state ==
      Close::State::dreq_received) {  // ib_send_cm_dreq fails in DREQ Rcvd: rdma_disconnect sends the DREP
    c.state = Close::State::closed;
    return send_drep(*l.peer, c.dreq_tid, comm_id, l.remote_comm_id);
  }
  if (c.state != Close::State::open) return;
  const CmDreq dreq{comm_id, l.remote_comm_id, l.qp->attr().dest_qp_num};
  MadHeader h;
  h.transaction_id = tid(comm_id);
  h.attribute_id = static_cast<uint16_t>(CmAttribute::dreq);
  c.dreq.mad = build(h, [&](std::span<std::byte> body) { dreq.emit(body); });
  c.dreq.timeout = l.wait;
  c.dreq.left = kMaxCmRetries;
  c.state = Close::State::dreq_sent;
  send_awaiting(*l.peer, c.dreq, comm_id, &CmAgent::on_dreq_timeout);
}

// No DREP in time: the DREQ again; after the last wait the connection is
// over without it (IB_CM_DREQ_ERROR: time wait).
void CmAgent::on_dreq_timeout(uint32_t comm_id) {
  const auto l = link(comm_id);
  if (!l || l->close->state != Close::State::dreq_sent) return;
  Close& c = *l->close;
  if (c.dreq.left == 0) {
    c.state = Close::State::closed;
    return;
  }
  --c.dreq.left;
  ++stats_.resent;
  send_awaiting(*l->peer, c.dreq, comm_id, &CmAgent::on_dreq_timeout);
}

void CmAgent::send_drep(Host& to, uint64_t dreq_tid, uint32_t comm_id, uint32_t remote_comm_id) {
  MadHeader h;
  h.transaction_id = dreq_tid;
  h.attribute_id = static_cast<uint16_t>(CmAttribute::drep);
  post(to, build(h, [&](std::span<std::byte> body) { CmDrep{comm_id, remote_comm_id}.emit(body); }));
}

// cm_dreq_handler: the consumer hears of it and disconnects (which sends
// the DREP); a DREQ crossing ours, or again after our DREP, is answered at once.
void CmAgent::on_dreq(const MadHeader& h, const CmDreq& r) {
  const auto l = link(r.remote_comm_id);
  if (!l || l->remote_comm_id != r.local_comm_id) return;
  // A REP still waiting for its RTU goes no more (cm_dreq_handler in REP Sent).
  if (const auto p = passive_.find(r.remote_comm_id); p != passive_.end())
    env_.sim.cancel(p->second.rep.timer);
  Close& c = *l->close;
  switch (c.state) {
    case Close::State::open:
      c.state = Close::State::dreq_received;
      c.dreq_tid = h.transaction_id;
      if (c.on_dreq) c.on_dreq();
      return;
    case Close::State::dreq_received:  // the consumer's DREP is still to come
      ++stats_.duplicates;
      return;
    case Close::State::dreq_sent:
      env_.sim.cancel(c.dreq.timer);
      c.state = Close::State::closed;
      break;
    case Close::State::closed:
      ++stats_.duplicates;
      break;
  }
  send_drep(*l->peer, h.transaction_id, r.remote_comm_id, r.local_comm_id);
}

void CmAgent::on_drep(const CmDrep& r) {
  const auto l = link(r.remote_comm_id);
  if (!l || l->remote_comm_id != r.local_comm_id) return;
  if (l->close->state != Close::State::dreq_sent) {
    ++stats_.duplicates;
    return;
  }
  env_.sim.cancel(l->close->dreq.timer);
  l->close->state = Close::State::closed;
}

CmDirectory::~CmDirectory() = default;

CmAgent& CmDirectory::agent(Host& h) {
  auto it = agents_.find(&h);
  if (it == agents_.end())
    it = agents_.emplace(&h, std::make_unique<CmAgent>(env_, h, *this, static_cast<uint32_t>(agents_.size())))
             .first;
  return *it->second;
}

Host* CmDirectory::by_gid(const std::array<uint8_t, 16>& gid) const {
  for (Host* h : hosts_)
    if (std::memcmp(h->nic().gid().raw, gid.data(), 16) == 0) return h;
  return nullptr;
}

}  // namespace rdmasim::nvme
