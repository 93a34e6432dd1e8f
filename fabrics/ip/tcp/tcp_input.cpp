// TcpConnection's input: an arriving segment through RFC 9293's checks
// (3.10.7), the ACK (window, RTT, loss recovery, congestion control, ECN)
// and the data (in order, out of order, FIN).
#include <algorithm>
#include <optional>

#include "fabrics/ip/tcp/tcp_connection.hpp"

namespace rdmasim {

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
  if (state_ == TcpState::closed) return;  // reset: data after release()
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

// RFC 9293 3.10.7.4, fifth: the ACK field. False: drop the rest of the segment.
bool TcpConnection::process_ack(const TcpHeader& h, bool has_data) {
  const int64_t ack_off = static_cast<int64_t>(snd_una_) + static_cast<int32_t>(h.ack - snd_seq(snd_una_));
  if (ack_off > static_cast<int64_t>(snd_nxt_)) {
    ack_now_ = true;  // RFC 9293: it acknowledges something not yet sent
    return false;
  }
  if (ack_off < static_cast<int64_t>(snd_una_)) return true;  // an old ACK: the data may still be new

  TcpLossRecovery::Ack ack;
  ack.newly_sacked = sack_ok_ ? recovery_.sack(h.options, snd_seq(snd_una_), sender()) : 0;
  ack.acked = static_cast<uint64_t>(ack_off) - snd_una_;
  ack.dup = ack.acked == 0 && !has_data && !(h.flags & (tcp_flag::kSyn | tcp_flag::kFin)) &&
            h.window == last_window_field_ && snd_nxt_ > snd_una_;

  // Window update (RFC 9293 3.10.7.4: SND.WL1 / SND.WL2 guard against old segments).
  if (seq_lt(snd_wl1_, h.seq) || (snd_wl1_ == h.seq && seq_le(snd_wl2_, h.ack))) {
    snd_wnd_ = uint64_t{h.window} << snd_wscale_;
    snd_wl1_ = h.seq;
    snd_wl2_ = h.ack;
  }
  last_window_field_ = h.window;
  const bool ece = ecn_ok_ && (h.flags & tcp_flag::kEce);

  if (ack.acked > 0) {
    take_cumulative_ack(static_cast<uint64_t>(ack_off), ack.acked);
  } else if (ack.dup) {
    ++stats_.dupacks_received;
    recovery_.duplicate_ack(sender());
  }

  react(AckSample{sim_.now(), ack.acked, ece, rtt_.srtt(), snd_una_, snd_nxt_, cwnd_limited_}, ack, ece);

  if (ack.acked > 0) {
    if (upper_) upper_->tcp_acked(acked_offset());
    if (fin_sent_ && snd_una_ == fin_off_ + 1) our_fin_acked();
  }
  return true;
}

// Everything before `ack_off` is acknowledged: the send buffer, the RTT
// and the retransmission timer move on.
void TcpConnection::take_cumulative_ack(uint64_t ack_off, uint64_t acked) {
  const std::optional<Time> sample = recovery_.cumulative_ack(ack_off, acked, sim_.now(), smss_);
  const uint64_t data_end = sndq_.end_offset();
  stats_.bytes_acked += std::min<uint64_t>(ack_off, data_end) - std::min(snd_una_, data_end);
  snd_una_ = ack_off;
  sndq_.release_before(std::min(snd_una_, data_end));
  consecutive_timeouts_ = 0;
  persist_backoff_ = 0;
  if (sample) rtt_.sample(*sample);
  // RFC 6298 5.2 / 5.3.
  if (snd_una_ == snd_nxt_) {
    rto_timer_.disarm();
  } else {
    rto_timer_.arm_after(rtt_.rto());
  }
}

// What the ACK means for the sending rate: loss recovery first; with no
// loss to act on, ECN-Echo (RFC 3168 6.1.2) or the congestion controller.
void TcpConnection::react(const AckSample& a, const TcpLossRecovery::Ack& ack, bool ece) {
  switch (recovery_.on_ack(a, ack, sender(), sim_.now())) {
    case TcpLossRecovery::Outcome::entered_recovery:
      ecn_recover_ = snd_nxt_;  // RFC 3168 6.1.2: one reduction per window, loss or mark
      if (ecn_ok_) cwr_pending_ = true;
      ++stats_.fast_retransmits;
      return;
    case TcpLossRecovery::Outcome::handled:
      return;
    case TcpLossRecovery::Outcome::open:
      break;
  }
  if (ece && snd_una_ >= ecn_recover_ && snd_nxt_ > snd_una_) {
    // RFC 3168 6.1.2: react to ECN-Echo at most once per window of data.
    cc_.on_ecn_ack(a, snd_nxt_ - snd_una_);
    ecn_recover_ = snd_nxt_;
    cwr_pending_ = true;
    ++stats_.ecn_reductions;
  } else {
    cc_.on_ack(a);
  }
}

void TcpConnection::process_data(Packet& p, const TcpHeader& h, size_t hlen, size_t payload, bool ce) {
  if (payload == 0) return;
  if (state_ != TcpState::established && state_ != TcpState::fin_wait_1 && state_ != TcpState::fin_wait_2)
    return;
  if (peer_fin_seen_ && rcv_nxt_ > peer_fin_off_) return;

  if (ecn_ok_) {
    if (cc_.kind() == CongestionControl::dctcp) {
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
  if (released_) {
    abort();
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

}  // namespace rdmasim
