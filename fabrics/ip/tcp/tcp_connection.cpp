#include "fabrics/ip/tcp/tcp_connection.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace rdmasim {

namespace {

uint8_t auto_window_scale(uint32_t buffer) {
  uint8_t s = 0;
  while (s < 14 && (uint64_t{buffer} >> s) > 0xFFFF) ++s;
  return s;
}

uint32_t fnv1a(uint32_t h, std::span<const std::byte> b) {
  for (std::byte x : b) h = (h ^ u8(x)) * 16777619u;
  return h;
}

}  // namespace

const char* to_string(TcpState s) {
  switch (s) {
    case TcpState::closed:
      return "CLOSED";
    case TcpState::listen:
      return "LISTEN";
    case TcpState::syn_sent:
      return "SYN-SENT";
    case TcpState::syn_received:
      return "SYN-RECEIVED";
    case TcpState::established:
      return "ESTABLISHED";
    case TcpState::fin_wait_1:
      return "FIN-WAIT-1";
    case TcpState::fin_wait_2:
      return "FIN-WAIT-2";
    case TcpState::close_wait:
      return "CLOSE-WAIT";
    case TcpState::closing:
      return "CLOSING";
    case TcpState::last_ack:
      return "LAST-ACK";
    case TcpState::time_wait:
      return "TIME-WAIT";
  }
  return "?";
}

uint32_t TcpFlow::hash() const {
  uint32_t h = 2166136261u;
  if (ip.ipv6) {
    h = fnv1a(h, ip.src6.bytes());
    h = fnv1a(h, ip.dst6.bytes());
  } else {
    h = fnv1a(h, ip.src4.bytes());
    h = fnv1a(h, ip.dst4.bytes());
  }
  std::array<std::byte, 4> ports{std::byte(local_port >> 8), std::byte(local_port),
                                 std::byte(remote_port >> 8), std::byte(remote_port)};
  return fnv1a(h, ports);
}

