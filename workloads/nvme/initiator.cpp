#include "workloads/nvme/initiator.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "workloads/nvme/block_pattern.hpp"
#include "workloads/nvme/wire/connect_data.hpp"
#include "workloads/workload.hpp"

namespace rdmasim::nvme {
namespace {

constexpr uint64_t kSendKind = 1ull << 32;
constexpr uint32_t kAdminEntries = 32;  // NVME_AQ_DEPTH
constexpr uint32_t kKato = 0;           // no keep-alive

bool writes_only(NvmeRw rw) { return rw == NvmeRw::write || rw == NvmeRw::randwrite; }
bool mixed(NvmeRw rw) { return rw == NvmeRw::randrw || rw == NvmeRw::readwrite; }
bool sequential(NvmeRw rw) { return rw == NvmeRw::read || rw == NvmeRw::write || rw == NvmeRw::readwrite; }

}  // namespace

struct NvmeJob::Slot {
  bool busy = false, send_done = false, resp_done = false, write = false;
  uint64_t lba = 0;
  uint32_t blocks = 0;
  Time issued, posted;
  std::vector<uint32_t> gens;  // write: each block's generation; read: the least each may hold
  Completion cqe;
};

struct NvmeJob::Queue {
  uint16_t qid = 0;
  uint32_t job = 0;
  uint32_t entries = 0;
  Process* p = nullptr;
  verbs::CompletionQueue* cq = nullptr;
  verbs::QueuePair* qp = nullptr;
  verbs::MemoryRegion* mr = nullptr;
  uint32_t psn = 0;
  uint64_t sqes = 0, resps = 0, data = 0;  // the command capsules, the response buffers, the data slots
  uint64_t slot_bytes = 0;
  std::vector<Slot> slots;  // by CID
  uint32_t inflight = 0;
  Rng rng;
  uint64_t next_seq = 0;  // sequential jobs: the next position
  uint64_t issued_bytes = 0;
};

NvmeJob::NvmeJob(WorkloadEnv& env, std::string name, const NvmeJobConfig& c, Host& initiator,
                 NvmeTarget& target, CmDirectory* cm, uint64_t seed)
    : env_(env), name_(std::move(name)), c_(c), host_(initiator), target_(target), cm_(cm), seed_(seed) {
  ns_ = target.ns(c.nsid);
  if (!ns_) throw std::logic_error("nvme: namespace " + std::to_string(c.nsid) + " not on the target");
  pd_ = host_.device().alloc_pd();
  auto admin = std::make_unique<Queue>();
  make_queue(*admin, 0, kAdminEntries, 1, kConnectDataLen);
  queues_.push_back(std::move(admin));
  for (uint32_t j = 0; j < c.numjobs; ++j) {
    auto q = std::make_unique<Queue>();
    q->job = j;
    q->rng = Rng::stream(seed, name_ + "/" + std::to_string(j));
    make_queue(*q, static_cast<uint16_t>(j + 1), c.queue_size, c.iodepth,
               std::max<uint64_t>(c.bs, kConnectDataLen));
    queues_.push_back(std::move(q));
  }
}

NvmeJob::~NvmeJob() = default;

void NvmeJob::make_queue(Queue& q, uint16_t qid, uint32_t entries, uint32_t data_slots, uint64_t slot_bytes) {
  verbs::Device& d = host_.device();
  q.qid = qid;
  q.entries = entries;
  q.slot_bytes = slot_bytes;
  q.slots.resize(entries);
  q.p = &host_.spawn(qid ? name_ + "/" + std::to_string(q.job) : name_ + "/admin");
  q.cq = d.create_cq(static_cast<int>(2 * entries + 4));
  verbs::QpInitAttr init;
  init.send_cq = init.recv_cq = q.cq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = entries + 1;
  init.cap.max_recv_wr = entries;
  init.cap.max_send_sge = 2;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = 0;
  q.qp = d.create_qp(pd_, init);
  if (!q.qp) throw std::logic_error("nvme: ibv_create_qp failed on " + host_.name());
  q.psn = static_cast<uint32_t>(Rng::stream(seed_, name_ + "/psn" + std::to_string(qid)).next() & 0xFFFFFF);
  const uint64_t len = uint64_t{entries} * (kSqeLen + kCqeLen) + uint64_t{data_slots} * slot_bytes;
  const uint64_t buf = host_.memory().allocate(len);
  q.sqes = buf;
  q.resps = buf + uint64_t{entries} * kSqeLen;
  q.data = q.resps + uint64_t{entries} * kCqeLen;
  q.mr = d.reg_mr(pd_, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  if (q.qp->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
    throw std::logic_error("nvme: ibv_modify_qp to INIT failed");
  for (uint32_t i = 0; i < entries; ++i) post_recv(q, i);
}

void NvmeJob::post_recv(Queue& q, uint32_t slot) {
  ibv_sge sge{q.resps + uint64_t{slot} * kCqeLen, static_cast<uint32_t>(kCqeLen), q.mr->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  q.qp->post_recv(&wr, &bad);
}

int NvmeJob::post_command(Queue& q, const Command& cmd, std::span<const std::byte> capsule_data,
                          uint64_t data_addr) {
  const uint64_t at = q.sqes + uint64_t{cmd.cid} * kSqeLen;
  cmd.emit(host_.memory().view(at, kSqeLen));
  ibv_sge sge[2] = {{at, static_cast<uint32_t>(kSqeLen), q.mr->lkey},
                    {data_addr, static_cast<uint32_t>(capsule_data.size()), q.mr->lkey}};
  ibv_send_wr wr{};
  wr.wr_id = kSendKind | cmd.cid;
  wr.sg_list = sge;
  wr.num_sge = capsule_data.empty() ? 1 : 2;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  Slot& s = q.slots[cmd.cid];
  s.busy = true;
  s.send_done = s.resp_done = false;
  ++q.inflight;
  return q.qp->post_send(&wr, &bad);
}

void NvmeJob::start() {
  started_ = true;
  running_ = 1;
  Simulator::Scope as(env_.sim, host_.context());
  controller();
}

Task NvmeJob::connect(Queue& q) {
  CmRequest req;
  req.qid = q.qid;
  req.hrqsize = static_cast<uint16_t>(q.entries);
  req.hsqsize = static_cast<uint16_t>(q.entries - 1);
  req.cntlid = q.qid ? cntlid_ : 0;
  if (cm_) {
    // rdma_resolve_addr, rdma_resolve_route, rdma_connect: a CM REQ, REP, RTU.
    std::array<std::byte, kCmPrivateLen> pd{};
    req.emit(pd);
    Trigger done(env_.sim);
    bool accepted = false;
    cm_->agent(host_).connect(*q.qp, q.psn, target_.host(), kNvmePort, pd, [&](const CmRep& rep) {
      const auto acc = CmAccept::parse(std::as_bytes(std::span(rep.private_data)));
      accepted = acc && acc->crqsize >= q.entries;
      done.notify();
    });
    co_await done;
    if (!accepted) failed_ = true;
    co_return;
  }
  // No GSI QP (iWARP): the two QPs are connected as the fabric's connection
  // set-up leaves them (its MPA exchange runs when the QPs reach RTS).
  NvmeTarget::Queue& tq = target_.accept(host_, req);
  verbs::QueuePair& tqp = target_.qp_of(tq);
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
  rtr_rts(tqp, target_.host(), host_, q.qp->qp_num(), q.psn, target_.psn_of(tq));
  rtr_rts(*q.qp, host_, target_.host(), tqp.qp_num(), target_.psn_of(tq), q.psn);
  co_await sleep_until(env_.sim, std::max(env_.sim.now(), env_.connect_time(host_, target_.host())));
}

Task NvmeJob::admin(Queue& q, Command cmd, Completion& out, std::span<const std::byte> data) {
  cmd.cid = 0;
  uint64_t inline_len = 0;
  if (!data.empty()) {
    auto slot = host_.memory().view(q.data, data.size());
    std::copy(data.begin(), data.end(), slot.begin());
    if (data.size() <= target_.inline_data_size(q.qid)) {
      cmd.sgl = Sgl::in_capsule(static_cast<uint32_t>(data.size()));
      inline_len = data.size();
    } else {
      cmd.sgl = Sgl::keyed_block(q.data, static_cast<uint32_t>(data.size()), q.mr->rkey);
    }
  }
  co_await host_.post(*q.p, 0);
  if (post_command(q, cmd, host_.memory().view(q.data, inline_len), q.data) != 0) {
    failed_ = true;
    co_return;
  }
  std::vector<ibv_wc> wcs(8);
  Slot& s = q.slots[0];
  while (!(s.send_done && s.resp_done)) {
    co_await host_.wait(*q.p, *q.cq);
    const int n = q.cq->poll(static_cast<int>(wcs.size()), wcs.data());
    for (int i = 0; i < n; ++i) {
      const ibv_wc& wc = wcs[i];
      if (wc.status != IBV_WC_SUCCESS) {
        failed_ = true;
        co_return;
      }
      if (wc.wr_id & kSendKind) {
        s.send_done = true;
        continue;
      }
      const auto cqe = Completion::parse(host_.memory().view(q.resps + wc.wr_id * kCqeLen, kCqeLen));
      post_recv(q, static_cast<uint32_t>(wc.wr_id));
      if (cqe && cqe->cid == 0) {
        s.cqe = *cqe;
        s.resp_done = true;
      }
    }
  }
  s.busy = false;
  --q.inflight;
  out = s.cqe;
  if (!out.ok()) failed_ = true;
}

Task NvmeJob::controller() {
  co_await sleep_until(env_.sim, c_.start_time);
  Queue& aq = *queues_[0];
  ConnectData cd;
  for (size_t i = 0; i < 16; ++i)
    cd.hostid[i] = static_cast<uint8_t>(Rng::stream(seed_, host_.name()).next() >> (i % 8 * 8));
  cd.subnqn = "nqn.2014-08.org.nvmexpress:rdmasim:" + target_.host().name();
  cd.hostnqn = "nqn.2014-08.org.nvmexpress:uuid:rdmasim-" + host_.name();
  std::array<std::byte, kConnectDataLen> cdb{};
  Completion cqe;
  co_await connect(aq);
  if (!failed_) {
    cd.cntlid = kDynamicController;
    cd.emit(cdb);
    co_await admin(aq, Command::connect(0, 0, static_cast<uint16_t>(aq.entries - 1), kKato, {}), cqe, cdb);
    cntlid_ = static_cast<uint16_t>(cqe.dw0);
  }
  // Enable the controller (CC.EN with 64-byte SQEs and 16-byte CQEs), then see it ready.
  if (!failed_) co_await admin(aq, Command::property_set(0, kPropCc, 0x00460001, false), cqe);
  if (!failed_) co_await admin(aq, Command::property_get(0, kPropCsts, false), cqe);
  for (size_t j = 1; j < queues_.size() && !failed_; ++j) {
    Queue& q = *queues_[j];
    co_await connect(q);
    if (failed_) break;
    cd.cntlid = cntlid_;
    cd.emit(cdb);
    co_await admin(q, Command::connect(0, q.qid, static_cast<uint16_t>(q.entries - 1), kKato, {}), cqe, cdb);
  }
  io_start_ = env_.sim.now();
  r_.measure_start = io_start_ + c_.ramp_time;
  if (!failed_) {
    for (size_t j = 1; j < queues_.size(); ++j) {
      ++running_;
      Simulator::Scope as(env_.sim, host_.context());
      io(*queues_[j]);
    }
  }
  if (--running_ == 0) r_.finished = true;
}

Task NvmeJob::io(Queue& q) {
  const uint32_t bsz = ns_->cfg.block_size;
  const uint32_t blocks = static_cast<uint32_t>(c_.bs / bsz);
  const uint64_t region = c_.size ? c_.size : ns_->cfg.size - c_.offset;
  const uint64_t positions = std::max<uint64_t>(1, region / c_.bs);
  const uint64_t io_bytes = region;  // fio's io_size: the region's size unless runtime ends it first
  const uint64_t lba0 = c_.offset / bsz;
  const bool timed = c_.runtime.count() > 0;
  const Time end_at = io_start_ + c_.ramp_time + c_.runtime;
  const uint32_t capsule = target_.inline_data_size(q.qid);
  std::vector<ibv_wc> wcs(32);
  while (true) {
    while (q.inflight < c_.iodepth && !failed_ && q.issued_bytes < io_bytes &&
           !(timed && env_.sim.now() >= end_at)) {
      uint32_t cid = 0;
      while (q.slots[cid].busy) ++cid;
      Slot& s = q.slots[cid];
      s.write = writes_only(c_.rw) || (mixed(c_.rw) && q.rng.between(1, 100) > c_.rwmixread);
      const uint64_t k = sequential(c_.rw) ? q.next_seq++ % positions : q.rng.between(0, positions - 1);
      s.lba = lba0 + k * blocks;
      s.blocks = blocks;
      s.gens.assign(blocks, 0);
      const uint64_t data = q.data + uint64_t{cid} * q.slot_bytes;
      for (uint32_t i = 0; i < blocks; ++i) {
        const uint64_t lba = s.lba + i;
        if (s.write) {
          s.gens[i] = ++ns_->issued[lba];
          fill_block(host_.memory().view(data + uint64_t{i} * bsz, bsz), {lba, s.gens[i], c_.nsid});
        } else {
          s.gens[i] = Namespace::get(ns_->committed, lba);
        }
      }
      const bool in_capsule = s.write && c_.bs <= capsule;
      const Sgl sgl = in_capsule ? Sgl::in_capsule(static_cast<uint32_t>(c_.bs))
                                 : Sgl::keyed_block(data, static_cast<uint32_t>(c_.bs), q.mr->rkey);
      const Command cmd = Command::io(s.write ? Opcode::write : Opcode::read, static_cast<uint16_t>(cid),
                                      c_.nsid, s.lba, blocks, sgl);
      s.issued = env_.sim.now();
      co_await host_.post(*q.p, 0);
      s.posted = env_.sim.now();
      q.issued_bytes += c_.bs;
      if (post_command(q, cmd, in_capsule ? host_.memory().view(data, c_.bs) : std::span<const std::byte>{},
                       data) != 0) {
        failed_ = true;
        ++r_.errors;
        --q.inflight;
        s.busy = false;
      }
    }
    if (q.inflight == 0) break;
    co_await host_.wait(*q.p, *q.cq);
    const int n = q.cq->poll(static_cast<int>(wcs.size()), wcs.data());
    for (int i = 0; i < n; ++i) {
      const ibv_wc& wc = wcs[i];
      if (wc.status != IBV_WC_SUCCESS) {
        // The connection failed: what is in flight is lost.
        ++r_.errors;
        failed_ = true;
        if (wc.wr_id & kSendKind) {
          Slot& s = q.slots[wc.wr_id & 0xFFFF];
          if (s.busy) {
            s.busy = false;
            --q.inflight;
          }
        }
        continue;
      }
      Slot* s = nullptr;
      if (wc.wr_id & kSendKind) {
        s = &q.slots[wc.wr_id & 0xFFFF];
        s->send_done = true;
      } else {
        const auto cqe = Completion::parse(host_.memory().view(q.resps + wc.wr_id * kCqeLen, kCqeLen));
        post_recv(q, static_cast<uint32_t>(wc.wr_id));
        if (!cqe || cqe->cid >= q.entries || !q.slots[cqe->cid].busy) {
          ++r_.errors;
          continue;
        }
        s = &q.slots[cqe->cid];
        s->cqe = *cqe;
        s->resp_done = true;
      }
      if (s->busy && s->send_done && s->resp_done) complete(q, *s);
    }
    if (failed_) {
      // Nothing more will complete on a failed connection.
      for (Slot& s : q.slots) s.busy = false;
      q.inflight = 0;
    }
  }
  if (--running_ == 0) r_.finished = true;
}

void NvmeJob::complete(Queue& q, Slot& s) {
  s.busy = false;
  --q.inflight;
  const Time now = env_.sim.now();
  const uint32_t bsz = ns_->cfg.block_size;
  const uint32_t cid = static_cast<uint32_t>(&s - q.slots.data());
  if (!s.cqe.ok()) {
    ++r_.errors;
  } else if (s.write) {
    for (uint32_t i = 0; i < s.blocks; ++i) {
      uint32_t& c = ns_->committed[s.lba + i];
      c = std::max(c, s.gens[i]);
    }
  } else {
    const uint64_t data = q.data + uint64_t{cid} * q.slot_bytes;
    for (uint32_t i = 0; i < s.blocks; ++i) {
      const uint64_t lba = s.lba + i;
      const auto st = read_block(host_.memory().view(data + uint64_t{i} * bsz, bsz));
      if (!st || st->lba != lba || st->nsid != c_.nsid || st->generation < s.gens[i] ||
          st->generation > Namespace::get(ns_->issued, lba))
        ++r_.bad_blocks;
    }
  }
  if (recording_)
    records_.push_back(
        {q.job, s.write, s.lba, s.blocks, s.issued.count(), now.count(), s.cqe.status_field()});
  if (now < r_.measure_start || !s.cqe.ok()) return;
  DirStats& d = s.write ? r_.write : r_.read;
  ++d.ios;
  d.bytes += c_.bs;
  d.slat.push_back((s.posted - s.issued).count());
  d.clat.push_back((now - s.posted).count());
  d.lat.push_back((now - s.issued).count());
  r_.measure_end = std::max(r_.measure_end, now);
}

NvmeResult NvmeJob::result() const {
  NvmeResult r = r_;
  r.bad_blocks += ns_->bad_blocks;
  r.data_verified = r.bad_blocks == 0 && !failed_ && r.errors == 0;
  r.finished = finished();
  r.initiator_cpu = host_.cpu_busy();
  r.target_cpu = target_.host().cpu_busy();
  return r;
}

}  // namespace rdmasim::nvme
