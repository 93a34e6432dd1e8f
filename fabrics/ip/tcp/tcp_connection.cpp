#include "fabrics/ip/tcp/tcp_connection.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace rdmasim {

namespace {

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

TcpConnection::TcpConnection(Simulator& sim, PacketPool& pool, const TcpEndpointConfig& cfg,
                             const TcpFlow& flow, uint32_t iss)
    : sim_(sim),
      pool_(pool),
      cfg_(cfg),
      flow_(flow),
      flow_hash_(flow.hash()),
      local_mss_(cfg.mss ? cfg.mss : cfg.mtu - (flow.ip.ipv6 ? 40 : 20) - TcpView::kLen),
      smss_(local_mss_),
      iss_(iss),
      sndq_(cfg.send_buffer),
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

}  // namespace rdmasim
