// One TCP endpoint (RFC 9293), driven by the event engine, with the parts of
// modern TCP that decide how an RDMA-over-TCP fabric behaves:
//
//   - three-way handshake, orderly close (FIN, TIME-WAIT), reset;
//   - MSS from the MTU (RFC 9293 3.7.1), window scaling (RFC 7323 2);
//   - receive window that really limits the sender, receiver SWS avoidance
//     (RFC 9293 3.8.6.2.2), zero-window probes on a persist timer;
//   - delayed ACKs (RFC 5681 4.2), immediate duplicate ACKs with SACK
//     blocks (RFC 2018) for out-of-order data;
//   - RFC 6298 retransmission timer with Karn's rule and back-off;
//   - loss recovery: NewReno fast retransmit / fast recovery (RFC 6582), or
//     SACK-based recovery (RFC 6675) when both ends permit SACK, with the
//     sending rate during recovery set by PRR (RFC 6937);
//   - ECN (RFC 3168) and DCTCP's exact echo (RFC 8257 3.2);
//   - congestion control NewReno, CUBIC or DCTCP (congestion_control.hpp).
//
// Not modelled: timestamps (RFC 7323 3; the option is parsed, never sent),
// PAWS, urgent data, Nagle (an RNIC sends records at once), simultaneous
// close corner cases beyond RFC 9293's state diagram, F-RTO, TLP/RACK.
//
// Records. The upper layer (MPA) submits records of at most max_record()
// bytes; every segment carries whole records, several if they fit, so each
// FPDU travels in exactly one segment, retransmissions included (RFC 5044).
//
// Frames. Segments are Packets whose bytes start at the TCP header, with
// `headroom` bytes free in front for IP and Ethernet. The checksum field is
// left zero and meta.crc_pending set: tcp_fill_checksum() (fabrics/ip/wire/
// tcp.hpp) fills it when someone observes the frame. Arriving segments are
// handed over the same way; their checksums are not verified (the model does
// not corrupt bits).
//
// The code: tcp_connection.cpp (opening, closing, records), tcp_output.cpp
// (which segment next, building it), tcp_input.cpp (arrival: RFC 9293's
// checks, the ACK, the data), tcp_timers.cpp; loss recovery is a
// TcpLossRecovery of its own (loss_recovery.hpp).
//
// Output works in one of two ways: push (set_output: every segment is handed
// over as soon as it may go) or pull (set_wake + has_tx/next_tx: a NIC asks
// for the next segment when its port can take one, so ACK numbers and
// windows are as fresh as possible).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/engine.hpp"
#include "core/lazy_timer.hpp"
#include "core/packet.hpp"
#include "core/ring.hpp"
#include "core/units.hpp"
#include "fabrics/ip/tcp/congestion_control.hpp"
#include "fabrics/ip/tcp/loss_recovery.hpp"
#include "fabrics/ip/tcp/record_queue.hpp"
#include "fabrics/ip/tcp/rtt_estimator.hpp"
#include "fabrics/ip/tcp/tcp_config.hpp"
#include "fabrics/ip/wire/tcp.hpp"

namespace rdmasim {

// Who we are and who the peer is: the 4-tuple and the IP version.
struct TcpFlow {
  TcpPseudoHeader ip;  // src = local address, dst = remote address
  uint16_t local_port = 0;
  uint16_t remote_port = 0;

