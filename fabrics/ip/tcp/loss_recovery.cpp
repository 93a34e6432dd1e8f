#include "fabrics/ip/tcp/loss_recovery.hpp"

#include <algorithm>

namespace rdmasim {

// ---------------------------------------------------------------- output

uint64_t TcpLossRecovery::pipe(uint64_t in_flight) const {
  int64_t p = static_cast<int64_t>(in_flight) - static_cast<int64_t>(sacked_bytes_) -
              static_cast<int64_t>(lost_bytes_) + static_cast<int64_t>(retrans_bytes_) -
              static_cast<int64_t>(reno_sacked_);
  return p > 0 ? static_cast<uint64_t>(p) : 0;
}

TcpLossRecovery::Seg* TcpLossRecovery::next_retransmit() {
  if (lost_unsent_ == 0) return nullptr;
  for (size_t i = 0; i < scoreboard_.size(); ++i) {
    Seg& s = scoreboard_[i];
    if (s.lost && !s.retrans && !s.sacked) return &s;
  }
  return nullptr;
}

void TcpLossRecovery::retransmitted(Seg& s, Time now) {
  s.retrans = true;
  retrans_bytes_ += s.len();
  --lost_unsent_;
  ++s.transmissions;
  s.sent = now;
  if (state_ == State::recovery) prr_out_ += s.len();
  fast_rtx_pending_ = false;
}

void TcpLossRecovery::sent(const Seg& s, bool prr) {
  scoreboard_.push_back(s);
  if (prr && state_ == State::recovery) prr_out_ += s.len();
}

// ---------------------------------------------------------------- input

uint64_t TcpLossRecovery::sack(const TcpOptions& o, uint32_t una_seq, const Sender& snd) {
  uint64_t newly = 0;
  for (const SackBlock& b : o.sack_blocks()) {
    const int64_t l = static_cast<int64_t>(snd.snd_una) + static_cast<int32_t>(b.left - una_seq);
    const int64_t r = static_cast<int64_t>(snd.snd_una) + static_cast<int32_t>(b.right - una_seq);
    if (r <= l || r > static_cast<int64_t>(snd.snd_nxt) || r <= static_cast<int64_t>(snd.snd_una)) continue;
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
        mark_sacked(s);
      }
    }
  }
  if (newly > 0) mark_lost_by_sack(snd.smss);
  return newly;
}

std::optional<Time> TcpLossRecovery::cumulative_ack(uint64_t ack_off, uint64_t acked, Time now,
                                                    uint32_t smss) {
  // Karn's rule: time only segments sent once; take the newest one acked.
  std::optional<Time> sample;
  while (!scoreboard_.empty() && scoreboard_.front().end <= ack_off) {
    const Seg& s = scoreboard_.front();
    if (s.transmissions == 1 && !s.sacked) sample = now - s.sent;
    forget(s);
    scoreboard_.pop_front();
  }
  if (!scoreboard_.empty() && scoreboard_.front().start < ack_off) {
    Seg& s = scoreboard_.front();  // acknowledged in part: keep the rest
    const uint64_t cut = ack_off - s.start;
    if (s.sacked) {
      sacked_bytes_ -= cut;
    } else if (s.lost) {
      lost_bytes_ -= cut;
      if (s.retrans) retrans_bytes_ -= cut;
    }
    s.start = ack_off;
  }
  reno_sacked_ -= std::min(reno_sacked_, acked > smss ? acked - smss : 0);
  return sample;
}

void TcpLossRecovery::duplicate_ack(const Sender& snd) {
  ++dupacks_;
  if (!snd.sack && !scoreboard_.empty()) {
    const uint64_t out = snd.snd_nxt - snd.snd_una;
    const uint64_t head = scoreboard_.front().len();
    reno_sacked_ = std::min(reno_sacked_ + snd.smss, out > head ? out - head : 0);
  }
}

