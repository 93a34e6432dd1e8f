// TcpConnection's output: which segment goes next (control, SYN,
// retransmission, new data, FIN, window probe, ACK) and building it.
#include <algorithm>

#include "fabrics/ip/tcp/tcp_connection.hpp"

namespace rdmasim {

namespace {

uint8_t auto_window_scale(uint32_t buffer) {
  uint8_t s = 0;
  while (s < 14 && (uint64_t{buffer} >> s) > 0xFFFF) ++s;
  return s;
}

}  // namespace

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

uint64_t TcpConnection::pipe() const { return recovery_.pipe(snd_nxt_ - snd_una_); }

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
    if (const Seg* s = recovery_.next_retransmit()) {
      if (recovery_.may_retransmit(*s, pipe())) return Tx::retransmit;
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
    const bool echo = cc_.kind() == CongestionControl::dctcp ? ce_state_ : ece_echo_;
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
  const bool ect = ecn_ok_ && cc_.kind() == CongestionControl::dctcp;
  ctrl_.push_back(TcpTx{make_packet(h, 0, 0), ect});
}

void TcpConnection::arm_rto_if_needed() {
  if (!rto_timer_.armed()) rto_timer_.arm_after(rtt_.rto());  // RFC 6298 5.1
}

TcpTx TcpConnection::build(Tx what) {
  const bool dctcp = cc_.kind() == CongestionControl::dctcp;
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
      Seg& s = *recovery_.next_retransmit();
      const size_t data_len = static_cast<size_t>(s.len() - (s.fin ? 1 : 0));
      TcpHeader h = base_header(snd_seq(s.start));
      h.flags = (data_len ? tcp_flag::kPsh : 0) | (s.fin ? tcp_flag::kFin : 0);
      fill_ack_fields(h);
      recovery_.retransmitted(s, sim_.now());
      ++stats_.retransmits;
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
      recovery_.sent(s);
      snd_nxt_ = s.end;
      if (fin) fin_sent_ = true;
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
      recovery_.sent(s, /*prr=*/false);
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

}  // namespace rdmasim