  TcpFlow reversed() const { return {ip.reversed(), remote_port, local_port}; }
  // ECMP entropy: the same for every segment of this direction.
  uint32_t hash() const;
};

// RFC 9293 3.3.2.
enum class TcpState : uint8_t {
  closed,
  listen,
  syn_sent,
  syn_received,
  established,
  fin_wait_1,
  fin_wait_2,
  close_wait,
  closing,
  last_ack,
  time_wait,
};
const char* to_string(TcpState s);

enum class TcpCloseReason : uint8_t { normal, reset, timeout };

struct TcpStats {
  uint64_t segments_sent = 0, segments_received = 0;
  uint64_t data_segments_sent = 0;  // segments carrying payload, retransmissions included
  uint64_t bytes_sent = 0;          // payload bytes, retransmissions included
  uint64_t bytes_acked = 0;         // payload bytes acknowledged (each once)
  uint64_t bytes_delivered = 0;     // in-order payload bytes handed to the upper layer
  uint64_t retransmits = 0;         // segments sent again
  uint64_t timeouts = 0;            // retransmission timer expirations
  uint64_t fast_retransmits = 0;    // loss recovery episodes entered on duplicate ACKs / SACK
  uint64_t dupacks_received = 0;
  uint64_t ecn_reductions = 0;  // window cuts on ECN-Echo
  uint64_t ce_received = 0;     // segments that arrived marked CE
  uint64_t window_probes = 0;
  uint64_t out_of_order = 0;        // data segments that arrived ahead of a hole
  uint64_t duplicate_segments = 0;  // data segments that carried nothing new
};

// What sits on top of a connection: the iWARP endpoint, or a test.
// Callbacks must not destroy the connection.
class TcpUpper {
 public:
  virtual ~TcpUpper() = default;
  virtual void tcp_established() {}
  // The next in-order bytes of the peer's stream. With auto_consume off the
  // upper layer calls consume() when it has room again.
  virtual void tcp_receive(std::span<const std::byte> bytes) = 0;
  // Everything before stream offset `acked` is acknowledged: its records are
  // gone from the send buffer, and there may be room for more.
  virtual void tcp_acked(uint64_t /*acked*/) {}
  virtual void tcp_peer_closed() {}  // FIN received: nothing more will arrive
  virtual void tcp_closed(TcpCloseReason) {}
};

// A segment ready to leave, and whether its IP header must say ECT(0).
struct TcpTx {
  Packet packet;
  bool ect = false;
  explicit operator bool() const { return static_cast<bool>(packet); }
};

class TcpConnection {
 public:
  using Output = std::function<void(Packet, bool ect)>;

  TcpConnection(Simulator& sim, PacketPool& pool, const TcpEndpointConfig& cfg, const TcpFlow& flow,
                uint32_t iss);
  ~TcpConnection();
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;

  void set_upper(TcpUpper* u) { upper_ = u; }
  void set_output(Output out) { output_ = std::move(out); }
  void set_wake(std::function<void()> wake) { wake_ = std::move(wake); }

  // Opening and closing (RFC 9293 3.10.1-3.10.4).
  void connect();  // active open: SYN now
  void listen();   // passive open: wait for the peer's SYN
  void close();    // FIN after every queued record
  void abort();    // RST now, and closed
  // close(2) by an owner that reads no more (siw's sock_release of its
  // socket): a FIN as close(), and new data arriving after it is answered
  // with a RST, the connection dropped (Linux's tcp_rcv_state_process in
  // FIN-WAIT: TCPAbortOnData), as data nobody will read.
  void release() {
    released_ = true;
    close();
  }

  // Arriving segment (bytes from the TCP header on); `ce` is true when the
  // IP header carried Congestion Experienced.
  void receive(Packet p, bool ce = false);

  // Pull mode.
  bool has_tx() const { return pick() != Tx::none; }
  TcpTx next_tx();

  // Records. max_record() is the send MSS once established.
  size_t max_record() const { return smss_; }
  // Room for a record of n bytes, written in place; empty when the send
  // buffer is full, n > max_record(), or the connection cannot send.
  std::span<std::byte> reserve(size_t n);
  // The reserved record is complete; `solo` keeps it alone in its segment.
  void commit(bool solo = false);
  bool send(std::span<const std::byte> record, bool solo = false);
  // Stream offset at which the next record will start (0 = first byte after the SYN).
  uint64_t stream_end() const { return sndq_.end_offset(); }
  uint64_t acked_offset() const { return snd_una_ > sndq_.end_offset() ? sndq_.end_offset() : snd_una_; }

  // Acknowledge what has just arrived now rather than after the delayed-ACK
  // timer: for an upper layer that knows a message ended (an RNIC sees the
  // DDP Last flag) and whose peer waits for the ACK to complete it. Call it
  // from tcp_receive.
  void ack_now() {
    ack_now_ = true;
    kick();
  }
  // The upper layer waits for the peer (its MPA startup frame, the responses
  // to a Read): while `on`, a peer that sends nothing for give_up_time() ends
  // the connection with TcpCloseReason::timeout (RST when synchronized), as
  // our own retransmissions would end it after max_retries (RFC 9293 3.8.3,
  // R2). A silent peer then fails the waiter within the same limit as a
  // silent path fails the sender; an idle connection nobody waits on stays.
  void await_peer(bool on);
  // How long TCP retransmits before giving up: every RTO from the current
  // one, doubled up to max_rto, max_retries + 1 times (RFC 6298 5.5).
  Time give_up_time() const;

