#include "workloads/nvme/rdma_transport.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "workloads/workload.hpp"

namespace rdmasim::nvme {

// ---- target

namespace {

enum Kind : uint64_t { kRecv = 0, kRead = 1, kSend = 2, kWrite = 3 };
uint64_t wr_id(uint64_t queue, Kind k, uint64_t slot) { return queue << 32 | uint64_t{k} << 28 | slot; }

}  // namespace

struct RdmaTargetPort::Poller {
  uint32_t index = 0;
  Process* p = nullptr;
  verbs::CompletionQueue* cq = nullptr;
  Time owed;  // CPU the SSD's completions asked for, run at the poller's next turn
};

struct RdmaTargetPort::Queue final : PortQueue {
  Poller* poller = nullptr;
  verbs::QueuePair* qp = nullptr;
  uint32_t psn = 0;
  uint64_t rbuf = 0, resp = 0;
  uint32_t rslot = 0;  // bytes of a receive buffer: the SQE and in-capsule data
  verbs::MemoryRegion* rmr = nullptr;
  verbs::MemoryRegion* respmr = nullptr;
  // A command can arrive before the RTU is handled (the host sends it right
  // after its RTU): it waits, as in nvmet-rdma, until the queue is established.
  bool established = false;
  std::vector<std::pair<uint32_t, uint32_t>> parked;  // receive slot, length
  bool released = false;                              // the host disconnected: its QP is in the error state
};

RdmaTargetPort::Queue& RdmaTargetPort::rq(const TargetQueue& q) { return static_cast<Queue&>(*q.port); }

RdmaTargetPort::RdmaTargetPort(NvmeTarget& t, CmDirectory* cm) : t_(t), host_(t.host()), cm_(cm) {
  Host& h = host_;
  const StorageTargetConfig& c = t.config();
  pd_ = h.device().alloc_pd();
  for (uint32_t i = 0; i < std::max<uint32_t>(1, c.cores); ++i) {
    auto p = std::make_unique<Poller>();
    p->index = i;
    p->p = &h.spawn(std::string(c.cpu == TargetCpu::poll ? "nvmf_poller" : "nvmet_rdma") + std::to_string(i));
    p->cq = h.device().create_cq(16384);
    pollers_.push_back(std::move(p));
  }
  Simulator::Scope as(t.env().sim, h.context());
  for (auto& p : pollers_) poll(*p);
  if (cm) {
    cm->agent(h).listen(kNvmePort, [this](const CmAgent::Incoming& in) {
      const auto req = CmRequest::parse(in.consumer);
      if (!req) throw std::logic_error("nvme target: a CM REQ without NVMe-oF private data");
      TargetQueue& q = accept(*in.from, *req);
      CmAgent::Accepted a;
      a.qp = rq(q).qp;
      a.established = [this, &q] {
        rq(q).established = true;
        for (const auto& [slot, len] : std::exchange(rq(q).parked, {})) on_capsule(q, slot, len);
      };
      a.psn = rq(q).psn;
      // The host disconnected (nvmet_rdma_cm_handler: nvmet_rdma_queue_disconnect,
      // whose rdma_disconnect sends the DREP).
      a.disconnected = [this, &q] {
        release(rq(q).qp->qp_num());
        cm_->agent(host_).disconnect(*rq(q).qp);
      };
      a.private_data.resize(kCmPrivateLen);
      CmAccept{0, static_cast<uint16_t>(q.entries)}.emit(a.private_data);
      return a;
    });
  }
}

RdmaTargetPort::~RdmaTargetPort() = default;

verbs::QueuePair& RdmaTargetPort::qp_of(const TargetQueue& q) const { return *rq(q).qp; }
uint32_t RdmaTargetPort::psn_of(const TargetQueue& q) const { return rq(q).psn; }

TargetQueue& RdmaTargetPort::accept(Host& from, const CmRequest& req) {
  TargetQueue& q = t_.add_queue(from, req.qid, uint32_t{req.hsqsize} + 1);
  q.cntlid = req.cntlid;
  auto pq = std::make_unique<Queue>();
  Queue& r = *pq;
  q.port = std::move(pq);
  // Queues go to the pollers in turn as they connect (SPDK's round robin over poll groups).
  r.poller = pollers_[next_poller_++ % pollers_.size()].get();
  verbs::Device& d = host_.device();
  verbs::QpInitAttr init;
  init.send_cq = init.recv_cq = r.poller->cq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = 2 * q.entries + 1;  // a WRITE and a SEND per command
  init.cap.max_recv_wr = q.entries;
  init.cap.max_send_sge = init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = 0;
  r.qp = d.create_qp(pd_, init);
  if (!r.qp) throw std::logic_error("nvme target: ibv_create_qp failed on " + host_.name());
  r.psn = static_cast<uint32_t>(t_.rng().next() & 0xFFFFFF);
  r.rslot = static_cast<uint32_t>(kSqeLen + t_.inline_data_size(q.qid));
  r.rbuf = host_.memory().allocate(uint64_t{r.rslot} * q.entries);
  r.rmr = d.reg_mr(pd_, r.rbuf, uint64_t{r.rslot} * q.entries, IBV_ACCESS_LOCAL_WRITE);
  r.resp = host_.memory().allocate(kCqeLen * q.entries);
  r.respmr = d.reg_mr(pd_, r.resp, kCqeLen * q.entries, IBV_ACCESS_LOCAL_WRITE);
  r.established = !cm_;
  if (!cm_) {  // iWARP: the MPA reply carries the accept (as nvmet-rdma's through iw_cm)
    std::array<std::byte, kCmPrivateLen> pd{};
    CmAccept{0, static_cast<uint16_t>(q.entries)}.emit(pd);
    r.qp->set_connect_private_data(pd);
    // The host's close of the connection (RDMA_CM_EVENT_DISCONNECTED), as
    // its DREQ on the CM: nvmet_rdma_queue_disconnect.
    r.qp->on_connection_closed([this, qp_num = r.qp->qp_num()] { release(qp_num); });
  }
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
  if (r.qp->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
    throw std::logic_error("nvme target: ibv_modify_qp to INIT failed");
  for (uint32_t i = 0; i < q.entries; ++i) post_recv(q, i);
  return q;
}

void RdmaTargetPort::post_recv(TargetQueue& q, uint32_t slot) {
  Queue& r = rq(q);
  ibv_sge sge{r.rbuf + uint64_t{slot} * r.rslot, r.rslot, r.rmr->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = wr_id(q.index, kRecv, slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  r.qp->post_recv(&wr, &bad);
}

Task RdmaTargetPort::wait(Poller& p) {
  Cpu& cpu = host_.cpu();
  const HostConfig& hc = host_.config();
  if (t_.config().cpu == TargetCpu::poll) {
    // A poll finds nothing, then the poller spins on its core.
    co_await cpu.run(*p.p, CpuUse::user, hc.poll_cost);
    if (p.cq->depth() > 0) co_return;
    cpu.spin(*p.p);
    co_await p.cq->next();
    co_await cpu.run(*p.p, CpuUse::user, hc.poll_cost);
  } else {
    p.cq->set_moderation({hc.interrupt_coalescing.frames, hc.interrupt_coalescing.delay, hc.pcie.latency});
    co_await p.cq->interrupt();
    co_await cpu.interrupt(*p.p, hc.interrupt_cost, CpuUse::softirq, hc.poll_cost);
  }
}

Task RdmaTargetPort::poll(Poller& p) {
  std::vector<ibv_wc> wcs(32);
  const CpuUse use = t_.config().cpu == TargetCpu::poll ? CpuUse::user : CpuUse::softirq;
  while (true) {
    if (p.cq->depth() == 0) co_await wait(p);
    if (p.owed.count() > 0) {
      const Time t = p.owed;
      p.owed = Time{};
      co_await host_.cpu().run(*p.p, use, t);
    }
    const int n = p.cq->poll(static_cast<int>(wcs.size()), wcs.data());
    for (int i = 0; i < n; ++i) {
      if ((wcs[i].wr_id >> 28 & 0xF) == kRecv && wcs[i].status == IBV_WC_SUCCESS)
        co_await host_.cpu().run(*p.p, use, t_.io_cost());
      handle(wcs[i]);
    }
  }
}

void RdmaTargetPort::handle(const ibv_wc& wc) {
  const uint64_t qi = wc.wr_id >> 32;
  const auto kind = static_cast<Kind>(wc.wr_id >> 28 & 0xF);
  const auto slot = static_cast<uint32_t>(wc.wr_id & 0xFFFFFFF);
  if (qi >= t_.queues()) return;
  TargetQueue& q = t_.queue(static_cast<uint32_t>(qi));
  if (wc.status != IBV_WC_SUCCESS) {
    if (!rq(q).released) t_.count_error();  // a flushed or failed work request: the connection is gone
    return;
  }
  switch (kind) {
    case kRecv:
      on_capsule(q, slot, wc.byte_len);
      break;
    case kRead:  // the host's data of a write (or of a Connect) has arrived
      t_.data_arrived(q, q.cmds[slot]);
      break;
    case kSend:
    case kWrite:
      break;
  }
}

void RdmaTargetPort::release(uint32_t qp_num) {
  for (uint32_t i = 0; i < t_.queues(); ++i) {
    Queue& r = rq(t_.queue(i));
    if (r.qp->qp_num() != qp_num || r.released) continue;
    r.released = true;
    r.parked.clear();
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_ERR;
    r.qp->modify(a, IBV_QP_STATE);
    t_.queue_gone(t_.queue(i));
  }
}

// The controller was removed (nvmet_rdma_delete_ctrl): each queue's QP to
// the error state and a disconnect to the host (nvmet_rdma_queue_disconnect,
// rdma_disconnect): on IB and RoCE a DREQ; on iWARP the QP's leaving RTS
// closes its TCP connection (a FIN).
void RdmaTargetPort::disconnect(TargetQueue& q) {
  Queue& r = rq(q);
  if (r.released) return;
  release(r.qp->qp_num());
  if (cm_) cm_->agent(host_).disconnect(*r.qp);
}

void RdmaTargetPort::on_capsule(TargetQueue& q, uint32_t slot, uint32_t len) {
  Queue& r = rq(q);
  if (!r.established) {
    r.parked.emplace_back(slot, len);
    // A packet on the QP in RTR: the HCA's communication established event,
    // which nvmet-rdma passes to the CM (nvmet_rdma_qp_event, rdma_notify);
    // it establishes the queue when the RTU was lost.
    cm_->agent(host_).notify_established(*r.qp);
    return;
  }
  // The receive buffer is free again once the controller has taken the
  // capsule (and copied any in-capsule data out).
  t_.on_command(q, host_.memory().view(r.rbuf + uint64_t{slot} * r.rslot, r.rslot), len);
  post_recv(q, slot);
}

void RdmaTargetPort::prepare_buffer(TargetCmd& c) {
  if (c.mr) host_.device().dereg_mr(c.mr);
  c.mr = host_.device().reg_mr(pd_, c.buf, c.cap, IBV_ACCESS_LOCAL_WRITE);
}

// An RDMA READ or WRITE of a command's buffer from or to the host's keyed
// buffer its SGL names; false: it could not be posted.
bool RdmaTargetPort::post_rdma(TargetQueue& q, TargetCmd& c, bool read) {
  ibv_sge sge{c.buf, static_cast<uint32_t>(c.len), c.mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id(q.index, read ? kRead : kWrite, c.c.cid);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
  wr.send_flags = read ? IBV_SEND_SIGNALED : 0;
  wr.wr.rdma.remote_addr = c.c.sgl.address;
  wr.wr.rdma.rkey = c.c.sgl.key;
  ibv_send_wr* bad = nullptr;
  return rq(q).qp->post_send(&wr, &bad) == 0;
}

// Host-to-controller data by RDMA READ.
void RdmaTargetPort::fetch(TargetQueue& q, TargetCmd& c) {
  if (!post_rdma(q, c, true)) t_.transfer_failed(q, c);
}

// A read's data by RDMA WRITE (unsignaled: the SEND of the completion
// behind it completes after it).
bool RdmaTargetPort::send_data(TargetQueue& q, TargetCmd& c) { return post_rdma(q, c, false); }

void RdmaTargetPort::send_completion(TargetQueue& q, TargetCmd& c, std::span<const std::byte> cqe) {
  Queue& r = rq(q);
  const uint64_t at = r.resp + uint64_t{c.c.cid} * kCqeLen;
  std::copy(cqe.begin(), cqe.end(), host_.memory().view(at, kCqeLen).begin());
  ibv_sge sge{at, static_cast<uint32_t>(kCqeLen), r.respmr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id(q.index, kSend, c.c.cid);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  r.qp->post_send(&wr, &bad);
}

void RdmaTargetPort::owe(TargetQueue& q, Time t) { rq(q).poller->owed = rq(q).poller->owed + t; }

// ---- host

namespace {

constexpr uint64_t kSendKind = 1ull << 32;

class RdmaHostQueue final : public HostQueue {
 public:
  RdmaHostQueue(WorkloadEnv& env, const HostQueueSpec& s, Host& host, NvmeTarget& target, CmDirectory* cm,
                verbs::ProtectionDomain& pd, uint64_t seed)
      : env_(env), s_(s), host_(host), target_(target), cm_(cm), slots_(s.entries) {
    verbs::Device& d = host_.device();
    cq_ = d.create_cq(static_cast<int>(2 * s.entries + 4));
    verbs::QpInitAttr init;
    init.send_cq = init.recv_cq = cq_;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = s.entries + 1;
    init.cap.max_recv_wr = s.entries;
    init.cap.max_send_sge = 2;
    init.cap.max_recv_sge = 1;
    init.cap.max_inline_data = 0;
    qp_ = d.create_qp(&pd, init);
    if (!qp_) throw std::logic_error("nvme: ibv_create_qp failed on " + host_.name());
    // A reconnect's queue has a new PSN (nvme-rdma's new cm_id and QP) and keeps the buffers.
    psn_ =
        static_cast<uint32_t>(Rng::stream(seed, s.name + "/psn" + std::to_string(s.qid) +
                                                    (s.previous ? "/" + std::to_string(qp_->qp_num()) : ""))
                                  .next() &
                              0xFFFFFF);
    if (const auto* before = static_cast<const RdmaHostQueue*>(s.previous)) {
      sqes_ = before->sqes_;
      resps_ = before->resps_;
      data_ = before->data_;
      mr_ = before->mr_;
    } else {
      const uint64_t len = uint64_t{s.entries} * (kSqeLen + kCqeLen) + uint64_t{s.data_slots} * s.slot_bytes;
      const uint64_t buf = host_.memory().allocate(len);
      sqes_ = buf;
      resps_ = buf + uint64_t{s.entries} * kSqeLen;
      data_ = resps_ + uint64_t{s.entries} * kCqeLen;
      mr_ =
          d.reg_mr(&pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    }
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    if (qp_->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
      throw std::logic_error("nvme: ibv_modify_qp to INIT failed");
    for (uint32_t i = 0; i < s.entries; ++i) post_recv(i);
  }

  uint64_t data(uint32_t slot) const override { return data_ + uint64_t{slot} * s_.slot_bytes; }

  Task connect(uint16_t cntlid, bool& ok, std::string& why) override {
    CmRequest req;
    req.qid = s_.qid;
    req.hrqsize = static_cast<uint16_t>(s_.entries);
    req.hsqsize = static_cast<uint16_t>(s_.entries - 1);
    req.cntlid = s_.qid ? cntlid : 0;
    auto& port = static_cast<RdmaTargetPort&>(target_.port());
    if (cm_) {
      // rdma_resolve_addr, rdma_resolve_route, rdma_connect: a CM REQ, REP, RTU.
      std::array<std::byte, kCmPrivateLen> pd{};
      req.emit(pd);
      // The wait belongs to the CM agent that answers it (core/task.hpp,
      // Lifetime): the agent's callback alone holds the Trigger, so a run
      // that ends before the REP or the REQ's last timeout destroys this
      // frame (and its callers) with the agent, where a Trigger in the
      // frame itself kept them for ever.
      auto owned = std::make_shared<Trigger>(env_.sim);
      Trigger& answered = *owned;
      bool accepted = false;
      auto on_rep = [&, done = std::move(owned)](const CmRep* rep) {
        if (!rep) {
          // RDMA_CM_EVENT_UNREACHABLE, which nvme_rdma_cm_handler turns into -ECONNRESET.
          why = "rdma connection establishment failed (-104): CM REQ timed out after " +
                std::to_string(CmAgent::max_cm_retries()) + " retries (RDMA_CM_EVENT_UNREACHABLE)";
        } else {
          const auto acc = CmAccept::parse(std::as_bytes(std::span(rep->private_data)));
          accepted = acc && acc->crqsize >= s_.entries;
          if (!accepted) why = "the target's CM REP accepts fewer entries (CRQSIZE) than the queue has";
        }
        done->notify();
      };
      cm_->agent(host_).connect(*qp_, psn_, target_.host(), kNvmePort, pd, std::move(on_rep),
                                [this] { on_disconnected("a CM DREQ"); });
      co_await answered;
      ok = accepted;
      co_return;
    }
    // No GSI QP (iWARP): the two QPs are connected as the fabric's connection
    // set-up leaves them (its MPA exchange runs when the QPs reach RTS), the
    // request's private data in the MPA request, the accept's in the reply.
    std::array<std::byte, kCmPrivateLen> pd{};
    req.emit(pd);
    qp_->set_connect_private_data(pd);
    qp_->on_connection_closed([this] { on_disconnected("its connection closed"); });
    TargetQueue& tq = port.accept(host_, req);
    verbs::QueuePair& tqp = port.qp_of(tq);
    auto rtr_rts = [&](verbs::QueuePair& qp, Host& self, Host& peer, uint32_t dest, uint32_t rq_psn,
                       uint32_t sq_psn) {
      ibv_qp_attr a{};
      a.qp_state = IBV_QPS_RTR;
      a.ah_attr = env_.address(self, peer);
      a.path_mtu = mtu_enum(env_.mtu);
      a.dest_qp_num = dest;
      a.rq_psn = rq_psn;
      a.max_dest_rd_atomic = 16;
      a.min_rnr_timer = 12;
      qp.modify(a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
      a = {};
      a.qp_state = IBV_QPS_RTS;
      a.sq_psn = sq_psn;
      a.timeout = 14;
      a.retry_cnt = 7;
      a.rnr_retry = 7;
      a.max_rd_atomic = 16;
      qp.modify(a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                       IBV_QP_MAX_QP_RD_ATOMIC);
    };
    rtr_rts(tqp, target_.host(), host_, qp_->qp_num(), psn_, port.psn_of(tq));
    rtr_rts(*qp_, host_, target_.host(), tqp.qp_num(), port.psn_of(tq), psn_);
    co_await sleep_until(env_.sim, std::max(env_.sim.now(), env_.connect_time(host_, target_.host())));
    ok = true;
  }

  Task submit(Command cmd, uint32_t len, bool to_controller, bool& ok) override {
    const uint64_t at = data(cmd.cid);
    const bool in_capsule = to_controller && len <= target_.inline_data_size(s_.qid);
    if (len == 0)
      cmd.sgl = Sgl::keyed_block(0, 0, 0);  // no data (nvme_rdma_set_sg_null)
    else if (in_capsule)
      cmd.sgl = Sgl::in_capsule(len);
    else
      cmd.sgl = Sgl::keyed_block(at, len, mr_->rkey);
    co_await host_.post(*s_.p, 0);
    ok = post_command(cmd, in_capsule ? len : 0, at) == 0;
  }

  // nvme_rdma_stop_queue: rdma_disconnect and the QP drained. The QP goes to
  // the error state, flushing what is posted, and the CM sends the DREQ
  // (or the DREP, the target's DREQ first); on iWARP the QP's leaving RTS
  // closes its TCP connection (a FIN). Either way the target frees its
  // queue when it comes (nvmet_rdma_queue_disconnect).
  void stop() override {
    if (stopped_) return;
    stopped_ = true;
    to_error();
    if (cm_) cm_->agent(host_).disconnect(*qp_);
  }

  // A work completion in error (its retries exhausted, say), after which
  // nothing on the QP completes: nvme_rdma_wr_error; or the target's
  // disconnect.
  std::string lost() const override {
    if (disconnected_)
      return std::string("the target disconnected it (") + disconnected_ + ": RDMA_CM_EVENT_DISCONNECTED)";
    return "its RDMA connection failed (a work completion in error, such as IBV_WC_RETRY_EXC_ERR: the "
           "transport's retries exhausted)";
  }

  Task reap(std::vector<Completion>& done, uint64_t& errors, bool& failed) override {
    co_await host_.wait(*s_.p, *cq_);
    const int n = cq_->poll(static_cast<int>(wcs_.size()), wcs_.data());
    for (int i = 0; i < n; ++i) {
      const ibv_wc& wc = wcs_[i];
      if (wc.status != IBV_WC_SUCCESS) {
        // The connection failed (or was stopped): what is in flight is lost,
        // and error recovery decides what becomes of its commands.
        failed = true;
        if (wc.wr_id & kSendKind) slots_[wc.wr_id & 0xFFFF].busy = false;
        continue;
      }
      Slot* s = nullptr;
      if (wc.wr_id & kSendKind) {
        s = &slots_[wc.wr_id & 0xFFFF];
        s->send_done = true;
      } else {
        const auto cqe = Completion::parse(host_.memory().view(resps_ + wc.wr_id * kCqeLen, kCqeLen));
        post_recv(static_cast<uint32_t>(wc.wr_id));
        if (!cqe || cqe->cid >= s_.entries || !slots_[cqe->cid].busy) {
          ++errors;
          continue;
        }
        s = &slots_[cqe->cid];
        s->cqe = *cqe;
        s->resp_done = true;
      }
      if (s->busy && s->send_done && s->resp_done) {
        s->busy = false;
        done.push_back(s->cqe);
      }
    }
  }

 private:
  struct Slot {
    bool busy = false, send_done = false, resp_done = false;
    Completion cqe;
  };

  void post_recv(uint32_t slot) {
    ibv_sge sge{resps_ + uint64_t{slot} * kCqeLen, static_cast<uint32_t>(kCqeLen), mr_->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    qp_->post_recv(&wr, &bad);
  }

  void to_error() {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_ERR;
    qp_->modify(a, IBV_QP_STATE);
  }

  // The target's DREQ, or on iWARP its close of the connection
  // (RDMA_CM_EVENT_DISCONNECTED): nvme_rdma_cm_handler starts error
  // recovery, whose teardown sends the DREP. The QP flushed here has the
  // queue's reap see it.
  void on_disconnected(const char* how) {
    disconnected_ = how;
    if (!stopped_) to_error();
  }

  int post_command(const Command& cmd, uint32_t capsule_data, uint64_t data_addr) {
    const uint64_t at = sqes_ + uint64_t{cmd.cid} * kSqeLen;
    cmd.emit(host_.memory().view(at, kSqeLen));
    ibv_sge sge[2] = {{at, static_cast<uint32_t>(kSqeLen), mr_->lkey}, {data_addr, capsule_data, mr_->lkey}};
    ibv_send_wr wr{};
    wr.wr_id = kSendKind | cmd.cid;
    wr.sg_list = sge;
    wr.num_sge = capsule_data == 0 ? 1 : 2;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    Slot& s = slots_[cmd.cid];
    s.busy = true;
    s.send_done = s.resp_done = false;
    return qp_->post_send(&wr, &bad);
  }

  WorkloadEnv& env_;
  HostQueueSpec s_;
  Host& host_;
  NvmeTarget& target_;
  CmDirectory* cm_;
  std::vector<Slot> slots_;  // by CID
  std::vector<ibv_wc> wcs_ = std::vector<ibv_wc>(32);
  verbs::CompletionQueue* cq_ = nullptr;
  verbs::QueuePair* qp_ = nullptr;
  verbs::MemoryRegion* mr_ = nullptr;
  uint32_t psn_ = 0;
  bool stopped_ = false;                // stop() was called
  const char* disconnected_ = nullptr;  // how the target disconnected (its DREQ, its close); null: it did not
  uint64_t sqes_ = 0, resps_ = 0, data_ = 0;  // the command capsules, the response buffers, the data slots
};

}  // namespace

std::unique_ptr<HostQueue> make_rdma_host_queue(WorkloadEnv& env, const HostQueueSpec& spec, Host& host,
                                                NvmeTarget& target, CmDirectory* cm,
                                                verbs::ProtectionDomain& pd, uint64_t seed) {
  return std::make_unique<RdmaHostQueue>(env, spec, host, target, cm, pd, seed);
}

}  // namespace rdmasim::nvme