TcpConnection::TcpConnection(Simulator& sim, PacketPool& pool, const TcpEndpointConfig& cfg, const TcpFlow& flow,
                             uint32_t iss)
    : sim_(sim),
      pool_(pool),
      cfg_(cfg),
      flow_(flow),
      flow_hash_(flow.hash()),
      local_mss_(cfg.mss ? cfg.mss : cfg.mtu - (flow.ip.ipv6 ? 40 : 20) - TcpView::kLen),
      smss_(local_mss_),
      iss_(iss),
      sndq_(cfg.send_buffer),
      scoreboard_(256),
      cc_(cfg.congestion_control, local_mss_, cfg.initial_cwnd_segments, cfg.dctcp_g),
      rtt_(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
      ctrl_(8),
      rto_timer_(sim, this, &on_rto_cb),
      delack_timer_(sim, this, &on_delack_cb),
      persist_timer_(sim, this, &on_persist_cb),
      timewait_timer_(sim, this, &on_timewait_cb),
      await_timer_(sim, this, &on_await_cb) {
  rcv_mss_ = std::min<uint32_t>(536, local_mss_);
}

TcpConnection::~TcpConnection() = default;

// ---------------------------------------------------------------- opening and closing

void TcpConnection::connect() {
  if (state_ != TcpState::closed) return;
  state_ = TcpState::syn_sent;
  syn_pending_ = true;
  kick();
}

void TcpConnection::listen() {
  if (state_ != TcpState::closed) return;
  state_ = TcpState::listen;
}

void TcpConnection::close() {
  switch (state_) {
    case TcpState::listen:
    case TcpState::syn_sent:
      finish(TcpCloseReason::normal);
      return;
    case TcpState::syn_received:
    case TcpState::established:
      state_ = TcpState::fin_wait_1;
      break;
    case TcpState::close_wait:
      state_ = TcpState::last_ack;
      break;
    default:
      return;
  }
  fin_queued_ = true;
  fin_off_ = sndq_.end_offset();
  kick();
}

void TcpConnection::abort() {
  if (state_ == TcpState::closed) return;
  if (state_ != TcpState::listen) {
    TcpHeader h;
    h.seq = snd_seq(snd_nxt_);
    h.flags = tcp_flag::kRst;
    if (state_ != TcpState::syn_sent) {
      h.flags |= tcp_flag::kAck;
      h.ack = rcv_seq(rcv_nxt_);
    }
    queue_ctrl(h);
  }
  finish(TcpCloseReason::reset);
  kick();
}

void TcpConnection::finish(TcpCloseReason why) {
  state_ = TcpState::closed;
  rto_timer_.disarm();
  delack_timer_.disarm();
  persist_timer_.disarm();
  timewait_timer_.disarm();
  await_timer_.stop();
  awaiting_peer_ = false;
  syn_pending_ = probe_pending_ = ack_now_ = false;
  ooo_.clear();
  sndq_.release_all();  // nothing will be sent again: the buffer's memory goes
  if (upper_) upper_->tcp_closed(why);
}

void TcpConnection::enter_time_wait() {
  state_ = TcpState::time_wait;
  rto_timer_.disarm();
  persist_timer_.disarm();
  timewait_timer_.arm_after(cfg_.time_wait);
}

void TcpConnection::on_timewait() { finish(TcpCloseReason::normal); }

// ---------------------------------------------------------------- records

std::span<std::byte> TcpConnection::reserve(size_t n) {
  if (state_ != TcpState::established && state_ != TcpState::close_wait) return {};
  if (n > smss_) return {};
  return sndq_.reserve(n);
}

void TcpConnection::commit(bool solo) {
  sndq_.commit(solo);
  kick();
}

bool TcpConnection::send(std::span<const std::byte> record, bool solo) {
  auto s = reserve(record.size());
  if (s.empty()) return false;
  std::memcpy(s.data(), record.data(), record.size());
  commit(solo);
  return true;
}

void TcpConnection::consume(size_t n) {
  unconsumed_ -= std::min(n, unconsumed_);
  // RFC 9293 3.8.6.2.2: tell the sender once the window can open by at
  // least min(half the buffer, one MSS); smaller openings wait (no SWS).
  const uint64_t space = cfg_.receive_buffer - std::min<uint64_t>(cfg_.receive_buffer, unconsumed_);
  const uint64_t threshold = std::min<uint64_t>(cfg_.receive_buffer / 2, local_mss_);
  if (rcv_nxt_ + space >= rcv_adv_ + threshold && state_ != TcpState::closed) {
    ack_now_ = true;
    kick();
  }
}

// ---------------------------------------------------------------- transmission

bool TcpConnection::data_state() const {
  switch (state_) {
    case TcpState::established:
    case TcpState::close_wait:
    case TcpState::fin_wait_1:
    case TcpState::closing:
    case TcpState::last_ack:
      return true;
    default:
      return false;
  }
}

// RFC 6675 SetPipe(): bytes believed in the network. Without SACK,
// duplicate ACKs stand in for SACKed segments (as Linux does for NewReno).
uint64_t TcpConnection::pipe() const {
  int64_t p = static_cast<int64_t>(snd_nxt_ - snd_una_) - static_cast<int64_t>(sacked_bytes_) -
              static_cast<int64_t>(lost_bytes_) + static_cast<int64_t>(retrans_bytes_) -
              static_cast<int64_t>(reno_sacked_);
  return p > 0 ? static_cast<uint64_t>(p) : 0;
}

size_t TcpConnection::first_retransmit() const {
  if (lost_unsent_ == 0) return scoreboard_.size();
  for (size_t i = 0; i < scoreboard_.size(); ++i) {
    const Seg& s = scoreboard_[i];
    if (s.lost && !s.retrans && !s.sacked) return i;
  }
  return scoreboard_.size();
}

size_t TcpConnection::new_data_length() const {
  if (fin_sent_ || snd_nxt_ >= sndq_.end_offset()) return 0;
  const uint64_t wnd_left = snd_una_ + snd_wnd_ > snd_nxt_ ? snd_una_ + snd_wnd_ - snd_nxt_ : 0;
  const uint64_t p = pipe();
  const uint64_t cw_left = cc_.cwnd() > p ? cc_.cwnd() - p : 0;
  const uint64_t limit = std::min<uint64_t>({smss_, wnd_left, cw_left});
  return sndq_.segment_length(snd_nxt_, limit);
}

bool TcpConnection::fin_ready() const {
  return fin_queued_ && !fin_sent_ && snd_nxt_ == sndq_.end_offset() && snd_nxt_ == fin_off_;
}

TcpConnection::Tx TcpConnection::pick() const {
  if (!ctrl_.empty()) return Tx::ctrl;
  if (syn_pending_) return Tx::syn;
  if (data_state()) {
    // RFC 6675 NextSeg(): lost segments go first; new data waits behind them.
    const size_t r = first_retransmit();
    if (r < scoreboard_.size()) {
      const Seg& s = scoreboard_[r];
      if (fast_rtx_pending_ || pipe() + s.len() <= cc_.cwnd()) return Tx::retransmit;
    } else {
      if (new_data_length() > 0) return Tx::data;
      if (fin_ready()) return Tx::fin;
    }
  }
  if (probe_pending_) return Tx::probe;
  if (ack_now_) return Tx::ack;
  return Tx::none;
}

TcpTx TcpConnection::next_tx() {
  const Tx w = pick();
  if (w == Tx::none) return {};
  TcpTx t = build(w);
  update_cwnd_limited();
  return t;
}

void TcpConnection::update_cwnd_limited() {
  // RFC 7661 in spirit: the window only grows while it is used. It counts as
  // used when data waits for it, or when at least half of it is in flight.
  const uint64_t p = pipe();
  const bool waiting =
      !fin_sent_ && snd_nxt_ < sndq_.end_offset() && new_data_length() == 0 && snd_una_ + snd_wnd_ > snd_nxt_;
  cwnd_limited_ = waiting || 2 * p >= cc_.cwnd();
}

void TcpConnection::kick() {
  if (in_kick_ || in_receive_) return;
  in_kick_ = true;
  if (output_) {
    while (TcpTx t = next_tx()) output_(std::move(t.packet), t.ect);
  } else if (wake_ && has_tx()) {
    wake_();
  }
  in_kick_ = false;
  check_persist();
}

TcpOptions TcpConnection::syn_options(bool syn_ack) const {
  TcpOptions o;
  o.mss = static_cast<uint16_t>(std::min<uint32_t>(local_mss_, 0xFFFF));
  if (!syn_ack || wscale_ok_) o.window_scale = our_wscale();
  o.sack_permitted = cfg_.sack && (!syn_ack || sack_ok_);
  return o;
}

uint8_t TcpConnection::our_wscale() const {
  return cfg_.window_scale ? std::min<uint8_t>(*cfg_.window_scale, 14)
                           : auto_window_scale(cfg_.receive_buffer);
}

uint16_t TcpConnection::window_field() {
  const uint64_t space = cfg_.receive_buffer - std::min<uint64_t>(cfg_.receive_buffer, unconsumed_);
  const uint64_t want = rcv_nxt_ + space;
  // Receiver SWS avoidance (RFC 9293 3.8.6.2.2): the right edge moves only in
  // steps of min(half the buffer, one MSS), and never back (3.8.6.2.1).
  const uint64_t step = std::min<uint64_t>(cfg_.receive_buffer / 2, local_mss_);
  if (want >= rcv_adv_ + step) rcv_adv_ = want;
  if (rcv_adv_ < rcv_nxt_) rcv_adv_ = rcv_nxt_;
  uint64_t wnd = rcv_adv_ - rcv_nxt_;
  // Round up to the scale unit so the advertised edge never recedes (RFC 7323 2.4).
  uint64_t field = (wnd + (uint64_t{1} << rcv_wscale_) - 1) >> rcv_wscale_;
  if (field > 0xFFFF) field = 0xFFFF;
  rcv_adv_ = rcv_nxt_ + (field << rcv_wscale_);
  return static_cast<uint16_t>(field);
}

void TcpConnection::fill_ack_fields(TcpHeader& h) {
  h.flags |= tcp_flag::kAck;
  h.ack = rcv_seq(rcv_nxt_);
  h.window = window_field();
  if (ecn_ok_) {
    const bool echo = cc_.kind() == CongestionControlKind::dctcp ? ce_state_ : ece_echo_;
    if (echo) h.flags |= tcp_flag::kEce;
  }
  if (sack_ok_ && !ooo_.empty()) fill_sack_blocks(h.options);
}

void TcpConnection::on_ack_sent() {
  ack_now_ = false;
  unacked_bytes_ = 0;
  delack_timer_.disarm();
}

Packet TcpConnection::make_packet(const TcpHeader& h, uint64_t data_off, size_t data_len) {
  const size_t hl = h.header_len();
  Packet p = pool_.make(cfg_.headroom, hl + data_len);
  auto b = p.push_back(hl + data_len);
  h.emit(*TcpView::check(b));
  if (data_len) sndq_.copy_out(data_off, data_len, b.data() + hl);
  p.meta().crc_pending = true;  // checksum filled by tcp_fill_checksum when observed
  p.meta().flow_hash = flow_hash_;
  ++stats_.segments_sent;
  if (data_len) {
    ++stats_.data_segments_sent;
    stats_.bytes_sent += data_len;
  }
  return p;
}

TcpHeader TcpConnection::base_header(uint32_t seq) const {
  TcpHeader h;
  h.src_port = flow_.local_port;
  h.dst_port = flow_.remote_port;
  h.seq = seq;
  return h;
}

void TcpConnection::queue_ctrl(TcpHeader h) {
  h.src_port = flow_.local_port;
  h.dst_port = flow_.remote_port;
  const bool ect = ecn_ok_ && cc_.kind() == CongestionControlKind::dctcp;
  ctrl_.push_back(TcpTx{make_packet(h, 0, 0), ect});
}

void TcpConnection::arm_rto_if_needed() {
  if (!rto_timer_.armed()) rto_timer_.arm_after(rtt_.rto());  // RFC 6298 5.1
}

TcpTx TcpConnection::build(Tx what) {
  const bool dctcp = cc_.kind() == CongestionControlKind::dctcp;
  switch (what) {
    case Tx::none:
      return {};
    case Tx::ctrl: {
      TcpTx t = std::move(ctrl_.front());
      ctrl_.pop_front();
      return t;
    }
    case Tx::syn: {
      syn_pending_ = false;
      const bool syn_ack = state_ == TcpState::syn_received;
      TcpHeader h = base_header(iss_);
      h.flags = tcp_flag::kSyn;
      h.options = syn_options(syn_ack);
      // RFC 7323 2.2: the window of a SYN is never scaled.
      h.window = static_cast<uint16_t>(std::min<uint32_t>(cfg_.receive_buffer, 0xFFFF));
      rcv_adv_ = h.window;
      if (syn_ack) {
        h.flags |= tcp_flag::kAck;
        h.ack = irs_ + 1;
        if (ecn_ok_) h.flags |= tcp_flag::kEce;  // RFC 3168 6.1.1: ECN-setup SYN-ACK
      } else if (cfg_.ecn_enabled()) {
        h.flags |= tcp_flag::kEce | tcp_flag::kCwr;  // ECN-setup SYN
      }
      if (++syn_transmissions_ > 1) ++stats_.retransmits;
      syn_sent_at_ = sim_.now();
      arm_rto_if_needed();
      if (syn_ack) on_ack_sent();
      return {make_packet(h, 0, 0), false};
    }
    case Tx::retransmit: {
      Seg& s = scoreboard_[first_retransmit()];
      const size_t data_len = static_cast<size_t>(s.len() - (s.fin ? 1 : 0));
      TcpHeader h = base_header(snd_seq(s.start));
      h.flags = (data_len ? tcp_flag::kPsh : 0) | (s.fin ? tcp_flag::kFin : 0);
      fill_ack_fields(h);
      s.retrans = true;
      retrans_bytes_ += s.len();
      --lost_unsent_;
      ++s.transmissions;
      s.sent = sim_.now();
      ++stats_.retransmits;
      if (ca_state_ == CaState::recovery) prr_out_ += s.len();
      fast_rtx_pending_ = false;
      arm_rto_if_needed();
      on_ack_sent();
      // RFC 3168 6.1.5: no ECT on retransmissions (DCTCP marks everything).
      return {make_packet(h, s.start, data_len), ecn_ok_ && dctcp};
    }
    case Tx::data: {
      const size_t len = new_data_length();
      const bool fin = fin_queued_ && snd_nxt_ + len == fin_off_;
      TcpHeader h = base_header(snd_seq(snd_nxt_));
      h.flags = tcp_flag::kPsh | (fin ? tcp_flag::kFin : 0);
      if (cwr_pending_) {
        h.flags |= tcp_flag::kCwr;  // RFC 3168 6.1.2: the window was reduced
        cwr_pending_ = false;
      }
      fill_ack_fields(h);
      Packet p = make_packet(h, snd_nxt_, len);
      Seg s;
      s.start = snd_nxt_;
      s.end = snd_nxt_ + len + (fin ? 1 : 0);
      s.sent = sim_.now();
      s.transmissions = 1;
      s.fin = fin;
      scoreboard_.push_back(s);
      snd_nxt_ = s.end;
      if (fin) fin_sent_ = true;
      if (ca_state_ == CaState::recovery) prr_out_ += s.len();
      arm_rto_if_needed();
      on_ack_sent();
      return {std::move(p), ecn_ok_};
    }
    case Tx::fin: {
      TcpHeader h = base_header(snd_seq(snd_nxt_));
      h.flags = tcp_flag::kFin;
      fill_ack_fields(h);
      Seg s;
      s.start = snd_nxt_;
      s.end = snd_nxt_ + 1;
      s.sent = sim_.now();
      s.transmissions = 1;
      s.fin = true;
      scoreboard_.push_back(s);
      snd_nxt_ = s.end;
      fin_sent_ = true;
      arm_rto_if_needed();
      on_ack_sent();
      return {make_packet(h, 0, 0), ecn_ok_ && dctcp};
    }
    case Tx::probe: {
      // A zero-window probe that does not split a record: an ACK with an old
      // sequence number, which the receiver must answer with its window
      // (RFC 9293 3.10.7.4; Linux's tcp_xmit_probe_skb does the same).
      probe_pending_ = false;
      TcpHeader h = base_header(snd_seq(snd_una_) - 1);
      fill_ack_fields(h);
      on_ack_sent();
      return {make_packet(h, 0, 0), ecn_ok_ && dctcp};
    }
    case Tx::ack: {
      TcpHeader h = base_header(snd_seq(snd_nxt_));
      fill_ack_fields(h);
      on_ack_sent();
      return {make_packet(h, 0, 0), ecn_ok_ && dctcp};
    }
  }
  return {};
}

// ---------------------------------------------------------------- arrival

void TcpConnection::receive(Packet p, bool ce) {
  auto v = ConstTcpView::check(std::as_const(p).bytes());
  if (!v || !v->valid()) return;
  auto parsed = TcpHeader::parse(*v);
  if (!parsed) return;
  const TcpHeader& h = *parsed;
  if (h.dst_port != flow_.local_port || h.src_port != flow_.remote_port) return;
  ++stats_.segments_received;
  if (ce) ++stats_.ce_received;
  if (awaiting_peer_) await_timer_.arm_after(give_up_time());  // the peer is alive
  const size_t hlen = v->header_len();
  const size_t payload = p.size() - hlen;

  in_receive_ = true;
  receive_segment(p, h, hlen, payload, ce);
  in_receive_ = false;
  kick();
}

void TcpConnection::receive_segment(Packet& p, const TcpHeader& h, size_t hlen, size_t payload, bool ce) {
  switch (state_) {
    case TcpState::closed:
      receive_closed(h, payload);
      return;
    case TcpState::listen:
      receive_listen(h);
      return;
    case TcpState::syn_sent:
      receive_syn_sent(h);
      return;
    default:
      break;
  }

  // RFC 9293 3.10.7.4, first: is the segment in the window?
  const int64_t off = static_cast<int64_t>(rcv_nxt_) + static_cast<int32_t>(h.seq - rcv_seq(rcv_nxt_));
  const int64_t nxt = static_cast<int64_t>(rcv_nxt_);
  const int64_t wnd = rcv_adv_ > rcv_nxt_ ? static_cast<int64_t>(rcv_adv_ - rcv_nxt_) : 0;
  const int64_t seg_len = static_cast<int64_t>(payload) + ((h.flags & tcp_flag::kFin) ? 1 : 0);
  bool acceptable;
  if (seg_len == 0) {
    acceptable = wnd == 0 ? off == nxt : (off >= nxt && off < nxt + wnd);
  } else {
    acceptable = wnd > 0 && ((off >= nxt && off < nxt + wnd) ||
                             (off + seg_len - 1 >= nxt && off + seg_len - 1 < nxt + wnd));
  }

  // Second: RST (RFC 9293 3.10.7.4; the exact-match rule of RFC 5961 is not modelled).
  if (h.flags & tcp_flag::kRst) {
    if (acceptable || off == nxt) finish(TcpCloseReason::reset);
    return;
  }

  if (state_ == TcpState::syn_received) {
    if ((h.flags & tcp_flag::kSyn) && !(h.flags & tcp_flag::kAck)) {
      syn_pending_ = true;  // the peer sent its SYN again: our SYN-ACK was lost
      return;
    }
    if (!(h.flags & tcp_flag::kAck)) return;
    if (h.ack != iss_ + 1) {
      TcpHeader r;
      r.seq = h.ack;
      r.flags = tcp_flag::kRst;
      queue_ctrl(r);
      return;
    }
    // The handshake completes (RFC 9293 3.10.7.4, fifth, SYN-RECEIVED).
    snd_wnd_ = uint64_t{h.window} << snd_wscale_;
    snd_wl1_ = h.seq;
    snd_wl2_ = h.ack;
    last_window_field_ = h.window;
    if (syn_transmissions_ == 1) rtt_.sample(sim_.now() - syn_sent_at_);
    become_established();
    if (state_ == TcpState::closed) return;
  }

  if (!acceptable) {
    if (seg_len > 0 && off + seg_len <= nxt) ++stats_.duplicate_segments;
    ack_now_ = true;  // an unacceptable segment is answered with an ACK and dropped
    return;
  }
  if (h.flags & tcp_flag::kSyn) {
    ack_now_ = true;  // RFC 5961 4.2 challenge ACK for a SYN in the window
    return;
  }
  if (!(h.flags & tcp_flag::kAck)) return;
  if (h.flags & tcp_flag::kCwr) ece_echo_ = false;  // RFC 3168 6.1.3
  if (!process_ack(h, payload > 0)) return;
  if (state_ == TcpState::closed || state_ == TcpState::time_wait) {
    if (state_ == TcpState::time_wait && (h.flags & tcp_flag::kFin)) ack_now_ = true;  // FIN again: ACK again
    return;
  }
  process_data(p, h, hlen, payload, ce);
  if (h.flags & tcp_flag::kFin) {
    peer_fin_seen_ = true;
    peer_fin_off_ = static_cast<uint64_t>(off) + payload;
  }
  maybe_take_fin();
}

void TcpConnection::receive_closed(const TcpHeader& h, size_t payload) {
  // RFC 9293 3.10.7.1: anything but a RST gets a RST.
  if (h.flags & tcp_flag::kRst) return;
  TcpHeader r;
  if (h.flags & tcp_flag::kAck) {
    r.seq = h.ack;
    r.flags = tcp_flag::kRst;
  } else {
    r.seq = 0;
    r.ack = h.seq + static_cast<uint32_t>(payload) + ((h.flags & tcp_flag::kSyn) ? 1 : 0) +
            ((h.flags & tcp_flag::kFin) ? 1 : 0);
    r.flags = tcp_flag::kRst | tcp_flag::kAck;
  }
  queue_ctrl(r);
}

void TcpConnection::receive_listen(const TcpHeader& h) {
  // RFC 9293 3.10.7.2.
  if (h.flags & tcp_flag::kRst) return;
  if (h.flags & tcp_flag::kAck) {
    TcpHeader r;
    r.seq = h.ack;
    r.flags = tcp_flag::kRst;
    queue_ctrl(r);
    return;
  }
  if (!(h.flags & tcp_flag::kSyn)) return;
  irs_ = h.seq;
  rcv_nxt_ = 0;
  take_syn_options(h);
  // RFC 3168 6.1.1: the peer asks for ECN with ECE and CWR on its SYN.
  ecn_ok_ = cfg_.ecn_enabled() && (h.flags & tcp_flag::kEce) && (h.flags & tcp_flag::kCwr);
  snd_wnd_ = h.window;
  snd_wl1_ = h.seq;
  state_ = TcpState::syn_received;
  syn_pending_ = true;
}

void TcpConnection::receive_syn_sent(const TcpHeader& h) {
  // RFC 9293 3.10.7.3.
  if ((h.flags & tcp_flag::kAck) && h.ack != iss_ + 1) {
    if (!(h.flags & tcp_flag::kRst)) {
      TcpHeader r;
      r.seq = h.ack;
      r.flags = tcp_flag::kRst;
      queue_ctrl(r);
    }
    return;
  }
  if (h.flags & tcp_flag::kRst) {
    if (h.flags & tcp_flag::kAck) finish(TcpCloseReason::reset);
    return;
  }
  if (!(h.flags & tcp_flag::kSyn)) return;
  irs_ = h.seq;
  rcv_nxt_ = 0;
  take_syn_options(h);
  if (!(h.flags & tcp_flag::kAck)) {
    state_ = TcpState::syn_received;  // simultaneous open
    syn_pending_ = true;
    return;
  }
  // RFC 3168 6.1.1: an ECN-setup SYN-ACK has ECE without CWR.
  ecn_ok_ = cfg_.ecn_enabled() && (h.flags & tcp_flag::kEce) && !(h.flags & tcp_flag::kCwr);
  snd_wnd_ = h.window;  // RFC 7323 2.2: not scaled in a SYN
  snd_wl1_ = h.seq;
  snd_wl2_ = h.ack;
  last_window_field_ = h.window;
  if (syn_transmissions_ == 1) rtt_.sample(sim_.now() - syn_sent_at_);  // Karn: only if sent once
  ack_now_ = true;
  become_established();
}

void TcpConnection::take_syn_options(const TcpHeader& h) {
  // RFC 9293 3.7.1: without an MSS option the peer takes 536 bytes.
  const uint32_t peer_mss = h.options.mss.value_or(536);
  smss_ = std::max<uint32_t>(64, std::min(local_mss_, peer_mss));
  rcv_mss_ = std::min<uint32_t>(rcv_mss_, smss_);
  // RFC 7323 2.2: scaling only when both SYNs carry the option; shifts above 14 count as 14.
  wscale_ok_ = h.options.window_scale.has_value();
  snd_wscale_ = wscale_ok_ ? std::min<uint8_t>(*h.options.window_scale, 14) : 0;
  rcv_wscale_ = wscale_ok_ ? our_wscale() : 0;
  sack_ok_ = cfg_.sack && h.options.sack_permitted;  // RFC 2018 2
}

void TcpConnection::become_established() {
  state_ = TcpState::established;
  rto_timer_.disarm();
  consecutive_timeouts_ = 0;
  // The window starts from the negotiated send MSS (RFC 5681 3.1, RFC 6928).
  cc_ = CongestionController(cfg_.congestion_control, smss_, cfg_.initial_cwnd_segments, cfg_.dctcp_g);
  if (upper_) upper_->tcp_established();
}

bool TcpConnection::process_ack(const TcpHeader& h, bool has_data) {
  const int64_t ack_off = static_cast<int64_t>(snd_una_) + static_cast<int32_t>(h.ack - snd_seq(snd_una_));
  if (ack_off > static_cast<int64_t>(snd_nxt_)) {
    ack_now_ = true;  // RFC 9293: it acknowledges something not yet sent
    return false;
  }
  if (ack_off < static_cast<int64_t>(snd_una_)) return true;  // an old ACK: the data may still be new

  const uint64_t newly_sacked = sack_ok_ ? process_sack(h) : 0;
  const uint64_t acked = static_cast<uint64_t>(ack_off) - snd_una_;
  const bool dup = acked == 0 && !has_data && !(h.flags & (tcp_flag::kSyn | tcp_flag::kFin)) &&
                   h.window == last_window_field_ && snd_nxt_ > snd_una_;

  // Window update (RFC 9293 3.10.7.4: SND.WL1 / SND.WL2 guard against old segments).
  if (seq_lt(snd_wl1_, h.seq) || (snd_wl1_ == h.seq && seq_le(snd_wl2_, h.ack))) {
    snd_wnd_ = uint64_t{h.window} << snd_wscale_;
    snd_wl1_ = h.seq;
    snd_wl2_ = h.ack;
  }
  last_window_field_ = h.window;
  const bool ece = ecn_ok_ && (h.flags & tcp_flag::kEce);

  if (acked > 0) {
    // Karn's rule: time only segments sent once; take the newest one acked.
    bool have_sample = false;
    Time sample;
    while (!scoreboard_.empty() && scoreboard_.front().end <= static_cast<uint64_t>(ack_off)) {
      const Seg& s = scoreboard_.front();
      if (s.transmissions == 1 && !s.sacked) {
        sample = sim_.now() - s.sent;
        have_sample = true;
      }
      seg_forget(s);
      scoreboard_.pop_front();
    }
    if (!scoreboard_.empty() && scoreboard_.front().start < static_cast<uint64_t>(ack_off)) {
      Seg& s = scoreboard_.front();  // acknowledged in part: keep the rest
      const uint64_t cut = static_cast<uint64_t>(ack_off) - s.start;
      if (s.sacked) {
        sacked_bytes_ -= cut;
      } else if (s.lost) {
        lost_bytes_ -= cut;
        if (s.retrans) retrans_bytes_ -= cut;
      }
      s.start = static_cast<uint64_t>(ack_off);
    }
    const uint64_t data_end = sndq_.end_offset();
    stats_.bytes_acked += std::min<uint64_t>(ack_off, data_end) - std::min(snd_una_, data_end);
    snd_una_ = static_cast<uint64_t>(ack_off);
    sndq_.release_before(std::min(snd_una_, data_end));
    reno_sacked_ -= std::min(reno_sacked_, acked > smss_ ? acked - smss_ : 0);
    consecutive_timeouts_ = 0;
    persist_backoff_ = 0;
    if (have_sample) rtt_.sample(sample);
    // RFC 6298 5.2 / 5.3.
    if (snd_una_ == snd_nxt_) {
      rto_timer_.disarm();
    } else {
      rto_timer_.arm_after(rtt_.rto());
    }
  } else if (dup) {
    ++dupacks_;
    ++stats_.dupacks_received;
    if (!sack_ok_ && !scoreboard_.empty()) {
      const uint64_t out = snd_nxt_ - snd_una_;
      const uint64_t head = scoreboard_.front().len();
      reno_sacked_ = std::min(reno_sacked_ + smss_, out > head ? out - head : 0);
    }
  }

  AckSample a{sim_.now(), acked, ece, rtt_.srtt(), snd_una_, snd_nxt_, cwnd_limited_};
  switch (ca_state_) {
    case CaState::open: {
      if (acked > 0) dupacks_ = 0;
      const bool head_lost = !scoreboard_.empty() && scoreboard_.front().lost;
      // RFC 5681 3.2 / RFC 6582 3.2 step 2: three duplicate ACKs, unless they
      // belong to data sent before the last recovery; RFC 6675 5: or SACK
      // shows the first segment lost.
      if ((dupacks_ >= 3 || (sack_ok_ && head_lost)) && snd_una_ >= recover_ && snd_nxt_ > snd_una_) {
        enter_recovery();
        update_prr(acked + newly_sacked + (dup && !sack_ok_ ? smss_ : 0));
        cc_.observe_ack(a);
      } else if (ece && snd_una_ >= ecn_recover_ && snd_nxt_ > snd_una_) {
        // RFC 3168 6.1.2: react to ECN-Echo at most once per window of data.
        cc_.on_ecn(sim_.now(), snd_nxt_ - snd_una_);
        cc_.observe_ack(a);
        ecn_recover_ = snd_nxt_;
        cwr_pending_ = true;
        ++stats_.ecn_reductions;
      } else {
        cc_.on_ack(a);
      }
      break;
    }
    case CaState::recovery:
      if (snd_una_ >= recover_) {
        // RFC 6582 3.2 step 3 / RFC 6937: a full ACK ends recovery.
        ca_state_ = CaState::open;
        cc_.end_recovery();
        reno_sacked_ = 0;
        dupacks_ = 0;
        cc_.observe_ack(a);
      } else {
        // RFC 6582 3.2 step 4: a partial ACK means the next segment is lost too.
        if (acked > 0 && !scoreboard_.empty()) {
          Seg& s = scoreboard_.front();
          if (!s.sacked && !s.lost) seg_mark_lost(s);
        }
        update_prr(acked + newly_sacked + (dup && !sack_ok_ ? smss_ : 0));
        cc_.observe_ack(a);
      }
      break;
    case CaState::loss:
      if (snd_una_ >= recover_) ca_state_ = CaState::open;
      cc_.on_ack(a);  // slow start again after a timeout
      break;
  }

  if (acked > 0) {
    if (upper_) upper_->tcp_acked(acked_offset());
    if (fin_sent_ && snd_una_ == fin_off_ + 1) our_fin_acked();
  }
  return true;
}

uint64_t TcpConnection::process_sack(const TcpHeader& h) {
  uint64_t newly = 0;
  for (const SackBlock& b : h.options.sack_blocks()) {
    const int64_t l = static_cast<int64_t>(snd_una_) + static_cast<int32_t>(b.left - snd_seq(snd_una_));
    const int64_t r = static_cast<int64_t>(snd_una_) + static_cast<int32_t>(b.right - snd_seq(snd_una_));
    if (r <= l || r > static_cast<int64_t>(snd_nxt_) || r <= static_cast<int64_t>(snd_una_)) continue;
    // Segments wholly inside [l, r) are SACKed.
    size_t lo = 0, hi = scoreboard_.size();
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (static_cast<int64_t>(scoreboard_[mid].start) < l) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    for (size_t i = lo; i < scoreboard_.size() && static_cast<int64_t>(scoreboard_[i].end) <= r; ++i) {
      Seg& s = scoreboard_[i];
      if (!s.sacked) {
        newly += s.len();
        seg_mark_sacked(s);
      }
    }
  }
  if (newly > 0) mark_lost_by_sack();
  return newly;
}

// RFC 6675 IsLost(): a segment is lost once DupThresh (3) segments, or more
// than (DupThresh - 1) * SMSS bytes, above it have been SACKed.
void TcpConnection::mark_lost_by_sack() {
  uint32_t count = 0;
  uint64_t bytes = 0;
  for (size_t i = scoreboard_.size(); i-- > 0;) {
    Seg& s = scoreboard_[i];
    if (s.sacked) {
      ++count;
      bytes += s.len();
    } else if (!s.lost && (count >= 3 || bytes > 2ull * smss_)) {
      seg_mark_lost(s);
    }
  }
}

void TcpConnection::enter_recovery() {
  ca_state_ = CaState::recovery;
  recover_ = snd_nxt_;
  ecn_recover_ = snd_nxt_;  // RFC 3168 6.1.2: one reduction per window, loss or mark
  const uint64_t flight = snd_nxt_ - snd_una_;
  cc_.on_loss(sim_.now(), flight);
  prr_delivered_ = prr_out_ = 0;
  recover_fs_ = flight;
  if (!scoreboard_.empty()) {
    Seg& s = scoreboard_.front();
    if (!s.sacked && !s.lost) seg_mark_lost(s);
  }
  fast_rtx_pending_ = true;  // RFC 5681 3.2 step 4: retransmit now
  if (ecn_ok_) cwr_pending_ = true;
  ++stats_.fast_retransmits;
}

// RFC 6937 PRR with slow-start reduction bound: spread the window reduction
// over the recovery round trip instead of pausing, then refill to ssthresh.
void TcpConnection::update_prr(uint64_t delivered) {
  prr_delivered_ += delivered;
  const uint64_t p = pipe();
  const uint64_t ss = cc_.ssthresh();
  int64_t sndcnt;
  if (p > ss) {
    const unsigned __int128 num = static_cast<unsigned __int128>(prr_delivered_) * ss;
    const uint64_t fs = std::max<uint64_t>(recover_fs_, 1);
    sndcnt = static_cast<int64_t>((num + fs - 1) / fs) - static_cast<int64_t>(prr_out_);
  } else {
    const int64_t gap = static_cast<int64_t>(prr_delivered_) - static_cast<int64_t>(prr_out_);
    sndcnt = std::min<int64_t>(static_cast<int64_t>(ss - p),
                               std::max<int64_t>(gap, static_cast<int64_t>(delivered)) + smss_);
  }
  if (sndcnt < 0) sndcnt = 0;
  cc_.set_cwnd(p + static_cast<uint64_t>(sndcnt));
}

void TcpConnection::seg_mark_sacked(Seg& s) {
  if (s.sacked) return;
  if (s.lost) {
    lost_bytes_ -= s.len();
    if (s.retrans) {
      retrans_bytes_ -= s.len();
    } else {
      --lost_unsent_;
    }
  }
  s.lost = s.retrans = false;
  s.sacked = true;
  sacked_bytes_ += s.len();
}

void TcpConnection::seg_mark_lost(Seg& s) {
  if (s.sacked || s.lost) return;
  s.lost = true;
  s.retrans = false;
  lost_bytes_ += s.len();
  ++lost_unsent_;
}

void TcpConnection::seg_forget(const Seg& s) {
  if (s.sacked) {
    sacked_bytes_ -= s.len();
  } else if (s.lost) {
    lost_bytes_ -= s.len();
    if (s.retrans) {
      retrans_bytes_ -= s.len();
    } else {
      --lost_unsent_;
    }
  }
}

void TcpConnection::process_data(Packet& p, const TcpHeader& h, size_t hlen, size_t payload, bool ce) {
  if (payload == 0) return;
  if (state_ != TcpState::established && state_ != TcpState::fin_wait_1 && state_ != TcpState::fin_wait_2)
    return;
  if (peer_fin_seen_ && rcv_nxt_ > peer_fin_off_) return;

  if (ecn_ok_) {
    if (cc_.kind() == CongestionControlKind::dctcp) {
      // RFC 8257 3.2: ECE mirrors CE exactly. When CE flips, what arrived
      // before is acknowledged at once with the old ECE value.
      if (ce != ce_state_) {
        if (unacked_bytes_ > 0) {
          TcpHeader a = base_header(snd_seq(snd_nxt_));
          fill_ack_fields(a);
          queue_ctrl(a);
          on_ack_sent();
        }
        ce_state_ = ce;
      }
    } else if (ce) {
      ece_echo_ = true;  // RFC 3168 6.1.3: until the peer sets CWR
    }
  }

  const uint64_t seg_start =
      static_cast<uint64_t>(static_cast<int64_t>(rcv_nxt_) + static_cast<int32_t>(h.seq - rcv_seq(rcv_nxt_)));
  uint64_t start = std::max(seg_start, rcv_nxt_);
  uint64_t end = std::min(seg_start + payload, rcv_adv_);  // bytes past the window are dropped
  if (end <= start) {
    ++stats_.duplicate_segments;
    ack_now_ = true;  // RFC 5681 4.2: a duplicate gets an immediate ACK
    return;
  }
  rcv_mss_ = std::max<uint32_t>(rcv_mss_, static_cast<uint32_t>(payload));
  const uint32_t data_at = static_cast<uint32_t>(hlen + (start - seg_start));
  if (start == rcv_nxt_) {
    const bool had_ooo = !ooo_.empty();
    rcv_nxt_ = end;
    deliver(std::as_const(p).bytes().subspan(data_at, end - start));
    drain_ooo();
    if (had_ooo) {
      ack_now_ = true;  // RFC 5681 4.2: ACK at once when a hole fills
    } else {
      schedule_ack(end - start);
    }
  } else {
    ++stats_.out_of_order;
    insert_ooo(p, start, end, data_at);
    ack_now_ = true;  // RFC 5681 4.2: out-of-order data gets an immediate duplicate ACK
  }
}

void TcpConnection::schedule_ack(size_t n) {
  unacked_bytes_ += n;
  if (!cfg_.delayed_acks || unacked_bytes_ >= 2ull * rcv_mss_) {
    ack_now_ = true;  // RFC 5681 4.2: at least every second full-sized segment
  } else if (!delack_timer_.armed()) {
    delack_timer_.arm_after(cfg_.delayed_ack);
  }
}

void TcpConnection::deliver(std::span<const std::byte> bytes) {
  stats_.bytes_delivered += bytes.size();
  if (!auto_consume_) unconsumed_ += bytes.size();
  if (upper_) upper_->tcp_receive(bytes);
}

void TcpConnection::insert_ooo(Packet& p, uint64_t start, uint64_t end, uint32_t data_at) {
  auto it = std::lower_bound(ooo_.begin(), ooo_.end(), start,
                             [](const OooSeg& s, uint64_t v) { return s.start < v; });
  if (it != ooo_.begin()) {
    const OooSeg& prev = *(it - 1);
    if (prev.end >= end) {
      ++stats_.duplicate_segments;
      return;
    }
    if (prev.end > start) {
      data_at += static_cast<uint32_t>(prev.end - start);
      start = prev.end;
    }
  }
  if (it != ooo_.end() && it->start < end) {
    if (it->start <= start) {
      ++stats_.duplicate_segments;
      return;
    }
    end = it->start;
  }
  ooo_.insert(it, OooSeg{start, end, std::move(p), data_at, ++ooo_arrivals_});
}

void TcpConnection::drain_ooo() {
  size_t i = 0;
  for (; i < ooo_.size() && ooo_[i].start <= rcv_nxt_; ++i) {
    OooSeg& s = ooo_[i];
    if (s.end <= rcv_nxt_) continue;
    const uint64_t skip = rcv_nxt_ - s.start;
    const uint64_t n = s.end - rcv_nxt_;
    rcv_nxt_ = s.end;
    deliver(std::as_const(s.packet).bytes().subspan(s.data_at + skip, n));
  }
  ooo_.erase(ooo_.begin(), ooo_.begin() + static_cast<ptrdiff_t>(i));
}

// RFC 2018 4: the first block holds the segment that arrived last; then
// other blocks, most recent first.
void TcpConnection::fill_sack_blocks(TcpOptions& o) const {
  struct Range {
    uint64_t start, end, recency;
  };
  std::array<Range, TcpOptions::kMaxSackBlocks> best{};
  size_t n = 0;
  auto offer = [&](const Range& r) {
    size_t pos = n;
    while (pos > 0 && best[pos - 1].recency < r.recency) --pos;
    if (pos >= best.size()) return;
    for (size_t k = std::min(n, best.size() - 1); k > pos; --k) best[k] = best[k - 1];
    best[pos] = r;
    if (n < best.size()) ++n;
  };
  Range cur{ooo_[0].start, ooo_[0].end, ooo_[0].arrival};
  for (size_t i = 1; i < ooo_.size(); ++i) {
    if (ooo_[i].start == cur.end) {
      cur.end = ooo_[i].end;
      cur.recency = std::max(cur.recency, ooo_[i].arrival);
    } else {
      offer(cur);
      cur = {ooo_[i].start, ooo_[i].end, ooo_[i].arrival};
    }
  }
  offer(cur);
  for (size_t i = 0; i < n; ++i) o.add_sack({rcv_seq(best[i].start), rcv_seq(best[i].end)});
}

void TcpConnection::maybe_take_fin() {
  if (!peer_fin_seen_ || peer_fin_taken_ || rcv_nxt_ != peer_fin_off_) return;
  // RFC 9293 3.10.7.4, eighth: the FIN is next in sequence.
  peer_fin_taken_ = true;
  rcv_nxt_ = peer_fin_off_ + 1;
  ack_now_ = true;
  switch (state_) {
    case TcpState::established:
      state_ = TcpState::close_wait;
      break;
    case TcpState::fin_wait_1:
      state_ = TcpState::closing;
      break;
    case TcpState::fin_wait_2:
      enter_time_wait();
      break;
    default:
      break;
  }
  if (upper_) upper_->tcp_peer_closed();
}

void TcpConnection::our_fin_acked() {
  switch (state_) {
    case TcpState::fin_wait_1:
      state_ = TcpState::fin_wait_2;
      break;
    case TcpState::closing:
      enter_time_wait();
      break;
    case TcpState::last_ack:
      finish(TcpCloseReason::normal);
      break;
    default:
      break;
  }
}

// ---------------------------------------------------------------- timers

void TcpConnection::on_rto() {
  if (state_ == TcpState::syn_sent || state_ == TcpState::syn_received) {
    if (++consecutive_timeouts_ > cfg_.max_retries) {
      finish(TcpCloseReason::timeout);
      return;
    }
    ++stats_.timeouts;
    rtt_.backoff();
    syn_pending_ = true;
    kick();
    return;
  }
  if (snd_una_ == snd_nxt_ || state_ == TcpState::closed || state_ == TcpState::time_wait) return;
  if (++consecutive_timeouts_ > cfg_.max_retries) {
    abort();
    return;
  }
  ++stats_.timeouts;
  // RFC 5681 3.1 eq. 4 and the loss window; RFC 6298 5.4-5.6.
  cc_.on_timeout(sim_.now(), snd_nxt_ - snd_una_, consecutive_timeouts_ == 1);
  ca_state_ = CaState::loss;
  recover_ = snd_nxt_;
  ecn_recover_ = snd_nxt_;
  dupacks_ = 0;
  reno_sacked_ = 0;
  // Everything not SACKed is presumed lost and goes again, in order.
  for (size_t i = 0; i < scoreboard_.size(); ++i) {
    Seg& s = scoreboard_[i];
    if (s.sacked) continue;
    if (s.lost && s.retrans) {
      s.retrans = false;
      retrans_bytes_ -= s.len();
      ++lost_unsent_;
    } else {
      seg_mark_lost(s);
    }
  }
  fast_rtx_pending_ = true;
  if (ecn_ok_) cwr_pending_ = true;
  rtt_.backoff();
  rto_timer_.arm_after(rtt_.rto());
  kick();
}

void TcpConnection::await_peer(bool on) {
  if (on == awaiting_peer_) return;
  awaiting_peer_ = on;
  if (on) {
    await_timer_.arm_after(give_up_time());
  } else {
    await_timer_.stop();
  }
}

Time TcpConnection::give_up_time() const {
  Time total, rto = rtt_.rto();
  for (uint32_t i = 0; i <= cfg_.max_retries; ++i) {
    total = total + rto;
    rto = std::min(rto * 2, cfg_.max_rto);
  }
  return total;
}

void TcpConnection::on_await() {
  if (awaiting_peer_) give_up();
}

// The connection failed (RFC 9293 3.8.3, R2 reached): a synchronized
// connection tells the peer with a RST; then it is closed.
void TcpConnection::give_up() {
  if (state_ == TcpState::closed) return;
  if (state_ != TcpState::listen && state_ != TcpState::syn_sent) {
    TcpHeader h;
    h.seq = snd_seq(snd_nxt_);
    h.flags = tcp_flag::kRst | tcp_flag::kAck;
    h.ack = rcv_seq(rcv_nxt_);
    queue_ctrl(h);
  }
  finish(TcpCloseReason::timeout);
  kick();
}

void TcpConnection::on_delack() {
  ack_now_ = true;
  kick();
}

bool TcpConnection::window_blocked() const {
  if (!data_state() || snd_una_ != snd_nxt_ || fin_sent_) return false;
  if (snd_nxt_ >= sndq_.end_offset()) return false;  // nothing waits
  const size_t first = sndq_.record_length_at(snd_nxt_);
  return first > 0 && snd_una_ + snd_wnd_ < snd_nxt_ + first;
}

void TcpConnection::check_persist() {
  // RFC 9293 3.8.6.1: with data waiting, nothing in flight and a window too
  // small for the next record, probe the window on a backed-off timer.
  if (window_blocked()) {
    if (!persist_timer_.armed()) persist_timer_.arm_after(persist_interval());
  } else {
    persist_timer_.disarm();
    if (snd_una_ != snd_nxt_) persist_backoff_ = 0;
  }
}

Time TcpConnection::persist_interval() const {
  Time t = rtt_.rto();
  for (uint32_t i = 0; i < persist_backoff_ && t < cfg_.max_rto; ++i) t = t * 2;
  return std::min(t, cfg_.max_rto);
}

void TcpConnection::on_persist() {
  if (!window_blocked()) return;
  probe_pending_ = true;
  ++stats_.window_probes;
  ++persist_backoff_;
  persist_timer_.arm_after(persist_interval());
  kick();
}

}  // namespace rdmasim