  // Receive buffer accounting (the window really limits the sender).
  void set_auto_consume(bool on) { auto_consume_ = on; }
  void consume(size_t n);
  size_t unconsumed() const { return unconsumed_; }

  TcpState state() const { return state_; }
  const TcpFlow& flow() const { return flow_; }
  const TcpEndpointConfig& config() const { return cfg_; }
  const TcpStats& stats() const { return stats_; }
  uint64_t cwnd() const { return cc_.cwnd(); }
  uint64_t ssthresh() const { return cc_.ssthresh(); }
  const CongestionController& congestion() const { return cc_; }
  Time srtt() const { return rtt_.srtt(); }
  Time rto() const { return rtt_.rto(); }
  uint64_t send_window() const { return snd_wnd_; }  // peer's advertised window, scaled
  uint64_t bytes_in_flight() const { return pipe(); }
  bool sack_enabled() const { return sack_ok_; }
  bool ecn_enabled() const { return ecn_ok_; }
  uint8_t send_window_scale() const { return snd_wscale_; }
  uint8_t receive_window_scale() const { return rcv_wscale_; }
  uint32_t local_mss() const { return local_mss_; }
  uint32_t iss() const { return iss_; }
  uint32_t irs() const { return irs_; }

  // Fills the checksum of a segment this connection sent (bytes from the TCP
  // header on), over the pseudo-header of its own addresses.
  void seal(std::span<std::byte> segment) const { tcp_fill_checksum(segment, flow_.ip); }

 private:
  enum class Tx : uint8_t { none, ctrl, syn, retransmit, data, fin, probe, ack };
  using Seg = TcpLossRecovery::Seg;
  // Out-of-order data held until the hole before it fills.
  struct OooSeg {
    uint64_t start = 0, end = 0;  // stream offsets of the peer's stream
    Packet packet;
    uint32_t data_at = 0;  // byte in packet where `start` lies
    uint64_t arrival = 0;  // for SACK block order (RFC 2018 4)
  };

  // Sequence numbers <-> stream offsets. Offset 0 is the byte after the SYN.
  uint32_t snd_seq(uint64_t off) const { return iss_ + 1 + static_cast<uint32_t>(off); }
  uint64_t snd_off(uint32_t seq) const { return snd_una_ + static_cast<int32_t>(seq - snd_seq(snd_una_)); }
  uint32_t rcv_seq(uint64_t off) const { return irs_ + 1 + static_cast<uint32_t>(off); }
  uint64_t rcv_off(uint32_t seq) const { return rcv_nxt_ + static_cast<int32_t>(seq - rcv_seq(rcv_nxt_)); }

  // Transmission.
  Tx pick() const;
  bool data_state() const;
  size_t new_data_length() const;
  bool fin_ready() const;
  uint64_t pipe() const;
  TcpTx build(Tx what);
  TcpHeader base_header(uint32_t seq) const;
  Packet make_packet(const TcpHeader& h, uint64_t data_off, size_t data_len);
  void fill_ack_fields(TcpHeader& h);
  void on_ack_sent();
  void kick();
  void queue_ctrl(TcpHeader h);
  TcpOptions syn_options(bool syn_ack) const;
  uint8_t our_wscale() const;
  uint16_t window_field();
  void update_cwnd_limited();
  void arm_rto_if_needed();

  // Arrival.
  void receive_segment(Packet& p, const TcpHeader& h, size_t hlen, size_t payload, bool ce);
  void receive_listen(const TcpHeader& h);
  void receive_syn_sent(const TcpHeader& h);
  void receive_closed(const TcpHeader& h, size_t payload);
  void take_syn_options(const TcpHeader& h);
  void become_established();
  bool process_ack(const TcpHeader& h, bool has_data);  // false: drop the rest of the segment
  void take_cumulative_ack(uint64_t ack_off, uint64_t acked);
  void react(const AckSample& a, const TcpLossRecovery::Ack& ack, bool ece);
  TcpLossRecovery::Sender sender() const { return {snd_una_, snd_nxt_, smss_, sack_ok_}; }
  void process_data(Packet& p, const TcpHeader& h, size_t hlen, size_t payload, bool ce);
  void schedule_ack(size_t n);
  void deliver(std::span<const std::byte> bytes);
  void insert_ooo(Packet& p, uint64_t start, uint64_t end, uint32_t data_at);
  void drain_ooo();
  void fill_sack_blocks(TcpOptions& o) const;
  void maybe_take_fin();
  void our_fin_acked();

