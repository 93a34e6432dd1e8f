// Loss recovery of one TCP sender: the retransmission scoreboard (which
// segments are in flight, SACKed, lost, retransmitted), the recovery state
// (open, fast recovery, loss after a timeout) and the window during
// recovery. NewReno fast retransmit / fast recovery (RFC 5681 3.2, RFC
// 6582), SACK-based recovery (RFC 6675) when both ends permit SACK, and PRR
// (RFC 6937) for the sending rate during recovery.
//
// TcpConnection's output asks it what to retransmit and tells it what was
// sent; its input feeds it each ACK; its retransmission timer tells it of a
// timeout. The congestion controller decides the window; recovery tells it
// of losses and sets the window PRR allows.
#pragma once

#include <cstdint>
#include <optional>

#include "core/ring.hpp"
#include "core/units.hpp"
#include "fabrics/ip/tcp/congestion_control.hpp"
#include "fabrics/ip/wire/tcp.hpp"

namespace rdmasim {

class TcpLossRecovery {
 public:
  // A segment of the send stream in flight.
  struct Seg {
    uint64_t start = 0, end = 0;  // stream offsets; a FIN counts one past the data
    Time sent;
    uint16_t transmissions = 0;
    bool fin = false;
    bool sacked = false;
    bool lost = false;
    bool retrans = false;  // retransmitted since it was marked lost
    uint64_t len() const { return end - start; }
  };
  enum class State : uint8_t { open, recovery, loss };

  // The sender's window edges and options when an ACK arrives.
  struct Sender {
    uint64_t snd_una = 0, snd_nxt = 0;
    uint32_t smss = 0;
    bool sack = false;  // both ends permitted SACK
  };
  // What one ACK said.
  struct Ack {
    uint64_t acked = 0;         // bytes newly acknowledged cumulatively
    uint64_t newly_sacked = 0;  // bytes newly SACKed (sack())
    bool dup = false;           // a duplicate ACK (RFC 5681 2)
  };
  enum class Outcome : uint8_t {
    open,              // no loss to act on: the sender's window may grow (or react to ECN)
    entered_recovery,  // fast retransmit now (RFC 5681 3.2 step 4)
    handled,           // recovery or loss took it
  };

  explicit TcpLossRecovery(CongestionController& cc) : cc_(cc), scoreboard_(256) {}

  State state() const { return state_; }
  bool empty() const { return scoreboard_.empty(); }

  // ---- output ----

  // RFC 6675 SetPipe(): bytes believed in the network, of `in_flight` sent
  // and not cumulatively acknowledged. Without SACK, duplicate ACKs stand in
  // for SACKed segments (as Linux does for NewReno).
  uint64_t pipe(uint64_t in_flight) const;
  // RFC 6675 NextSeg(): the first lost segment not yet sent again, if any.
  Seg* next_retransmit();
  const Seg* next_retransmit() const { return const_cast<TcpLossRecovery*>(this)->next_retransmit(); }
  // May `s` go now? The first retransmission of a recovery ignores cwnd.
  bool may_retransmit(const Seg& s, uint64_t pipe) const {
    return fast_rtx_pending_ || pipe + s.len() <= cc_.cwnd();
  }
  // `s` (next_retransmit()) is being sent again at `now`.
  void retransmitted(Seg& s, Time now);
  // A new segment was sent; `prr` counts it as PRR's data sent during
  // recovery (a bare FIN is not counted).
  void sent(const Seg& s, bool prr = true);

  // ---- input ----

  // Marks the segments the SACK blocks cover; returns the bytes newly SACKed.
  // `una_seq` is the sequence number of snd_una.
  uint64_t sack(const TcpOptions& o, uint32_t una_seq, const Sender& snd);
  // Everything before `ack_off` is acknowledged: those segments leave the
  // scoreboard. Returns an RTT sample by Karn's rule (segments sent once).
  std::optional<Time> cumulative_ack(uint64_t ack_off, uint64_t acked, Time now, uint32_t smss);
  // A duplicate ACK.
  void duplicate_ack(const Sender& snd);
  // The recovery state machine for one ACK, after the above.
  Outcome on_ack(const AckSample& a, const Ack& ack, const Sender& snd, Time now);
  // Data sent before the last recovery (or timeout) is still in flight.
  bool before_recover(uint64_t snd_una) const { return snd_una < recover_; }

  // ---- timer ----

  // The retransmission timer expired (RFC 5681 3.1, RFC 6298 5.4-5.6): a
  // loss state until `snd_nxt` is acknowledged; everything not SACKed is
  // presumed lost and goes again, in order.
  void timeout(uint64_t snd_nxt);

 private:
  void enter_recovery(const Sender& snd, Time now);
  void update_prr(uint64_t delivered, const Sender& snd);
  void mark_lost_by_sack(uint32_t smss);
  void mark_sacked(Seg& s);
  void mark_lost(Seg& s);
  void forget(const Seg& s);

  CongestionController& cc_;
  Ring<Seg> scoreboard_;
  uint64_t sacked_bytes_ = 0, lost_bytes_ = 0, retrans_bytes_ = 0;
  size_t lost_unsent_ = 0;    // lost segments not yet retransmitted
  uint64_t reno_sacked_ = 0;  // duplicate ACKs counted as delivered segments without SACK
  State state_ = State::open;
  uint64_t recover_ = 0;  // RFC 6582 "recover": snd_nxt when recovery began
  uint32_t dupacks_ = 0;
  bool fast_rtx_pending_ = false;  // the first retransmission ignores cwnd
  uint64_t prr_delivered_ = 0, prr_out_ = 0, recover_fs_ = 0;
};

}  // namespace rdmasim
