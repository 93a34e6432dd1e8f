#include "fabrics/iwarp/iwarp_qp.hpp"

#include <cassert>
#include <cerrno>
#include <cstring>
#include <utility>

#include "fabrics/iwarp/iwarp_fabric.hpp"
#include "nodes/host/memory.hpp"

namespace rdmasim {

namespace {

uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::array<uint8_t, 16> local_address(const IwarpNicConfig& c) {
  return c.ip == IpVersion::ipv4 ? Ipv6Address::v4_mapped(c.self.ipv4).octets : c.self.ipv6.octets;
}

// What a received Terminate means for the WQE that provoked it (the
// statuses siw reports, siw_qp_rx.c / siw_cm.c): protection errors are
// remote access errors, a missing or too short receive buffer an invalid
// request, anything else a remote operation error.
ibv_wc_status status_of(const TermError& e) {
  const bool tagged = e.layer == TermLayer::ddp && e.etype == 0x1;
  const bool protection = e.layer == TermLayer::rdmap && e.etype == 0x1;
  if (tagged || protection) return IBV_WC_REM_ACCESS_ERR;
  if (e == term::kDdpUntaggedNoBuffer || e == term::kDdpUntaggedTooLong) return IBV_WC_REM_INV_REQ_ERR;
  return IBV_WC_REM_OP_ERR;
}

}  // namespace

IwarpQp::IwarpQp(verbs::Device& d, verbs::ProtectionDomain& pd, uint32_t qpn, const verbs::QpInitAttr& init,
                 Rnic& nic, IwarpFabric& fabric)
    : QueuePair(d, pd, qpn, init), nic_(nic), fabric_(fabric) {}

// The TCP segments sent again carry this QP's FPDUs (one connection a QP).
uint64_t IwarpQp::retransmitted_packets() const { return tcp_ ? tcp_->stats().retransmits : 0; }

IwarpQp::~IwarpQp() {
  fabric_.detach(*this);
  nic_.forget(*this);
  ep_.reset();
}

bool IwarpQp::has_tx() const { return tcp_ && tcp_->has_tx(); }

Packet IwarpQp::next_frame() {
  TcpTx t = tcp_->next_tx();
  if (!t) return {};
  fabric_.encap(t.packet, remote_, t.ect);
  return std::move(t.packet);
}

void IwarpQp::tcp_input(Packet p, bool ce) {
  if (tcp_) tcp_->receive(std::move(p), ce);
}

int IwarpQp::check_send(const ibv_send_wr& wr) const {
  switch (wr.opcode) {
    case IBV_WR_SEND:
    case IBV_WR_RDMA_WRITE:
      break;
    case IBV_WR_RDMA_READ:
      if (wr.num_sge != 1) return EINVAL;  // the Read Request names one sink STag
      break;
    default:
      // RFC 5040 has neither atomics nor immediate data; siw_post_send
      // answers "ib wr type %d unsupported" with EINVAL.
      return EINVAL;
  }
  return QueuePair::check_send(wr);
}

void IwarpQp::state_changed(ibv_qp_state from) {
  if (state_ == IBV_QPS_RTR && from == IBV_QPS_INIT) {
    open_connection();
    // Receiving, which RTR promises, needs the connection: the active end
    // opens it now, whether or not its consumer ever moves it to RTS.
    if (active_ && tcp_) tcp_->connect();
  } else if (state_ == IBV_QPS_RTS && from == IBV_QPS_RTR) {
    if (ep_ && attr_.max_rd_atomic) ep_->set_ord(attr_.max_rd_atomic);
  } else if (state_ == IBV_QPS_ERR || state_ == IBV_QPS_RESET) {
    // The connection ends with the QP's leaving RTS (siw_qp_cm_drop): a FIN.
    if (ep_) ep_->disconnect();
    // Everything outstanding is about to be flushed (or dropped): the
    // endpoint's later reports about it are ignored.
    sq_base_ += sq_.size();
    finished_.clear();
    handed_ = 0;
    rq_base_ += rq_.size();
    rq_handed_ = 0;
  }
}

void IwarpQp::open_connection() {
  // A QP taken back through RESET had a connection: its endpoint reads
  // that connection, so it goes first.
  ep_.reset();
  const IwarpNicConfig& c = fabric_.config();
  std::memcpy(remote_.data(), attr_.ah_attr.grh.dgid.raw, 16);
  const std::array<uint8_t, 16> local = local_address(c);
  const uint32_t peer_qpn = attr_.dest_qp_num;
  // The lower (address, QPN) opens actively, the other listens: the
  // client/server roles rdma_cm would give, decided the same way at both ends.
  active_ = local < remote_ || (local == remote_ && qpn_ < peer_qpn);

  TcpFlow flow;
  if (c.ip == IpVersion::ipv4) {
    flow.ip =
        TcpPseudoHeader::v4(c.self.ipv4, Ipv4Address{{remote_[12], remote_[13], remote_[14], remote_[15]}});
  } else {
    Ipv6Address r;
    r.octets = remote_;
    flow.ip = TcpPseudoHeader::v6(c.self.ipv6, r);
  }
  // The active end connects from an ephemeral port to the passive end's
  // listening port, as an rdma_cm client connects to a server.
  flow.local_port = active_ ? IwarpFabric::port_of(qpn_) : c.listen_port;
  flow.remote_port = active_ ? c.listen_port : IwarpFabric::port_of(peer_qpn);
  uint64_t h = splitmix(c.seed ^ (uint64_t{flow.local_port} << 16 | flow.remote_port));
  for (size_t i = 0; i < 16; i += 8) {
    uint64_t a, b;
    std::memcpy(&a, local.data() + i, 8);
    std::memcpy(&b, remote_.data() + i, 8);
    h = splitmix(h ^ a ^ (b * 3));
  }
  tcp_ = std::make_unique<TcpConnection>(nic_.sim(), nic_.pool(), c.tcp, flow, static_cast<uint32_t>(h));
  tcp_->set_wake([this] { nic_.wake(*this); });

  IwarpConfig ic;
  ic.crc = c.mpa_crc;
  ic.markers = c.mpa_markers;
  ic.mpa_revision = c.mpa_revision;
  // IRD and ORD (RFC 5040) are the QP's responder resources and initiator
  // depth; MPA Rev 2 tells the peer both (RFC 6581).
  if (attr_.max_dest_rd_atomic) ic.ird = attr_.max_dest_rd_atomic;
  if (attr_.max_rd_atomic) ic.ord = attr_.max_rd_atomic;
  ic.streams = c.streams.get();
  ic.private_data = private_data_;
  ep_ = std::make_unique<IwarpEndpoint>(
      *tcp_, static_cast<IwarpMemory&>(*this), ic,
      active_ ? IwarpEndpoint::Role::initiator : IwarpEndpoint::Role::responder,
      static_cast<IwarpEvents*>(this));
  fabric_.attach(*this, remote_, flow.remote_port, flow.local_port);
  if (!active_) tcp_->listen();
  while (rq_handed_ < rq_.size()) hand_recv(rq_handed_++);
}

// ------------------------------------------------------------------ send queue

void IwarpQp::send_posted() {
  // The offload engine's work before the first segment of a message: fetch
  // the TCB, build the DDP/RDMAP headers (IwarpNicCost::tx_message).
  nic_.sim().after(fabric_.config().cost.tx_message, [this] { hand_next(); });
}

void IwarpQp::hand_next() {
  if (state_ != IBV_QPS_RTS || !ep_ || handed_ >= sq_.size()) return;
  finished_.resize(sq_.size(), false);
  const size_t i = handed_++;
  verbs::SendWqe& w = sq_[i];
  const uint64_t id = sq_base_ + i;

  if (w.opcode == IBV_WR_RDMA_READ) {
    const ibv_sge& s = w.sges[0];
    ep_->post_read(id, s.lkey, s.addr, s.length, w.rkey, w.remote_addr);
    return;
  }
  const std::optional<BufferPiece> data = message_bytes(w);
  if (!data) {
    fail(IBV_WC_LOC_PROT_ERR, id);
    return;
  }
  if (w.opcode == IBV_WR_RDMA_WRITE)
    ep_->post_write(id, *data, w.rkey, w.remote_addr);
  else
    ep_->post_send(id, *data, (w.send_flags & IBV_SEND_SOLICITED) != 0);
}

std::optional<BufferPiece> IwarpQp::message_bytes(verbs::SendWqe& w) {
  // Inline data was copied at post time; one SGE is read in place, as the
  // stream builds each FPDU (a computed region's bytes made only then);
  // several are gathered now (the NIC's DMA of them).
  if (!w.inline_data.empty() || w.length == 0) return BufferPiece::read_only(w.inline_data);
  for (const ibv_sge& s : w.sges) {
    verbs::MemoryRegion* mr = device_.mr_by_lkey(s.lkey);
    if (!mr || mr->pd != &pd_ || !mr->contains(s.addr, s.length)) return std::nullopt;
  }
  if (w.sges.size() == 1) return device_.mr_by_lkey(w.sges[0].lkey)->piece(w.sges[0].addr, w.sges[0].length);
  w.inline_data.resize(w.length);
  size_t at = 0;
  for (const ibv_sge& s : w.sges) {
    device_.mr_by_lkey(s.lkey)->read(s.addr, s.length).copy_to({w.inline_data.data() + at, s.length});
    at += s.length;
  }
  return BufferPiece::read_only(w.inline_data);
}

void IwarpQp::done(uint64_t id) {
  if (id < sq_base_) return;  // flushed already
  finished_.resize(sq_.size(), false);
  if (id - sq_base_ >= finished_.size()) return;
  finished_[id - sq_base_] = true;
  schedule_completions();
}

// Completions are generated in a pass after the current event, so that a
// Terminate arriving in the same segment as the ACK that finished a WRITE
// still decides that WRITE's status (the RNIC writes the CQE after it has
// looked at the whole segment).
void IwarpQp::schedule_completions() {
  if (completion_pass_) return;
  completion_pass_ = true;
  nic_.sim().after(Time{}, [this] {
    completion_pass_ = false;
    complete_in_order();
  });
}

void IwarpQp::complete_in_order() {
  while (!sq_.empty() && !finished_.empty() && finished_.front()) {
    const verbs::SendWqe w = std::move(sq_.front());
    sq_.pop_front();
    finished_.pop_front();
    ++sq_base_;
    if (handed_) --handed_;
    complete_send(w, IBV_WC_SUCCESS, static_cast<uint32_t>(w.length));
  }
}

// An error ends the connection. The WQE it concerns gets `status`: the one a
// Terminate names, else the oldest unfinished one. The WQEs posted before it
// complete in order: successfully if they finished (a Terminate's segment
// acknowledges every message before the one it reports), flushed if not (a
// Read whose responses the peer dropped). Then the QP enters ERR and flushes
// the rest.
void IwarpQp::fail(ibv_wc_status status, std::optional<uint64_t> wr_id) {
  if (left_connection()) return;
  finished_.resize(sq_.size(), false);
  size_t target = 0;
  if (wr_id && *wr_id >= sq_base_ && *wr_id - sq_base_ < sq_.size()) {
    target = static_cast<size_t>(*wr_id - sq_base_);
  } else {
    while (target < sq_.size() && finished_[target]) ++target;
  }
  for (size_t i = 0; i <= target && !sq_.empty(); ++i) {
    verbs::SendWqe w = std::move(sq_.front());
    const bool finished = finished_.front();
    sq_.pop_front();
    finished_.pop_front();
    ++sq_base_;
    if (handed_) --handed_;
    if (i < target && finished) {
      complete_send(w, IBV_WC_SUCCESS, static_cast<uint32_t>(w.length));
    } else {
      w.signaled = true;  // errors always complete (IBA 10.8.3)
      complete_send(w, i == target ? status : IBV_WC_WR_FLUSH_ERR);
    }
  }
  enter_error();
}

// ---------------------------------------------------------------- receive queue

void IwarpQp::recv_posted() {
  if (ep_ && state_ != IBV_QPS_ERR) hand_recv(rq_handed_++);
}

void IwarpQp::hand_recv(size_t index) {
  // The endpoint's wr_id is the WQE's place in the queue, counted from its
  // index: the queue's elements are not contiguous (blocks, and a ring that
  // wraps), so subtracting their addresses would give a heap-layout-dependent
  // number.
  const verbs::RecvWqe& r = rq_[index];
  const uint64_t id = rq_base_ + index;
  // The untagged buffer DDP places a Send into (RFC 5041): the SGEs in
  // order, as siw scatters a Send over them.
  std::vector<BufferPiece> sges;
  sges.reserve(r.sges.size());
  for (const ibv_sge& s : r.sges) {
    verbs::MemoryRegion* mr = device_.mr_by_lkey(s.lkey);
    if (!mr || mr->pd != &pd_ || !mr->contains(s.addr, s.length) || !(mr->access & IBV_ACCESS_LOCAL_WRITE)) {
      enter_error();
      return;
    }
    sges.push_back(mr->piece(s.addr, s.length));
  }
  ep_->post_recv(id, sges);
}

void IwarpQp::iwarp_recv(const IwarpRecv& r) {
  if (r.wr_id < rq_base_ || rq_.empty()) return;  // flushed before it ended
  // Untagged buffers are consumed in order (RFC 5041 MSN): it is the front.
  assert(r.wr_id == rq_base_);
  const verbs::RecvWqe w = std::move(rq_.front());
  rq_.pop_front();
  ++rq_base_;
  if (rq_handed_) --rq_handed_;
  message_placed();
  complete_recv(w, IBV_WC_SUCCESS, IBV_WC_RECV, r.length, 0, false);
  tcp_->ack_now();  // the message ended: its sender completes on our ACK
}

// On a shared receive queue the RNIC takes a WQE when a new untagged
// message starts (siw_rqe_get): it becomes this QP's, completed or flushed
// with it.
void IwarpQp::iwarp_need_recv() {
  verbs::RecvWqe w;
  if (!init_.srq || state_ == IBV_QPS_ERR || !init_.srq->take(w)) return;
  rq_.push_back(std::move(w));
  hand_recv(rq_handed_++);
}

void IwarpQp::iwarp_write_placed(uint32_t, uint64_t, uint64_t) {
  message_placed();
  tcp_->ack_now();
}

// --------------------------------------------------------------------- memory

StagStatus IwarpQp::resolve(uint32_t stag, uint64_t to, uint64_t length, IwarpAccess access,
                            BufferPiece& out) {
  const bool local = access == IwarpAccess::local_write;
  verbs::MemoryRegion* mr = local ? device_.mr_by_lkey(stag) : device_.mr_by_rkey(stag);
  if (!mr) return StagStatus::invalid_stag;
  if (mr->pd != &pd_) return StagStatus::not_associated;
  if (to + length < to) return StagStatus::to_wrap;
  const int need = access == IwarpAccess::local_write    ? IBV_ACCESS_LOCAL_WRITE
                   : access == IwarpAccess::remote_write ? IBV_ACCESS_REMOTE_WRITE
                                                         : IBV_ACCESS_REMOTE_READ;
  // Remote access needs it on the MR and on the QP (ibv_modify_qp access flags).
  if (!(mr->access & need) || (!local && !(attr_.qp_access_flags & need))) return StagStatus::access_rights;
  if (!mr->contains(to, length)) return StagStatus::base_bounds;
  out = mr->piece(to, length);
  return StagStatus::ok;
}

// --------------------------------------------------------------------- events

// The connection manager leaves a connected QP in RTS (siw moves it there
// when the MPA exchange ends, at both ends): a consumer that only took its
// QP to RTR, as perftest's bandwidth server does, may post on it now.
void IwarpQp::iwarp_established(std::span<const std::byte>) {
  established_ = true;
  if (state_ != IBV_QPS_RTR) return;
  state_ = IBV_QPS_RTS;
  rts_by_connection_ = true;
}

void IwarpQp::iwarp_rejected(std::span<const std::byte>) { fail(IBV_WC_REM_OP_ERR); }

void IwarpQp::iwarp_terminate(const TermError& e, bool local, std::optional<uint64_t> wr_id) {
  if (left_connection()) return;
  if (!local) {
    fail(status_of(e), wr_id);
    return;
  }
  // This end found the error in what the peer sent. A Send longer than the
  // posted buffer fails that receive with a length error; the rest flushes.
  if (e == term::kDdpUntaggedTooLong && !rq_.empty()) {
    const verbs::RecvWqe w = std::move(rq_.front());
    rq_.pop_front();
    ++rq_base_;
    if (rq_handed_) --rq_handed_;
    complete_recv(w, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, 0, false);
  }
  enter_error();
}

// The peer's FIN (siw's SIW_CM_WORK_PEER_CLOSE, then siw_qp_llp_close): the
// messages that finished complete, the rest is flushed, the consumer told.
void IwarpQp::iwarp_disconnected() {
  if (left_connection()) return;
  complete_in_order();
  enter_error();
  tell_disconnected();
}

void IwarpQp::iwarp_closed() {
  if (left_connection()) return;
  // The stream ended under outstanding work: the connection was reset or
  // TCP gave up retransmitting.
  fail(IBV_WC_RETRY_EXC_ERR);
  tell_disconnected();
}

// Once, and only for a connection that was established: one refused or
// never made is its connect's failure, not a disconnect.
void IwarpQp::tell_disconnected() {
  if (!established_ || !on_disconnected_) return;
  established_ = false;
  std::exchange(on_disconnected_, {})();
}

}  // namespace rdmasim
