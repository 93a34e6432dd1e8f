#include "fabrics/iwarp/iwarp_endpoint.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "fabrics/iwarp/mpa.hpp"

namespace rdmasim {

namespace {

// A failed placement into a tagged buffer (RDMA Write, Read Response) is a
// DDP tagged-buffer error (RFC 5041), but for access rights, which are
// RDMAP's (RFC 5040 error management; Linux siw reports them the same way).
TermError tagged_error(StagStatus s) {
  switch (s) {
    case StagStatus::invalid_stag:
      return term::kDdpTaggedInvalidStag;
    case StagStatus::base_bounds:
      return term::kDdpTaggedBaseBounds;
    case StagStatus::not_associated:
      return term::kDdpTaggedStagNotAssociated;
    case StagStatus::to_wrap:
      return term::kDdpTaggedToWrap;
    case StagStatus::access_rights:
      return term::kRdmapAccessRights;
    case StagStatus::ok:
      break;
  }
  return term::kDdpCatastrophic;
}

// The Data Source STag of a Read Request is RDMAP's to check (RFC 5040).
TermError read_source_error(StagStatus s) {
  switch (s) {
    case StagStatus::invalid_stag:
      return term::kRdmapInvalidStag;
    case StagStatus::base_bounds:
      return term::kRdmapBaseBounds;
    case StagStatus::access_rights:
      return term::kRdmapAccessRights;
    case StagStatus::not_associated:
      return term::kRdmapStagNotAssociated;
    case StagStatus::to_wrap:
      return term::kRdmapToWrap;
    case StagStatus::ok:
      break;
  }
  return term::kRdmapCatastrophicStream;
}

IwarpEvents kNoEvents;

}  // namespace

IwarpEndpoint::IwarpEndpoint(TcpConnection& tcp, IwarpMemory& memory, const IwarpConfig& cfg, Role role,
                             IwarpEvents* events)
    : tcp_(tcp), mem_(memory), cfg_(cfg), role_(role), events_(events ? events : &kNoEvents) {
  revision_ = cfg_.mpa_revision == mpa::kRevision1 ? mpa::kRevision1 : mpa::kRevision2;
  const size_t room = mpa::kMaxPrivateData - (revision_ == mpa::kRevision2 ? MpaIrdOrd::kLen : 0);
  if (cfg_.private_data.size() > room) cfg_.private_data.resize(room);
  tcp_.set_upper(this);
  // Until the MPA exchange ends, a silent peer fails the connection within
  // TCP's retransmission limit (siw arms an MPA timer for the same reason).
  tcp_.await_peer(true);
  if (tcp_.state() == TcpState::established) tcp_established();
}

IwarpEndpoint::~IwarpEndpoint() {
  tcp_.set_upper(nullptr);
  if (cfg_.streams) cfg_.streams->forget(tcp_.flow());
}

// ---------------------------------------------------------------- work requests

void IwarpEndpoint::post_send(uint64_t wr_id, BufferPiece data, bool solicited) {
  OutMsg m;
  m.kind = MsgKind::send;
  m.wr_id = wr_id;
  m.data = data;
  m.solicited = solicited;
  sq_.push_back(m);
  pump();
}

void IwarpEndpoint::post_write(uint64_t wr_id, BufferPiece data, uint32_t remote_stag, uint64_t remote_to) {
  OutMsg m;
  m.kind = MsgKind::write;
  m.wr_id = wr_id;
  m.data = data;
  m.stag = remote_stag;
  m.to = remote_to;
  sq_.push_back(m);
  pump();
}

void IwarpEndpoint::post_read(uint64_t wr_id, uint32_t sink_stag, uint64_t sink_to, uint32_t length,
                              uint32_t source_stag, uint64_t source_to) {
  OutMsg m;
  m.kind = MsgKind::read;
  m.wr_id = wr_id;
  m.stag = sink_stag;
  m.to = sink_to;
  m.read_len = length;
  m.source_stag = source_stag;
  m.source_to = source_to;
  sq_.push_back(m);
  pump();
}

void IwarpEndpoint::post_recv(uint64_t wr_id, std::span<std::byte> buffer) {
  const BufferPiece piece(buffer);
  post_recv(wr_id, std::span<const BufferPiece>(&piece, 1));
}

void IwarpEndpoint::post_recv(uint64_t wr_id, std::span<const BufferPiece> sges) {
  RecvBuf b;
  b.wr_id = wr_id;
  b.sges.assign(sges.begin(), sges.end());
  for (const auto& s : sges) b.length += s.size();
  rq_.push_back(std::move(b));
}

void IwarpEndpoint::terminate(const TermError& e) { fail(e); }

void IwarpEndpoint::close() {
  if (phase_ == Phase::tcp_connecting || phase_ == Phase::mpa_startup) {
    phase_ = Phase::closed;
    tcp_.close();
    return;
  }
  close_requested_ = true;
  pump();
}

void IwarpEndpoint::disconnect() {
  if (phase_ == Phase::error || phase_ == Phase::closed) return;
  if (phase_ == Phase::full_operation) enter_error();
  phase_ = Phase::closed;
  tcp_.release();
}

MpaStreamInfo IwarpEndpoint::stream_info() const {
  return {crc_, tx_plan_.enabled, tcp_.iss() + 1 + static_cast<uint32_t>(first_fpdu_off_)};
}

void IwarpEndpoint::seal(std::span<std::byte> tcp_segment, const TcpPseudoHeader& ph) const {
  const MpaStreamInfo info = stream_info();
  const bool framed = phase_ == Phase::full_operation || phase_ == Phase::error || phase_ == Phase::closed;
  iwarp_seal(tcp_segment, ph, framed ? &info : nullptr);
}

// ---------------------------------------------------------------- MPA startup (RFC 5044 connection setup)

void IwarpEndpoint::tcp_established() {
  if (phase_ != Phase::tcp_connecting) return;
  phase_ = Phase::mpa_startup;
  if (role_ == Role::initiator) send_frame(true, false);
}

void IwarpEndpoint::send_frame(bool request, bool reject) {
  // RFC 6581: with Rev 2 the private data starts with this end's IRD and ORD.
  const bool enhanced = revision_ == mpa::kRevision2;
  const size_t lead = enhanced ? MpaIrdOrd::kLen : 0;
  const size_t pd = lead + cfg_.private_data.size();
  std::vector<std::byte> f(mpa::kFrameHeaderLen + pd);
  MpaFrameHeader h;
  h.request = request;
  h.markers = cfg_.markers;
  h.crc = request ? cfg_.crc : crc_;
  h.reject = reject;
  h.revision = revision_;
  h.enhanced = enhanced;
  h.pd_length = static_cast<uint16_t>(pd);
  h.emit(*MpaFrameView::check(f));
  if (enhanced) {
    MpaIrdOrd io;
    io.ird = static_cast<uint16_t>(std::min<uint32_t>(cfg_.ird, MpaIrdOrd::kMask));
    io.ord = static_cast<uint16_t>(std::min<uint32_t>(cfg_.ord, MpaIrdOrd::kMask));
    io.emit(std::span<std::byte>(f).subspan(mpa::kFrameHeaderLen));
  }
  std::copy(cfg_.private_data.begin(), cfg_.private_data.end(), f.begin() + mpa::kFrameHeaderLen + lead);
  // Alone in its segment: Wireshark finds a request or reply only at the
  // start of a segment, and FPDUs start after it.
  tcp_.send(f, /*solo=*/true);
  first_fpdu_off_ = tcp_.stream_end();
}

size_t IwarpEndpoint::take_frame(std::span<const std::byte> in, uint64_t pos) {
  if (in.size() < mpa::kFrameHeaderLen) return 0;
  const auto v = *ConstMpaFrameView::check(in);
  const auto h = MpaFrameHeader::parse(v);
  const bool expected = h && (role_ == Role::responder ? h->request : !h->request);
  const bool known_revision = h && (h->revision == mpa::kRevision1 || h->revision == mpa::kRevision2);
  if (!expected || !known_revision || h->pd_length > mpa::kMaxPrivateData) {
    // RFC 5044 connection setup: a bad startup frame ends the connection.
    phase_ = Phase::error;
    tcp_.abort();
    return in.size();
  }
  if (!v.complete()) return 0;
  const size_t n = v.frame_len();
  if (!take_ird_ord(*h, v.private_data())) {
    phase_ = Phase::error;
    tcp_.abort();
    return n;
  }
  const uint64_t peer_first_fpdu = pos + n;  // the peer's FPDUs, and its markers, start after its frame

  if (role_ == Role::responder) {
    crc_ = h->crc || cfg_.crc;  // RFC 5044: CRCs if either side asks
    tx_plan_.enabled = h->markers;
    rx_plan_ = {cfg_.markers, peer_first_fpdu};
    send_frame(false, cfg_.reject);
    if (cfg_.reject) {
      phase_ = Phase::closed;
      tcp_.close();
      return n;
    }
  } else {
    if (h->reject) {
      phase_ = Phase::closed;
      events_->iwarp_rejected(peer_private_data_);
      tcp_.close();
      return n;
    }
    crc_ = h->crc || cfg_.crc;
    tx_plan_.enabled = h->markers;
    rx_plan_ = {cfg_.markers, peer_first_fpdu};
  }
  enter_full_operation();
  return n;
}

// RFC 6581 negotiation. The responder answers in the request's revision when
// it has it (a Rev 1 request gets a Rev 1 reply) and limits its ORD to the
// initiator's IRD; the initiator limits its ORD to the responder's IRD and
// refuses a responder whose ORD exceeds its own IRD (siw: "insufficient IRD").
// The rest of the private data is the ULP's.
bool IwarpEndpoint::take_ird_ord(const MpaFrameHeader& h, std::span<const std::byte> pd) {
  const bool enhanced = h.revision == mpa::kRevision2 && h.enhanced;
  if (role_ == Role::responder) {
    revision_ = enhanced && cfg_.mpa_revision == mpa::kRevision2 ? mpa::kRevision2 : mpa::kRevision1;
  } else if (!enhanced) {
    revision_ = mpa::kRevision1;  // a Rev 1 reply: RFC 5044 rules, nothing negotiated
  }
  std::optional<MpaIrdOrd> io;
  if (enhanced) {
    io = MpaIrdOrd::parse(pd);
    if (!io) return false;
    pd = pd.subspan(MpaIrdOrd::kLen);
  }
  peer_private_data_.assign(pd.begin(), pd.end());
  if (!io || revision_ != mpa::kRevision2) return true;
  cfg_.ord = std::min<uint32_t>(cfg_.ord, io->ird);
  return role_ == Role::responder || io->ord <= cfg_.ird;
}

void IwarpEndpoint::enter_full_operation() {
  phase_ = Phase::full_operation;
  tcp_.await_peer(false);
  tx_plan_.base = first_fpdu_off_;
  mulpdu_ = mpa::mulpdu(tcp_.max_record(), tx_plan_.enabled);
  if (cfg_.streams) cfg_.streams->publish(tcp_.flow(), stream_info());
  events_->iwarp_established(peer_private_data_);
  pump();
}

// ---------------------------------------------------------------- transmission

void IwarpEndpoint::pump() {
  if (phase_ == Phase::error && !term_msg_.empty()) {
    if (emit_terminate() == Emit::sent) tcp_.close();  // nothing may follow a Terminate (RFC 5040)
    return;
  }
  if (phase_ != Phase::full_operation) return;
  for (;;) {
    const Emit first = rr_turn_ ? emit_read_response() : emit_sq();
    if (first == Emit::blocked) return;
    if (first == Emit::sent) {
      rr_turn_ = !rr_turn_;  // alternate segment by segment between the two sources
      continue;
    }
    const Emit second = rr_turn_ ? emit_sq() : emit_read_response();
    if (second == Emit::blocked) return;
    if (second == Emit::idle) break;
  }
  if (close_requested_ && sq_.empty() && rrq_.empty()) {
    close_requested_ = false;
    tcp_.close();
  }
}

std::span<std::byte> IwarpEndpoint::begin_fpdu(size_t ulpdu_len) {
  const size_t f = mpa::fpdu_length(ulpdu_len);
  const uint64_t start = tcp_.stream_end();
  const size_t r = tx_plan_.record_length(start, f);
  std::span<std::byte> rec = tcp_.reserve(r);
  if (rec.empty()) return {};
  std::span<std::byte> fpdu = rec;
  if (tx_plan_.enabled) {
    tx_scratch_.resize(f);
    fpdu = tx_scratch_;
  }
  store_be16(fpdu, static_cast<uint16_t>(ulpdu_len));
  // Pad and CRC: zero; the CRC is filled when the frame is observed (mpa_seal.hpp).
  std::memset(fpdu.data() + mpa::kLengthLen + ulpdu_len, 0, f - mpa::kLengthLen - ulpdu_len);
  open_record_ = rec;
  open_fpdu_ = fpdu;
  open_start_ = start;
  return fpdu.subspan(mpa::kLengthLen, ulpdu_len);
}

void IwarpEndpoint::end_fpdu() {
  if (tx_plan_.enabled) {
    tx_plan_.scatter(open_start_, open_fpdu_, open_record_);
    stats_.markers_sent += (open_record_.size() - open_fpdu_.size()) / mpa::kMarkerLen;
  }
  ++stats_.fpdus_sent;
  // With markers Wireshark places them from the segment's own sequence
  // number, so it reads one FPDU per segment; without, several may share one.
  tcp_.commit(/*solo=*/tx_plan_.enabled);
}

IwarpEndpoint::Emit IwarpEndpoint::emit_sq() {
  if (sq_.empty()) return Emit::idle;
  OutMsg& m = sq_.front();
  if (m.kind == MsgKind::read) {
    if (reads_.size() >= cfg_.ord) return Emit::idle;  // ORD (RFC 5040, RDMA Read): wait for a response
    auto u = begin_fpdu(ddp::kUntaggedLen + ReadRequestHeader::kLen);
    if (u.empty()) return Emit::blocked;
    DdpHeader h;
    h.tagged = false;
    h.last = true;
    h.ulp_control = rdmap_control(RdmapOpcode::read_request);
    h.qn = rdmap::kQueueReadRequest;
    h.msn = tx_msn_[rdmap::kQueueReadRequest]++;
    h.mo = 0;
    h.emit(u);
    ReadRequestHeader{m.stag, m.to, m.read_len, m.source_stag, m.source_to}.emit(
        u.subspan(ddp::kUntaggedLen));
    end_fpdu();
    reads_.push_back({m.wr_id, m.read_len, 0});
    sent_.push_back({m.wr_id, MsgKind::read, 0, 0, 0, h.msn, false});
    tcp_.await_peer(true);  // Read Responses are due: a silent responder fails the Read
    ++stats_.reads;
    sq_.pop_front();
    return Emit::sent;
  }

  const bool write = m.kind == MsgKind::write;
  const size_t hdr = write ? ddp::kTaggedLen : ddp::kUntaggedLen;
  const size_t left = m.data.size() - m.sent;
  const size_t chunk = std::min(left, mulpdu_ - hdr);
  const bool last = chunk == left;
  auto u = begin_fpdu(hdr + chunk);
  if (u.empty()) return Emit::blocked;
  DdpHeader h;
  h.tagged = write;
  h.last = last;
  if (write) {
    h.ulp_control = rdmap_control(RdmapOpcode::write);
    h.stag = m.stag;
    h.to = m.to + m.sent;
  } else {
    h.ulp_control = rdmap_control(m.solicited ? RdmapOpcode::send_se : RdmapOpcode::send);
    h.qn = rdmap::kQueueSend;
    h.msn = tx_msn_[rdmap::kQueueSend];
    h.mo = static_cast<uint32_t>(m.sent);
  }
  h.emit(u);
  if (chunk) m.data.read(m.sent, chunk).copy_to(u.subspan(hdr, chunk));
  end_fpdu();
  m.sent += chunk;
  stats_.payload_sent += chunk;
  if (last) {
    await_ack_.push_back({tcp_.stream_end(), m.wr_id, m.kind});
    sent_.push_back({m.wr_id, m.kind, write ? m.stag : 0, m.to, m.to + m.data.size(),
                     write ? 0 : tx_msn_[rdmap::kQueueSend], false});
    if (write) {
      ++stats_.writes;
    } else {
      ++tx_msn_[rdmap::kQueueSend];
      ++stats_.sends;
    }
    sq_.pop_front();
  }
  return Emit::sent;
}

IwarpEndpoint::Emit IwarpEndpoint::emit_read_response() {
  if (rrq_.empty()) return Emit::idle;
  ReadResp& r = rrq_.front();
  const size_t left = r.source.size() - r.sent;
  const size_t chunk = std::min(left, mulpdu_ - ddp::kTaggedLen);
  const bool last = chunk == left;
  auto u = begin_fpdu(ddp::kTaggedLen + chunk);
  if (u.empty()) return Emit::blocked;
  DdpHeader h;
  h.tagged = true;
  h.last = last;
  h.ulp_control = rdmap_control(RdmapOpcode::read_response);
  h.stag = r.sink_stag;
  h.to = r.sink_to + r.sent;
  h.emit(u);
  if (chunk) r.source.read(r.sent, chunk).copy_to(u.subspan(ddp::kTaggedLen, chunk));
  end_fpdu();
  r.sent += chunk;
  stats_.payload_sent += chunk;
  if (last) {
    rrq_.pop_front();
    ++stats_.read_responses;
  }
  return Emit::sent;
}

IwarpEndpoint::Emit IwarpEndpoint::emit_terminate() {
  auto u = begin_fpdu(term_msg_.size());
  if (u.empty()) return Emit::blocked;
  std::memcpy(u.data(), term_msg_.data(), term_msg_.size());
  end_fpdu();
  term_msg_.clear();
  ++stats_.terminates_sent;
  return Emit::sent;
}

void IwarpEndpoint::tcp_acked(uint64_t acked) {
  // Messages finished before this segment can no longer be what a Terminate
  // in it reports (forget_finished); those it finishes still can.
  forget_finished();
  while (!await_ack_.empty() && await_ack_.front().stream_end <= acked) {
    const AwaitAck a = await_ack_.front();
    await_ack_.pop_front();
    mark_finished(a.wr_id);
    if (a.kind == MsgKind::write) {
      events_->iwarp_write_done(a.wr_id);
    } else {
      events_->iwarp_send_done(a.wr_id);
    }
  }
  pump();
}

// ---------------------------------------------------------------- reception

void IwarpEndpoint::tcp_receive(std::span<const std::byte> in) {
  const auto active = [this] { return phase_ == Phase::mpa_startup || phase_ == Phase::full_operation; };
  if (!active()) return;
  if (rx_buf_.empty()) {
    // The usual case: the chunk holds whole FPDUs (TCP keeps them whole), parsed in place.
    const size_t used = consume(in, rx_off_);
    rx_off_ += used;
    if (used < in.size() && active()) rx_buf_.assign(in.begin() + static_cast<ptrdiff_t>(used), in.end());
    return;
  }
  rx_buf_.insert(rx_buf_.end(), in.begin(), in.end());
  const size_t used = consume(rx_buf_, rx_off_);
  rx_off_ += used;
  if (!active()) {
    rx_buf_.clear();
  } else {
    rx_buf_.erase(rx_buf_.begin(), rx_buf_.begin() + static_cast<ptrdiff_t>(used));
  }
}

size_t IwarpEndpoint::consume(std::span<const std::byte> in, uint64_t off) {
  size_t used = 0;
  while (used < in.size()) {
    const auto rest = in.subspan(used);
    if (phase_ == Phase::mpa_startup) {
      const size_t n = take_frame(rest, off + used);
      if (n == 0) break;
      used += n;
      continue;
    }
    if (phase_ != Phase::full_operation) return in.size();
    // RFC 5044: an FPDU, after a marker when one falls here.
    const uint64_t pos = off + used;
    const size_t hdr = rx_plan_.at(pos) ? mpa::kMarkerLen : 0;
    if (rest.size() < hdr + mpa::kLengthLen) break;
    const uint16_t ulpdu_len = load_be16(rest.subspan(hdr, 2));
    const size_t f = mpa::fpdu_length(ulpdu_len);
    const size_t r = rx_plan_.record_length(pos, f);
    if (rest.size() < r) break;
    std::span<const std::byte> fpdu = rest.first(r);
    if (rx_plan_.enabled) {
      rx_scratch_.resize(f);
      rx_plan_.gather(pos, fpdu, rx_scratch_);
      fpdu = rx_scratch_;
    }
    used += r;
    ++stats_.fpdus_received;
    on_ulpdu(fpdu.subspan(mpa::kLengthLen, ulpdu_len));
  }
  return used;
}

void IwarpEndpoint::on_ulpdu(std::span<const std::byte> u) {
  const auto v = ConstDdpView::check(u);
  if (!v) {
    fail(term::kMpaMarkerMismatch);  // a ULPDU shorter than any DDP header: framing is lost
    return;
  }
  const DdpHeader h = DdpHeader::parse(*v);
  // RFC 5041 / RFC 5040 error checks: versions, then the opcode and its buffer model.
  if (h.version != ddp::kVersion) {
    fail(h.tagged ? term::kDdpTaggedInvalidVersion : term::kDdpUntaggedInvalidVersion, u);
    return;
  }
  if (rdmap_version(h.ulp_control) != rdmap::kVersion) {
    fail(term::kRdmapInvalidVersion, u);
    return;
  }
  const uint8_t op = rdmap_opcode_bits(h.ulp_control);
  const RdmapOpInfo& info = rdmap_info(op);
  if (!info.valid || info.tagged != h.tagged) {
    fail(term::kRdmapUnexpectedOpcode, u);
    return;
  }
  if (!h.tagged && h.qn != info.queue) {
    fail(term::kDdpUntaggedInvalidQn, u);
    return;
  }
  switch (static_cast<RdmapOpcode>(op)) {
    case RdmapOpcode::write:
      on_tagged(h, u, false);
      break;
    case RdmapOpcode::read_response:
      on_tagged(h, u, true);
      break;
    case RdmapOpcode::read_request:
      on_read_request(h, u);
      break;
    case RdmapOpcode::terminate:
      on_terminate(u);
      break;
    default:
      on_send(h, u);
      break;
  }
}

void IwarpEndpoint::on_tagged(const DdpHeader& h, std::span<const std::byte> u, bool read_response) {
  const auto payload = u.subspan(ddp::kTaggedLen);
  if (read_response && reads_.empty()) {
    fail(term::kRdmapUnexpectedOpcode, u);  // a response to no request
    return;
  }
  if (!payload.empty()) {
    // RFC 5041 tagged model: the STag and TO say where the bytes go; the Data Sink
    // checks them before placing (a zero-length segment places nothing).
    BufferPiece dst;
    const StagStatus s =
        mem_.resolve(h.stag, h.to, payload.size(),
                     read_response ? IwarpAccess::local_write : IwarpAccess::remote_write, dst);
    if (s != StagStatus::ok) {
      fail(tagged_error(s), u);
      return;
    }
    dst.write(0, payload);
    stats_.payload_placed += payload.size();
  }
  if (read_response) {
    PendingRead& r = reads_.front();
    r.received += payload.size();
    if (h.last) {
      const uint64_t id = r.wr_id;
      reads_.pop_front();
      mark_finished(id);
      if (reads_.empty()) tcp_.await_peer(false);
      events_->iwarp_read_done(id);
      pump();  // ORD has room again
    }
    return;
  }
  if (!write_open_) {
    write_open_ = true;
    write_stag_ = h.stag;
    write_to_ = h.to;
    write_len_ = 0;
  }
  write_len_ += payload.size();
  if (h.last) {
    write_open_ = false;
    events_->iwarp_write_placed(write_stag_, write_to_, write_len_);
  }
}

void IwarpEndpoint::on_send(const DdpHeader& h, std::span<const std::byte> u) {
  // RFC 5041 untagged model: the MSN picks the buffer, the MO places within it.
  if (h.msn != rx_msn_[rdmap::kQueueSend]) {
    fail(term::kDdpUntaggedMsnRange, u);
    return;
  }
  if (rq_.empty()) events_->iwarp_need_recv();
  if (rq_.empty()) {
    fail(term::kDdpUntaggedNoBuffer, u);
    return;
  }
  const auto payload = u.subspan(ddp::kUntaggedLen);
  RecvBuf& b = rq_.front();
  if (uint64_t{h.mo} + payload.size() > b.length) {
    fail(term::kDdpUntaggedTooLong, u);
    return;
  }
  b.place(h.mo, payload);
  stats_.payload_placed += payload.size();
  rx_msg_len_ = std::max<uint64_t>(rx_msg_len_, uint64_t{h.mo} + payload.size());
  if (!h.last) return;
  const RdmapOpInfo& info = rdmap_info(rdmap_opcode_bits(h.ulp_control));
  IwarpRecv rc;
  rc.wr_id = b.wr_id;
  rc.msn = h.msn;
  rc.length = static_cast<uint32_t>(rx_msg_len_);
  rc.solicited = info.solicited;
  rc.invalidate = info.invalidate;
  rc.inval_stag = info.invalidate ? h.ulp_word : 0;
  rq_.pop_front();
  ++rx_msn_[rdmap::kQueueSend];
  rx_msg_len_ = 0;
  events_->iwarp_recv(rc);
}

// The segment's bytes at message offset `mo`, scattered over the SGEs in
// order (siw_rx_data: an untagged message fills one SGE after the other).
void IwarpEndpoint::RecvBuf::place(uint64_t mo, std::span<const std::byte> payload) {
  size_t i = 0;
  while (i < sges.size() && mo >= sges[i].size()) mo -= sges[i++].size();
  for (; !payload.empty() && i < sges.size(); ++i, mo = 0) {
    const size_t n = std::min<size_t>(payload.size(), sges[i].size() - mo);
    sges[i].write(mo, payload.first(n));
    payload = payload.subspan(n);
  }
}

void IwarpEndpoint::on_read_request(const DdpHeader& h, std::span<const std::byte> u) {
  if (h.msn != rx_msn_[rdmap::kQueueReadRequest]) {
    fail(term::kDdpUntaggedMsnRange, u, true);
    return;
  }
  if (h.mo != 0 || !h.last) {
    fail(term::kDdpUntaggedInvalidMo, u, true);  // a Read Request is one segment at MO 0
    return;
  }
  const auto rr = ReadRequestHeader::parse(u.subspan(ddp::kUntaggedLen));
  if (!rr) {
    fail(term::kRdmapCatastrophicStream, u);
    return;
  }
  ++rx_msn_[rdmap::kQueueReadRequest];
  if (rrq_.size() >= cfg_.ird) {
    fail(term::kRdmapCatastrophicStream, u, true);  // the peer exceeded our IRD
    return;
  }
  BufferPiece src;
  if (rr->size > 0) {
    const StagStatus s =
        mem_.resolve(rr->source_stag, rr->source_to, rr->size, IwarpAccess::remote_read, src);
    if (s != StagStatus::ok) {
      fail(read_source_error(s), u, true);
      return;
    }
  }
  rrq_.push_back({rr->sink_stag, rr->sink_to, src, 0});
  pump();
}

void IwarpEndpoint::on_terminate(std::span<const std::byte> u) {
  const auto t = TerminateHeader::parse(u.subspan(ddp::kUntaggedLen));
  const TermError e = t ? t->error : term::kRdmapUnspecified;
  ++stats_.terminates_received;
  std::optional<uint64_t> wr_id;
  if (t && t->d)
    if (auto v = ConstDdpView::check(t->ddp_header)) wr_id = reported_message(DdpHeader::parse(*v));
  enter_error();
  events_->iwarp_terminate(e, false, wr_id);
  tcp_.close();
}

void IwarpEndpoint::mark_finished(uint64_t wr_id) {
  for (size_t i = 0; i < sent_.size(); ++i)
    if (sent_[i].wr_id == wr_id) sent_[i].finished = true;
}

void IwarpEndpoint::forget_finished() {
  while (!sent_.empty() && sent_.front().finished) sent_.pop_front();
}

// The message a Terminate's quoted DDP header names (RFC 5040 error
// management): a Write by its STag and TO, a Send or Read Request by its
// queue's MSN.
std::optional<uint64_t> IwarpEndpoint::reported_message(const DdpHeader& h) const {
  for (size_t i = 0; i < sent_.size(); ++i) {
    const SentMsg& m = sent_[i];
    const bool match =
        h.tagged ? m.kind == MsgKind::write && m.stag == h.stag && h.to >= m.to_begin && h.to <= m.to_end
                 : ((h.qn == rdmap::kQueueSend && m.kind == MsgKind::send) ||
                    (h.qn == rdmap::kQueueReadRequest && m.kind == MsgKind::read)) &&
                       m.msn == h.msn;
    if (match) return m.wr_id;
  }
  return std::nullopt;
}

// RFC 5040 error management: report the error to the peer in a Terminate on queue 2,
// quoting the offending DDP header (and Read Request header), then end the stream.
void IwarpEndpoint::fail(const TermError& e, std::span<const std::byte> u, bool with_rdmap_header) {
  if (phase_ != Phase::full_operation) return;
  TerminateHeader t;
  t.error = e;
  if (auto v = ConstDdpView::check(u)) {
    t.m = t.d = true;
    t.ddp_segment_length = static_cast<uint16_t>(u.size());
    t.ddp_header = u.first(v->header_len());
    if (with_rdmap_header && u.size() >= ddp::kUntaggedLen + ReadRequestHeader::kLen) {
      t.r = true;
      t.rdmap_header = u.subspan(ddp::kUntaggedLen, ReadRequestHeader::kLen);
    }
  }
  term_msg_.assign(ddp::kUntaggedLen + t.length(), std::byte{0});
  DdpHeader h;
  h.tagged = false;
  h.last = true;
  h.ulp_control = rdmap_control(RdmapOpcode::terminate);
  h.qn = rdmap::kQueueTerminate;
  h.msn = tx_msn_[rdmap::kQueueTerminate]++;
  h.mo = 0;
  h.emit(std::span<std::byte>(term_msg_));
  t.emit(std::span<std::byte>(term_msg_).subspan(ddp::kUntaggedLen));
  enter_error();
  events_->iwarp_terminate(e, true, std::nullopt);
  pump();
}

void IwarpEndpoint::enter_error() {
  phase_ = Phase::error;
  tcp_.await_peer(false);
  sq_.clear();
  rrq_.clear();
}

// The peer ended its stream. In full operation that ends the connection
// (siw_cm_llp_state_change, SIW_CM_WORK_PEER_CLOSE): the consumer is told,
// what is queued goes, and our FIN follows at once.
void IwarpEndpoint::tcp_peer_closed() {
  if (phase_ == Phase::full_operation) {
    enter_error();
    phase_ = Phase::closed;
    tcp_.close();
    events_->iwarp_disconnected();
  } else if (phase_ != Phase::error) {
    tcp_.close();
  }
}

void IwarpEndpoint::tcp_closed(TcpCloseReason) {
  // The stream stays published: frames of it may still be on the wire, to
  // be sealed when observed. The destructor withdraws it.
  phase_ = Phase::closed;
  events_->iwarp_closed();
}

}  // namespace rdmasim