  // Timers.
  static void on_rto_cb(void* self) { static_cast<TcpConnection*>(self)->on_rto(); }
  static void on_delack_cb(void* self) { static_cast<TcpConnection*>(self)->on_delack(); }
  static void on_persist_cb(void* self) { static_cast<TcpConnection*>(self)->on_persist(); }
  static void on_timewait_cb(void* self) { static_cast<TcpConnection*>(self)->on_timewait(); }
  static void on_await_cb(void* self) { static_cast<TcpConnection*>(self)->on_await(); }
  void on_rto();
  void on_delack();
  void on_persist();
  void on_timewait();
  void on_await();
  void give_up();
  bool window_blocked() const;
  void check_persist();
  Time persist_interval() const;
  void enter_time_wait();
  void finish(TcpCloseReason why);

  Simulator& sim_;
  PacketPool& pool_;
  TcpEndpointConfig cfg_;
  TcpFlow flow_;
  uint32_t flow_hash_;
  TcpUpper* upper_ = nullptr;
  Output output_;
  std::function<void()> wake_;
  bool in_kick_ = false;
  bool in_receive_ = false;

  TcpState state_ = TcpState::closed;
  uint32_t local_mss_;
  uint32_t smss_;     // send MSS: min(ours, the peer's)
  uint32_t rcv_mss_;  // largest segment seen from the peer (RFC 1122 4.2.3.2 "full-sized")

  // Send side (RFC 9293 3.3.1), as stream offsets.
  uint32_t iss_;
  uint64_t snd_una_ = 0, snd_nxt_ = 0;
  uint64_t snd_wnd_ = 0;
  uint32_t snd_wl1_ = 0, snd_wl2_ = 0;
  uint16_t last_window_field_ = 0;  // peer's raw window, for the duplicate-ACK test
  uint8_t snd_wscale_ = 0, rcv_wscale_ = 0;
  bool wscale_ok_ = false, sack_ok_ = false, ecn_ok_ = false;
  bool syn_pending_ = false;
  uint16_t syn_transmissions_ = 0;
  Time syn_sent_at_;
  bool fin_queued_ = false, fin_sent_ = false;
  uint64_t fin_off_ = 0;  // stream offset of our FIN
  RecordQueue sndq_;

  // Congestion and loss recovery.
  CongestionController cc_;
  TcpLossRecovery recovery_{cc_};  // the scoreboard; after cc_, which it refers to
  RttEstimator rtt_;
  uint32_t consecutive_timeouts_ = 0;
  bool cwnd_limited_ = false;
  uint64_t ecn_recover_ = 0;  // no second ECN reduction before this is acked
  bool cwr_pending_ = false;  // set CWR on the next new data segment
  uint32_t persist_backoff_ = 0;
  bool probe_pending_ = false;

  // Receive side.
  uint32_t irs_ = 0;
  uint64_t rcv_nxt_ = 0;
  uint64_t rcv_adv_ = 0;  // right edge of the window we advertised
  bool peer_fin_seen_ = false, peer_fin_taken_ = false;
  bool released_ = false;  // release(): data that arrives after is reset
  uint64_t peer_fin_off_ = 0;
  std::vector<OooSeg> ooo_;
  uint64_t ooo_arrivals_ = 0;
  size_t unconsumed_ = 0;
  bool auto_consume_ = true;
  bool ack_now_ = false;
  size_t unacked_bytes_ = 0;  // received since our last ACK
  bool ce_state_ = false;     // DCTCP: CE mark of the last data segment (RFC 8257 3.2)
  bool ece_echo_ = false;     // RFC 3168: echo ECE until the peer says CWR
  Ring<TcpTx> ctrl_;          // control segments built ahead of their turn

  bool awaiting_peer_ = false;

  LazyTimer rto_timer_, delack_timer_, persist_timer_, timewait_timer_, await_timer_;
  TcpStats stats_;
};

}  // namespace rdmasim
