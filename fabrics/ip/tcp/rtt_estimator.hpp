// RFC 6298: the smoothed round-trip time, its variation and the
// retransmission timeout, with exponential back-off. Integer picoseconds
// throughout; the gains 1/8 and 1/4 are exact shifts.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/units.hpp"

namespace rdmasim {

class RttEstimator {
 public:
  RttEstimator(Time initial_rto, Time min_rto, Time max_rto)
      : min_rto_(min_rto), max_rto_(max_rto), base_rto_(clamp(initial_rto)) {}

  // RFC 6298 2.2 (first measurement) and 2.3 (later ones). The caller
  // follows Karn's rule: no samples from retransmitted segments.
  void sample(Time r) {
    if (!has_sample_) {
      srtt_ = r;
      rttvar_ = r / 2;
      has_sample_ = true;
    } else {
      const Time err = srtt_ > r ? srtt_ - r : r - srtt_;
      rttvar_ = rttvar_ - rttvar_ / 4 + err / 4;
      srtt_ = srtt_ - srtt_ / 8 + r / 8;
    }
    // RTO = SRTT + max(G, K*RTTVAR), K = 4; the clock granularity G is one
    // picosecond here, so the max is K*RTTVAR but for a zero variation.
    base_rto_ = clamp(srtt_ + std::max(Time::ps(1), rttvar_ * 4));
    backoff_ = 0;  // RFC 6298 5.7: a new sample ends the back-off
  }

  // RFC 6298 5.5: double the timer after it expires, up to the maximum.
  void backoff() {
    if (backoff_ < 30) ++backoff_;
  }
  uint32_t backoff_count() const { return backoff_; }

  Time rto() const {
    Time r = base_rto_;
    for (uint32_t i = 0; i < backoff_ && r < max_rto_; ++i) r = r * 2;
    return std::min(r, max_rto_);
  }
  bool has_sample() const { return has_sample_; }
  Time srtt() const { return srtt_; }
  Time rttvar() const { return rttvar_; }

 private:
  Time clamp(Time t) const { return std::clamp(t, min_rto_, max_rto_); }

  Time min_rto_, max_rto_;
  Time base_rto_;
  Time srtt_, rttvar_;
  bool has_sample_ = false;
  uint32_t backoff_ = 0;
};

}  // namespace rdmasim
