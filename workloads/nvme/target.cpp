#include "workloads/nvme/target.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "workloads/nvme/block_pattern.hpp"
#include "workloads/nvme/wire/connect_data.hpp"
#include "workloads/workload.hpp"

namespace rdmasim::nvme {
namespace {

enum Kind : uint64_t { kRecv = 0, kRead = 1, kSend = 2, kWrite = 3 };
uint64_t wr_id(uint64_t queue, Kind k, uint64_t slot) { return queue << 32 | uint64_t{k} << 28 | slot; }

// CPU a command costs when the mode's default applies: an SPDK poller
// spends about a microsecond per I/O, the kernel target (nvmet-rdma, in
// softirq and a workqueue) a few.
constexpr Time kPollIoCost = Time::ns(1000);
constexpr Time kInterruptIoCost = Time::ns(3000);
constexpr uint32_t kMdts = 1 << 20;  // largest transfer a command may ask for

}  // namespace

struct NvmeTarget::Cmd {
  Command c;
  Namespace* ns = nullptr;
  uint64_t buf = 0, cap = 0;  // bounce buffer for the command's data
  verbs::MemoryRegion* mr = nullptr;
  uint64_t len = 0;  // bytes of data
  bool busy = false;
};

struct NvmeTarget::Queue {
  uint32_t index = 0;
  uint16_t qid = 0, cntlid = 0;
  uint32_t entries = 0;  // HSQSIZE + 1
  uint16_t sqhd = 0;
  Host* from = nullptr;
  Poller* poller = nullptr;
  verbs::QueuePair* qp = nullptr;
  uint32_t psn = 0;
  uint64_t rbuf = 0, resp = 0;
  uint32_t rslot = 0;  // bytes of a receive buffer: the SQE and in-capsule data
  verbs::MemoryRegion* rmr = nullptr;
  verbs::MemoryRegion* respmr = nullptr;
  std::vector<Cmd> cmds;  // by CID (the host's CIDs are below `entries`)
  // A command can arrive before the RTU is handled (the host sends it right
  // after its RTU): it waits, as in nvmet-rdma, until the queue is established.
  bool established = false;
  std::vector<std::pair<uint32_t, uint32_t>> parked;  // receive slot, length
};

struct NvmeTarget::Poller {
  uint32_t index = 0;
  Process* p = nullptr;
  verbs::CompletionQueue* cq = nullptr;
  Time owed;  // CPU the SSD's completions asked for, run at the poller's next turn
};

NvmeTarget::NvmeTarget(WorkloadEnv& env, Host& h, const StorageTargetConfig& c, CmDirectory* cm,
                       uint64_t seed)
    : env_(env), host_(h), c_(c), cm_(cm), rng_(seed) {
  ssd_ = std::make_unique<Ssd>(c.ssd, seed ^ 0x55D);
  for (const NamespaceConfig& n : c.namespaces) {
    auto ns = std::make_unique<Namespace>();
    ns->cfg = n;
    ns->blocks = n.size / n.block_size;
    namespaces_.push_back(std::move(ns));
  }
  pd_ = h.device().alloc_pd();
  for (uint32_t i = 0; i < std::max<uint32_t>(1, c.cores); ++i) {
    auto p = std::make_unique<Poller>();
    p->index = i;
    p->p = &h.spawn(std::string(c.cpu == TargetCpu::poll ? "nvmf_poller" : "nvmet_rdma") + std::to_string(i));
    p->cq = h.device().create_cq(16384);
    pollers_.push_back(std::move(p));
  }
  Simulator::Scope as(env_.sim, h.context());
  for (auto& p : pollers_) poll(*p);
  if (cm) {
    cm->agent(h).listen(kNvmePort, [this](const CmAgent::Incoming& in) {
      const auto req = CmRequest::parse(in.consumer);
      if (!req) throw std::logic_error("nvme target: a CM REQ without NVMe-oF private data");
      Queue& q = accept(*in.from, *req);
      CmAgent::Accepted a;
      a.qp = q.qp;
      a.established = [this, &q] {
        q.established = true;
        for (const auto& [slot, len] : std::exchange(q.parked, {})) on_command(q, slot, len);
      };
      a.psn = q.psn;
      a.private_data.resize(kCmPrivateLen);
      CmAccept{0, static_cast<uint16_t>(q.entries)}.emit(a.private_data);
      return a;
    });
  }
}

NvmeTarget::~NvmeTarget() = default;

Namespace* NvmeTarget::ns(uint32_t nsid) {
  for (auto& n : namespaces_)
    if (n->cfg.nsid == nsid) return n.get();
  return nullptr;
}

verbs::QueuePair& NvmeTarget::qp_of(const Queue& q) const { return *q.qp; }
uint32_t NvmeTarget::psn_of(const Queue& q) const { return q.psn; }

Time NvmeTarget::io_cost() const {
  if (c_.io_cost.count() > 0) return c_.io_cost;
  return c_.cpu == TargetCpu::poll ? kPollIoCost : kInterruptIoCost;
}

NvmeTarget::Queue& NvmeTarget::accept(Host& from, const CmRequest& req) {
  auto q = std::make_unique<Queue>();
  q->index = static_cast<uint32_t>(queues_.size());
  q->qid = req.qid;
  q->cntlid = req.cntlid;
  q->entries = uint32_t{req.hsqsize} + 1;
  q->from = &from;
  // Queues go to the pollers in turn as they connect (SPDK's round robin over poll groups).
  q->poller = pollers_[next_poller_++ % pollers_.size()].get();
  verbs::Device& d = host_.device();
  verbs::QpInitAttr init;
  init.send_cq = init.recv_cq = q->poller->cq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = 2 * q->entries + 1;  // a WRITE and a SEND per command
  init.cap.max_recv_wr = q->entries;
  init.cap.max_send_sge = init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = 0;
  q->qp = d.create_qp(pd_, init);
  if (!q->qp) throw std::logic_error("nvme target: ibv_create_qp failed on " + host_.name());
  q->psn = static_cast<uint32_t>(rng_.next() & 0xFFFFFF);
  q->rslot = static_cast<uint32_t>(kSqeLen + inline_data_size(q->qid));
  q->rbuf = host_.memory().allocate(uint64_t{q->rslot} * q->entries);
  q->rmr = d.reg_mr(pd_, q->rbuf, uint64_t{q->rslot} * q->entries, IBV_ACCESS_LOCAL_WRITE);
  q->resp = host_.memory().allocate(kCqeLen * q->entries);
  q->respmr = d.reg_mr(pd_, q->resp, kCqeLen * q->entries, IBV_ACCESS_LOCAL_WRITE);
  q->cmds.resize(q->entries);
  q->established = !cm_;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
  if (q->qp->modify(a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
    throw std::logic_error("nvme target: ibv_modify_qp to INIT failed");
  for (uint32_t i = 0; i < q->entries; ++i) post_recv(*q, i);
  queues_.push_back(std::move(q));
  return *queues_.back();
}

void NvmeTarget::post_recv(Queue& q, uint32_t slot) {
  ibv_sge sge{q.rbuf + uint64_t{slot} * q.rslot, q.rslot, q.rmr->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = wr_id(q.index, kRecv, slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  q.qp->post_recv(&wr, &bad);
}

Task NvmeTarget::wait(Poller& p) {
  Cpu& cpu = host_.cpu();
  const HostConfig& hc = host_.config();
  if (c_.cpu == TargetCpu::poll) {
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

Task NvmeTarget::poll(Poller& p) {
  std::vector<ibv_wc> wcs(32);
  const CpuUse use = c_.cpu == TargetCpu::poll ? CpuUse::user : CpuUse::softirq;
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
        co_await host_.cpu().run(*p.p, use, io_cost());
      handle(p, wcs[i]);
    }
  }
}

void NvmeTarget::handle(Poller&, const ibv_wc& wc) {
  const uint64_t qi = wc.wr_id >> 32;
  const auto kind = static_cast<Kind>(wc.wr_id >> 28 & 0xF);
  const auto slot = static_cast<uint32_t>(wc.wr_id & 0xFFFFFFF);
  if (qi >= queues_.size()) return;
  Queue& q = *queues_[qi];
  if (wc.status != IBV_WC_SUCCESS) {
    ++stats_.errors;  // a flushed or failed work request: the connection is gone
    return;
  }
  switch (kind) {
    case kRecv:
      on_command(q, slot, wc.byte_len);
      break;
    case kRead:  // the host's data of a write (or of a Connect) has arrived
      data_arrived(q, q.cmds[slot]);
      break;
    case kSend:
    case kWrite:
      break;
  }
}

uint64_t NvmeTarget::bounce(Queue& q, Cmd& c, uint64_t len) {
  if (c.cap < len) {
    if (c.mr) host_.device().dereg_mr(c.mr);
    c.cap = std::max<uint64_t>(len, 4096);
    c.buf = host_.memory().allocate(c.cap);
    c.mr = host_.device().reg_mr(pd_, c.buf, c.cap, IBV_ACCESS_LOCAL_WRITE);
  }
  (void)q;
  return c.buf;
}

void NvmeTarget::on_command(Queue& q, uint32_t slot, uint32_t len) {
  if (!q.established) {
    q.parked.emplace_back(slot, len);
    return;
  }
  const auto capsule = host_.memory().view(q.rbuf + uint64_t{slot} * q.rslot, q.rslot);
  const auto cmd = Command::parse(capsule.first(std::min<size_t>(len, capsule.size())));
  ++stats_.commands;
  if (!cmd || cmd->cid >= q.entries) {  // nothing we could answer by CID
    ++stats_.errors;
    post_recv(q, slot);
    return;
  }
  Cmd& c = q.cmds[cmd->cid];
  c.c = *cmd;
  c.ns = nullptr;
  c.busy = true;
  // Host-to-controller data in the capsule: copied out before the buffer is reused.
  const bool to_controller =
      cmd->opcode == Opcode::write || (cmd->is_fabrics() && cmd->fctype == FabricsType::connect);
  if (to_controller && !cmd->sgl.keyed) {
    const uint64_t off = cmd->sgl.address, n = cmd->sgl.length;
    if (off + n > len - kSqeLen || kSqeLen + off + n > q.rslot) {
      post_recv(q, slot);
      respond(q, c, Status::sgl_data_block_length_invalid);
      return;
    }
    const uint64_t b = bounce(q, c, n);
    const auto src = capsule.subspan(kSqeLen + off, n);
    std::copy(src.begin(), src.end(), host_.memory().view(b, n).begin());
    c.len = n;
    post_recv(q, slot);
    data_arrived(q, c);
    return;
  }
  post_recv(q, slot);
  execute(q, c);
}

// A command whose data (if it brings any) is still with the host.
void NvmeTarget::execute(Queue& q, Cmd& c) {
  const Command& cmd = c.c;
  if (cmd.is_fabrics()) {
    switch (cmd.fctype) {
      case FabricsType::connect:
        if (!cmd.sgl.keyed || cmd.sgl.length < kConnectDataLen) {
          respond(q, c, Status::sgl_data_block_length_invalid);
          return;
        }
        break;  // fetched below
      case FabricsType::property_get: {
        uint64_t v = 0;
        if (cmd.property_offset() == kPropCap)
          v = uint64_t{q.entries - 1} | uint64_t{1} << 37;  // MQES, CSS NVM
        if (cmd.property_offset() == kPropCsts) v = 1;      // RDY
        respond(q, c, Status::success, static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32));
        return;
      }
      case FabricsType::property_set:
        respond(q, c, Status::success);
        return;
      default:
        respond(q, c, Status::invalid_opcode);
        return;
    }
  } else {
    c.ns = ns(cmd.nsid);
    if (!c.ns) {
      respond(q, c, Status::invalid_namespace);
      return;
    }
    if (cmd.opcode == Opcode::flush) {
      respond(q, c, Status::success);
      return;
    }
    if (cmd.opcode != Opcode::read && cmd.opcode != Opcode::write) {
      respond(q, c, Status::invalid_opcode);
      return;
    }
    if (cmd.slba() + cmd.nlb() > c.ns->blocks) {
      respond(q, c, Status::lba_out_of_range);
      return;
    }
    c.len = uint64_t{cmd.nlb()} * c.ns->cfg.block_size;
    if (!cmd.sgl.keyed || cmd.sgl.length != c.len || c.len > kMdts) {
      respond(q, c, Status::sgl_data_block_length_invalid);
      return;
    }
    if (cmd.opcode == Opcode::read) {
      ++stats_.reads;
      serve(q, c);
      return;
    }
  }
  // Host-to-controller data by RDMA READ from the host's keyed buffer.
  const uint64_t n = cmd.is_fabrics() ? kConnectDataLen : c.len;
  c.len = n;
  const uint64_t b = bounce(q, c, n);
  ibv_sge sge{b, static_cast<uint32_t>(n), c.mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id(q.index, kRead, cmd.cid);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = cmd.sgl.address;
  wr.wr.rdma.rkey = cmd.sgl.key;
  ibv_send_wr* bad = nullptr;
  if (q.qp->post_send(&wr, &bad) != 0) respond(q, c, Status::data_transfer_error);
}

void NvmeTarget::data_arrived(Queue& q, Cmd& c) {
  const Command& cmd = c.c;
  if (cmd.is_fabrics()) {
    finish_connect(q, c, host_.memory().view(c.buf, kConnectDataLen));
    return;
  }
  if (!c.ns) {  // an in-capsule write checks here what execute() checks for the others
    c.ns = ns(cmd.nsid);
    if (!c.ns) return respond(q, c, Status::invalid_namespace);
    if (cmd.slba() + cmd.nlb() > c.ns->blocks) return respond(q, c, Status::lba_out_of_range);
    if (c.len != uint64_t{cmd.nlb()} * c.ns->cfg.block_size)
      return respond(q, c, Status::sgl_data_block_length_invalid);
  }
  ++stats_.writes;
  serve(q, c);
}

void NvmeTarget::finish_connect(Queue& q, Cmd& c, std::span<const std::byte> data) {
  const auto d = ConnectData::parse(data);
  const Command& cmd = c.c;
  if (!d || cmd.qid() != q.qid || cmd.recfmt() != 0 || uint32_t{cmd.sqsize()} + 1 != q.entries) {
    respond(q, c, Status{kConnectInvalidParameters}, 0, 0, 1);
    return;
  }
  if (q.qid == 0) {
    q.cntlid = next_cntlid_++;
  } else if (d->cntlid != q.cntlid) {
    respond(q, c, Status{kConnectInvalidParameters}, 0, 0, 1);
    return;
  }
  respond(q, c, Status::success, q.cntlid);
}

void NvmeTarget::serve(Queue& q, Cmd& c) {
  const Command& cmd = c.c;
  const bool write = cmd.opcode == Opcode::write;
  Namespace& ns = *c.ns;
  const uint32_t bsz = ns.cfg.block_size;
  if (write) {  // what landed must carry the stamps the command names
    const auto data = host_.memory().view(c.buf, c.len);
    for (uint32_t i = 0; i < cmd.nlb(); ++i) {
      const auto s = read_block(data.subspan(uint64_t{i} * bsz, bsz));
      if (!s || s->lba != cmd.slba() + i || s->nsid != ns.cfg.nsid) ++ns.bad_blocks;
    }
  }
  const Time now = env_.sim.now();
  const Time done = ns.cfg.ram ? now + ns.cfg.ram_latency : ssd_->submit(write, c.len, now);
  const uint32_t cid = cmd.cid;
  const uint32_t qi = q.index;
  env_.sim.at(done, [this, qi, cid] {
    Queue& q = *queues_[qi];
    Cmd& c = q.cmds[cid];
    const Command& cmd = c.c;
    Namespace& ns = *c.ns;
    const uint32_t bsz = ns.cfg.block_size;
    // The SSD's completion is handled now; its CPU is the poller's next.
    q.poller->owed = q.poller->owed + io_cost() / 2;
    if (cmd.opcode == Opcode::write) {
      const auto data = host_.memory().view(c.buf, c.len);
      for (uint32_t i = 0; i < cmd.nlb(); ++i)
        if (const auto s = read_block(data.subspan(uint64_t{i} * bsz, bsz)))
          ns.stored[cmd.slba() + i] = s->generation;
      respond(q, c, Status::success);
      return;
    }
    const uint64_t b = bounce(q, c, c.len);
    const auto data = host_.memory().view(b, c.len);
    for (uint32_t i = 0; i < cmd.nlb(); ++i) {
      const uint64_t lba = cmd.slba() + i;
      fill_block(data.subspan(uint64_t{i} * bsz, bsz), {lba, Namespace::get(ns.stored, lba), ns.cfg.nsid});
    }
    ibv_sge sge{b, static_cast<uint32_t>(c.len), c.mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id(q.index, kWrite, cid);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.wr.rdma.remote_addr = cmd.sgl.address;
    wr.wr.rdma.rkey = cmd.sgl.key;
    ibv_send_wr* bad = nullptr;
    if (q.qp->post_send(&wr, &bad) != 0) return respond(q, c, Status::data_transfer_error);
    respond(q, c, Status::success);
  });
}

void NvmeTarget::respond(Queue& q, Cmd& c, Status s, uint32_t dw0, uint32_t dw1, uint8_t sct) {
  if (s != Status::success) ++stats_.errors;
  c.busy = false;
  q.sqhd = static_cast<uint16_t>((q.sqhd + 1) % q.entries);
  Completion cqe;
  cqe.dw0 = dw0;
  cqe.dw1 = dw1;
  cqe.sqhd = q.sqhd;
  cqe.sqid = q.qid;
  cqe.cid = c.c.cid;
  cqe.sc = static_cast<uint8_t>(s);
  cqe.sct = sct;
  cqe.dnr = s != Status::success;
  const uint64_t at = q.resp + uint64_t{c.c.cid} * kCqeLen;
  cqe.emit(host_.memory().view(at, kCqeLen));
  ibv_sge sge{at, static_cast<uint32_t>(kCqeLen), q.respmr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id(q.index, kSend, c.c.cid);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  q.qp->post_send(&wr, &bad);
}

}  // namespace rdmasim::nvme