TcpLossRecovery::Outcome TcpLossRecovery::on_ack(const AckSample& a, const Ack& ack, const Sender& snd,
                                                 Time now) {
  const uint64_t delivered = ack.acked + ack.newly_sacked + (ack.dup && !snd.sack ? snd.smss : 0);
  switch (state_) {
    case State::open: {
      if (ack.acked > 0) dupacks_ = 0;
      const bool head_lost = !scoreboard_.empty() && scoreboard_.front().lost;
      // RFC 5681 3.2 / RFC 6582 3.2 step 2: three duplicate ACKs, unless they
      // belong to data sent before the last recovery; RFC 6675 5: or SACK
      // shows the first segment lost.
      if ((dupacks_ >= 3 || (snd.sack && head_lost)) && snd.snd_una >= recover_ &&
          snd.snd_nxt > snd.snd_una) {
        enter_recovery(snd, now);
        update_prr(delivered, snd);
        cc_.observe_ack(a);
        return Outcome::entered_recovery;
      }
      return Outcome::open;
    }
    case State::recovery:
      if (snd.snd_una >= recover_) {
        // RFC 6582 3.2 step 3 / RFC 6937: a full ACK ends recovery.
        state_ = State::open;
        cc_.end_recovery();
        reno_sacked_ = 0;
        dupacks_ = 0;
        cc_.observe_ack(a);
      } else {
        // RFC 6582 3.2 step 4: a partial ACK means the next segment is lost too.
        if (ack.acked > 0 && !scoreboard_.empty()) {
          Seg& s = scoreboard_.front();
          if (!s.sacked && !s.lost) mark_lost(s);
        }
        update_prr(delivered, snd);
        cc_.observe_ack(a);
      }
      return Outcome::handled;
    case State::loss:
      if (snd.snd_una >= recover_) state_ = State::open;
      cc_.on_ack(a);  // slow start again after a timeout
      return Outcome::handled;
  }
  return Outcome::handled;
}

void TcpLossRecovery::enter_recovery(const Sender& snd, Time now) {
  state_ = State::recovery;
  recover_ = snd.snd_nxt;
  const uint64_t flight = snd.snd_nxt - snd.snd_una;
  cc_.on_loss(now, flight);
  prr_delivered_ = prr_out_ = 0;
  recover_fs_ = flight;
  if (!scoreboard_.empty()) {
    Seg& s = scoreboard_.front();
    if (!s.sacked && !s.lost) mark_lost(s);
  }
  fast_rtx_pending_ = true;  // RFC 5681 3.2 step 4: retransmit now
}

// RFC 6937 PRR with slow-start reduction bound: spread the window reduction
// over the recovery round trip instead of pausing, then refill to ssthresh.
void TcpLossRecovery::update_prr(uint64_t delivered, const Sender& snd) {
  prr_delivered_ += delivered;
  const uint64_t p = pipe(snd.snd_nxt - snd.snd_una);
  const uint64_t ss = cc_.ssthresh();
  int64_t sndcnt;
  if (p > ss) {
    const unsigned __int128 num = static_cast<unsigned __int128>(prr_delivered_) * ss;
    const uint64_t fs = std::max<uint64_t>(recover_fs_, 1);
    sndcnt = static_cast<int64_t>((num + fs - 1) / fs) - static_cast<int64_t>(prr_out_);
  } else {
    const int64_t gap = static_cast<int64_t>(prr_delivered_) - static_cast<int64_t>(prr_out_);
    sndcnt = std::min<int64_t>(static_cast<int64_t>(ss - p),
                               std::max<int64_t>(gap, static_cast<int64_t>(delivered)) + snd.smss);
  }
  if (sndcnt < 0) sndcnt = 0;
  cc_.set_cwnd(p + static_cast<uint64_t>(sndcnt));
}

// RFC 6675 IsLost(): a segment is lost once DupThresh (3) segments, or more
// than (DupThresh - 1) * SMSS bytes, above it have been SACKed.
void TcpLossRecovery::mark_lost_by_sack(uint32_t smss) {
  uint32_t count = 0;
  uint64_t bytes = 0;
  for (size_t i = scoreboard_.size(); i-- > 0;) {
    Seg& s = scoreboard_[i];
    if (s.sacked) {
      ++count;
      bytes += s.len();
    } else if (!s.lost && (count >= 3 || bytes > 2ull * smss)) {
      mark_lost(s);
    }
  }
}

// ---------------------------------------------------------------- timer

void TcpLossRecovery::timeout(uint64_t snd_nxt) {
  state_ = State::loss;
  recover_ = snd_nxt;
  dupacks_ = 0;
  reno_sacked_ = 0;
  for (size_t i = 0; i < scoreboard_.size(); ++i) {
    Seg& s = scoreboard_[i];
    if (s.sacked) continue;
    if (s.lost && s.retrans) {
      s.retrans = false;
      retrans_bytes_ -= s.len();
      ++lost_unsent_;
    } else {
      mark_lost(s);
    }
  }
  fast_rtx_pending_ = true;
}

// ---------------------------------------------------------------- scoreboard

void TcpLossRecovery::mark_sacked(Seg& s) {
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

void TcpLossRecovery::mark_lost(Seg& s) {
  if (s.sacked || s.lost) return;
  s.lost = true;
  s.retrans = false;
  lost_bytes_ += s.len();
  ++lost_unsent_;
}

void TcpLossRecovery::forget(const Seg& s) {
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

}  // namespace rdmasim
