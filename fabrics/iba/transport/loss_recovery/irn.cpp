#include "fabrics/iba/transport/loss_recovery/irn.hpp"

#include <algorithm>

namespace rdmasim {

// ---------------------------------------------------------------- PsnBitmap

PsnBitmap::PsnBitmap(uint32_t capacity, uint32_t base)
    : cap_(std::max<uint32_t>(1, capacity)), base_(base & kPsnMask), bits_((cap_ + 63) / 64) {}

bool PsnBitmap::in_window(uint32_t psn) const {
  const int32_t d = psn_diff(psn, base_);
  return d >= 0 && static_cast<uint32_t>(d) < cap_;
}

bool PsnBitmap::test(uint32_t psn) const {
  if (!in_window(psn)) return false;
  const size_t s = slot(psn);
  return (bits_[s / 64] >> (s % 64)) & 1u;
}

bool PsnBitmap::set(uint32_t psn) {
  if (!in_window(psn)) return false;
  const size_t s = slot(psn);
  bits_[s / 64] |= uint64_t{1} << (s % 64);
  return true;
}

void PsnBitmap::advance_to(uint32_t psn) {
  const int32_t d = psn_diff(psn, base_);
  if (d <= 0) return;
  if (static_cast<uint32_t>(d) >= cap_) {
    std::fill(bits_.begin(), bits_.end(), 0);
    head_ = 0;
  } else {
    for (uint32_t p = base_; p != (psn & kPsnMask); p = psn_add(p, 1)) {
      const size_t s = slot(p);
      bits_[s / 64] &= ~(uint64_t{1} << (s % 64));
    }
    head_ = static_cast<uint32_t>((head_ + static_cast<uint32_t>(d)) % cap_);
  }
  base_ = psn & kPsnMask;
}

std::optional<uint32_t> PsnBitmap::first_clear(uint32_t from, uint32_t to) const {
  for (uint32_t p = from & kPsnMask; psn_before(p, to); p = psn_add(p, 1))
    if (!test(p)) return p;
  return std::nullopt;
}

// ---------------------------------------------------------------- IrnSender

uint32_t irn_bdp_packets(const IrnConfig& c, DataRate line, uint32_t mtu) {
  if (c.bdp_packets) return c.bdp_packets;
  const long double bytes = static_cast<long double>(line.bps()) * c.base_rtt.count() / 8e12L;
  const auto packets = static_cast<uint64_t>((bytes + mtu - 1) / std::max<uint32_t>(1, mtu));
  return static_cast<uint32_t>(std::clamp<uint64_t>(packets, 1, 1u << 16));
}

IrnSender::IrnSender(const IrnConfig& c, uint32_t bdp_packets, uint32_t first_psn)
    : cfg_(&c), sacked_(bdp_packets, first_psn), retx_next_(first_psn), lost_end_(first_psn) {}

bool IrnSender::may_send_new(uint32_t next_psn) const {
  return static_cast<uint32_t>(std::max(0, psn_diff(next_psn, cumulative()))) < bdp_packets();
}

Time IrnSender::rto(uint32_t next_psn) const {
  const int32_t in_flight = psn_diff(next_psn, cumulative());
  return in_flight <= static_cast<int64_t>(cfg_->rto_low_packets) ? cfg_->rto_low : cfg_->rto_high;
}

void IrnSender::on_cumulative(uint32_t psn) {
  if (psn_diff(psn, cumulative()) <= 0) return;
  sacked_.advance_to(psn);
  if (psn_before(retx_next_, psn)) retx_next_ = psn;
  // Section 3.1: recovery ends with a cumulative ack past the recovery sequence.
  if (recovery_ && psn_diff(psn, recovery_psn_) > 0) recovery_ = false;
}

void IrnSender::on_nack(uint32_t cum, uint32_t sack, uint32_t next_psn) {
  on_cumulative(cum);
  sacked_.set(sack);
  // The NACK says `cum` is missing; with the SACK, everything below `sack` not acked is.
  uint32_t end = psn_add(cum, 1);
  if (psn_before(end, psn_add(sack, 1))) end = psn_add(sack, 1);
  if (!recovery_) {
    recovery_ = true;
    recovery_psn_ = psn_add(next_psn, -1);
    retx_next_ = cumulative();
    lost_end_ = end;
  } else if (psn_before(lost_end_, end)) {
    lost_end_ = end;
  }
}

void IrnSender::on_timeout(uint32_t next_psn) {
  recovery_ = true;
  recovery_psn_ = psn_add(next_psn, -1);
  retx_next_ = cumulative();
  lost_end_ = next_psn;
}

void IrnSender::restart_from(uint32_t psn) {
  recovery_ = false;
  retx_next_ = psn;
}

std::optional<uint32_t> IrnSender::next_retransmit() const {
  if (!recovery_) return std::nullopt;
  const uint32_t from = psn_before(retx_next_, cumulative()) ? cumulative() : retx_next_;
  return sacked_.first_clear(from, lost_end_);
}

void IrnSender::retransmitted(uint32_t psn, uint32_t span) {
  retx_next_ = psn_add(psn, std::max<uint32_t>(1, span));
}

// ---------------------------------------------------------------- IrnReadRx

bool IrnReadRx::ask_holes(uint32_t from, uint32_t to, std::deque<IrnReadAsk>& asks) {
  if (psn_before(from, asked_end)) from = asked_end;
  bool queued = false;
  while (psn_before(from, to)) {
    const std::optional<uint32_t> start = got.first_clear(from, to);
    if (!start) break;
    uint32_t end = psn_add(*start, 1);
    while (psn_before(end, to) && !got.test(end)) end = psn_add(end, 1);
    asks.push_back({first, *start, end});
    queued = true;
    from = end;
  }
  if (psn_before(asked_end, to)) asked_end = to & kPsnMask;
  return queued;
}

}  // namespace rdmasim
