#include "workloads/nvme/target.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "workloads/nvme/block_pattern.hpp"
#include "workloads/nvme/rdma_transport.hpp"
#include "workloads/nvme/tcp_transport.hpp"
#include "workloads/nvme/wire/connect_data.hpp"
#include "workloads/socket_flow.hpp"
#include "workloads/workload.hpp"

namespace rdmasim::nvme {
namespace {

// CPU a command costs when the mode's default applies: an SPDK poller
// spends about a microsecond per I/O, the kernel target (nvmet-rdma, in
// softirq and a workqueue) a few.
constexpr Time kPollIoCost = Time::ns(1000);
constexpr Time kInterruptIoCost = Time::ns(3000);
constexpr uint32_t kMdts = 1 << 20;  // largest transfer a command may ask for

}  // namespace

NvmeTarget::NvmeTarget(WorkloadEnv& env, Host& h, const StorageTargetConfig& c, CmDirectory* cm,
                       uint64_t seed)
    : env_(env), host_(h), c_(c), rng_(seed) {
  ssd_ = std::make_unique<Ssd>(c.ssd, seed ^ 0x55D);
  for (const NamespaceConfig& n : c.namespaces) {
    auto ns = std::make_unique<Namespace>();
    ns->cfg = n;
    ns->blocks = n.size / n.block_size;
    namespaces_.push_back(std::move(ns));
  }
  if (has_kernel_stack(h))
    port_ = std::make_unique<TcpTargetPort>(*this);
  else
    port_ = std::make_unique<RdmaTargetPort>(*this, cm);
}

NvmeTarget::~NvmeTarget() = default;

Namespace* NvmeTarget::ns(uint32_t nsid) {
  for (auto& n : namespaces_)
    if (n->cfg.nsid == nsid) return n.get();
  return nullptr;
}

Time NvmeTarget::io_cost() const {
  if (c_.io_cost.count() > 0) return c_.io_cost;
  return c_.cpu == TargetCpu::poll ? kPollIoCost : kInterruptIoCost;
}

TargetQueue& NvmeTarget::add_queue(Host& from, uint16_t qid, uint32_t entries) {
  auto q = std::make_unique<TargetQueue>();
  q->index = static_cast<uint32_t>(queues_.size());
  q->qid = qid;
  q->entries = entries;
  q->from = &from;
  q->cmds.resize(entries);
  queues_.push_back(std::move(q));
  return *queues_.back();
}

uint64_t NvmeTarget::bounce(TargetCmd& c, uint64_t len) {
  if (c.cap < len) {
    c.cap = std::max<uint64_t>(len, 4096);
    c.buf = host_.memory().allocate(c.cap);
    port_->prepare_buffer(c);
  }
  return c.buf;
}

void NvmeTarget::on_command(TargetQueue& q, std::span<const std::byte> capsule, uint32_t len) {
  const auto cmd = Command::parse(capsule.first(std::min<size_t>(len, capsule.size())));
  ++stats_.commands;
  if (!cmd || cmd->cid >= q.entries) {  // nothing we could answer by CID
    ++stats_.errors;
    return;
  }
  if (const auto ka = keep_alive_.find(q.cntlid); q.cntlid && ka != keep_alive_.end()) ka->second.seen = true;
  TargetCmd& c = q.cmds[cmd->cid];
  c.c = *cmd;
  c.ns = nullptr;
  c.busy = true;
  c.arrived = 0;
  // Host-to-controller data in the capsule: copied out before the buffer is reused.
  const bool to_controller =
      cmd->opcode == Opcode::write || (cmd->is_fabrics() && cmd->fctype == FabricsType::connect);
  if (to_controller && cmd->sgl.in_capsule()) {
    const uint64_t off = cmd->sgl.address, n = cmd->sgl.length;
    if (off + n > len - kSqeLen || kSqeLen + off + n > capsule.size()) {
      respond(q, c, Status::sgl_data_block_length_invalid);
      return;
    }
    const uint64_t b = bounce(c, n);
    const auto src = capsule.subspan(kSqeLen + off, n);
    std::copy(src.begin(), src.end(), host_.memory().view(b, n).begin());
    c.len = n;
    data_arrived(q, c);
    return;
  }
  execute(q, c);
}

// A command whose data (if it brings any) is still with the host.
void NvmeTarget::execute(TargetQueue& q, TargetCmd& c) {
  const Command& cmd = c.c;
  if (cmd.is_fabrics()) {
    switch (cmd.fctype) {
      case FabricsType::connect:
        if (!port_->moves(cmd.sgl) || cmd.sgl.length < kConnectDataLen) {
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
  } else if (q.qid == 0) {
    return execute_admin(q, c);
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
    if (!port_->moves(cmd.sgl) || cmd.sgl.length != c.len || c.len > kMdts) {
      respond(q, c, Status::sgl_data_block_length_invalid);
      return;
    }
    if (cmd.opcode == Opcode::read) {
      ++stats_.reads;
      serve(q, c);
      return;
    }
  }
  // Host-to-controller data the binding brings (RDMA READ; R2T and H2CData).
  c.len = cmd.is_fabrics() ? kConnectDataLen : c.len;
  bounce(c, c.len);
  port_->fetch(q, c);
}

void NvmeTarget::data_arrived(TargetQueue& q, TargetCmd& c) {
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

void NvmeTarget::finish_connect(TargetQueue& q, TargetCmd& c, std::span<const std::byte> data) {
  const auto d = ConnectData::parse(data);
  const Command& cmd = c.c;
  if (!q.sized && d && cmd.recfmt() == 0 && uint32_t{cmd.sqsize()} + 1 <= c_.max_queue_size) {
    // NVMe/TCP: the queue learns its id and size from its Connect.
    q.qid = cmd.qid();
    q.entries = uint32_t{cmd.sqsize()} + 1;
    q.sized = true;
  }
  if (!d || cmd.qid() != q.qid || cmd.recfmt() != 0 || uint32_t{cmd.sqsize()} + 1 != q.entries) {
    respond(q, c, Status{kConnectInvalidParameters}, 0, 0, 1);
    return;
  }
  if (q.qid == 0) {
    q.cntlid = next_cntlid_++;
    start_keep_alive(q.cntlid, cmd.kato());
  } else if (q.cntlid == 0 && d->cntlid != 0 && d->cntlid < next_cntlid_) {
    q.cntlid = d->cntlid;  // NVMe/TCP: a controller the host made on its admin queue
  }
  if (q.qid != 0 && (q.cntlid == 0 || d->cntlid != q.cntlid)) {
    respond(q, c, Status{kConnectInvalidParameters}, 0, 0, 1);
    return;
  }
  respond(q, c, Status::success, q.cntlid);
}

// An admin command: Keep Alive (its traffic is what counts, above); any
// other opcode the controller does not implement.
void NvmeTarget::execute_admin(TargetQueue& q, TargetCmd& c) {
  respond(q, c, c.c.opcode == Opcode::keep_alive ? Status::success : Status::invalid_opcode);
}

// nvmet_start_keep_alive_timer: every KATO, in whole seconds (DIV_ROUND_UP(kato, 1000)).
void NvmeTarget::start_keep_alive(uint16_t cntlid, uint32_t kato_ms) {
  if (kato_ms == 0) return;
  KeepAlive& ka = keep_alive_[cntlid];
  ka.kato = Time::s((int64_t{kato_ms} + 999) / 1000);
  Simulator::Scope as(env_.sim, host_.context());
  ka.timer = env_.sim.after(ka.kato, [this, cntlid] { on_keep_alive_timer(cntlid); });
}

// nvmet_keep_alive_timer: traffic since the last check puts it off a
// KATO more; none removes the controller (nvmet_ctrl_fatal_error).
void NvmeTarget::on_keep_alive_timer(uint16_t cntlid) {
  KeepAlive& ka = keep_alive_.at(cntlid);
  if (std::exchange(ka.seen, false)) {
    ka.timer = env_.sim.after(ka.kato, [this, cntlid] { on_keep_alive_timer(cntlid); });
    return;
  }
  keep_alive_.erase(cntlid);
  ++stats_.keep_alive_expired;
  for (auto& q : queues_)
    if (q->cntlid == cntlid && !q->gone) {
      q->gone = true;
      port_->disconnect(*q);
    }
}

void NvmeTarget::stop_keep_alive(uint16_t cntlid) {
  const auto it = keep_alive_.find(cntlid);
  if (it == keep_alive_.end()) return;
  env_.sim.cancel(it->second.timer);
  keep_alive_.erase(it);
}

// The controller goes with its admin queue (nvmet_sq_destroy puts its last
// reference: nvmet_ctrl_free stops the keep-alive timer).
void NvmeTarget::queue_gone(TargetQueue& q) {
  q.gone = true;
  if (q.qid == 0 && q.cntlid) stop_keep_alive(q.cntlid);
}

void NvmeTarget::serve(TargetQueue& q, TargetCmd& c) {
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
    TargetQueue& q = *queues_[qi];
    TargetCmd& c = q.cmds[cid];
    const Command& cmd = c.c;
    Namespace& ns = *c.ns;
    const uint32_t bsz = ns.cfg.block_size;
    // The SSD's completion is handled now; its CPU is the queue's next.
    port_->owe(q, io_cost() / 2);
    if (cmd.opcode == Opcode::write) {
      const auto data = host_.memory().view(c.buf, c.len);
      for (uint32_t i = 0; i < cmd.nlb(); ++i)
        if (const auto s = read_block(data.subspan(uint64_t{i} * bsz, bsz)))
          ns.stored[cmd.slba() + i] = s->generation;
      respond(q, c, Status::success);
      return;
    }
    const uint64_t b = bounce(c, c.len);
    const auto data = host_.memory().view(b, c.len);
    for (uint32_t i = 0; i < cmd.nlb(); ++i) {
      const uint64_t lba = cmd.slba() + i;
      fill_block(data.subspan(uint64_t{i} * bsz, bsz), {lba, Namespace::get(ns.stored, lba), ns.cfg.nsid});
    }
    if (!port_->send_data(q, c)) return respond(q, c, Status::data_transfer_error);
    respond(q, c, Status::success);
  });
}

void NvmeTarget::respond(TargetQueue& q, TargetCmd& c, Status s, uint32_t dw0, uint32_t dw1, uint8_t sct) {
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
  std::array<std::byte, kCqeLen> b{};
  cqe.emit(b);
  port_->send_completion(q, c, b);
}

}  // namespace rdmasim::nvme
