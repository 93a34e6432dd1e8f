// TcpConnection's timers: retransmission (RFC 6298), waiting for a silent
// peer, delayed ACK, persist (zero-window probes).
#include <algorithm>

#include "fabrics/ip/tcp/tcp_connection.hpp"

namespace rdmasim {

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
  recovery_.timeout(snd_nxt_);  // everything not SACKed goes again, in order
  ecn_recover_ = snd_nxt_;
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
