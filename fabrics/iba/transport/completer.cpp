// The completer (IBA 9.7.6, the requester side of acknowledgement):
// consumes ACKs, NAKs, READ responses and atomic ACKs, completes WQEs in
// order, runs the local ACK timer and the RNR wait, and spends the retry
// budgets.
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "fabrics/iba/opcodes.hpp"
#include "fabrics/iba/transport/iba_qp.hpp"
#include "fabrics/iba/transport/loss_recovery/loss_recovery.hpp"
#include "fabrics/iba/transport/psn.hpp"
#include "fabrics/iba/transport/qp_common.hpp"
#include "fabrics/iba/wire/aeth.hpp"

namespace rdmasim {

using namespace iba_qp;
using verbs::MemoryRegion;
using verbs::SendWqe;

void IbaQp::arm_retry_timer() {
  const Time t = recovery_->retry_timeout(*this);
  const bool outstanding = !sq_.empty() && sq_.front().started;
  if (t == Time::max() || !outstanding) {
    retry_timer_.stop();
    return;
  }
  retry_timer_.arm_after(t);
}

// Forward progress restores both retry budgets (IBA 9.7.6.1.3, 9.7.5.2.8).
void IbaQp::note_progress() {
  comp_.retry_left = attr_.retry_cnt;
  comp_.rnr_left = attr_.rnr_retry;
  comp_.retrying = false;
  recovery_->forward_progress(*this);
  arm_retry_timer();
}

// A response of the READ or atomic at `psn` went missing (IBA 9.7.6.1.4),
// seen by a later response or ACK: request it again, once, as rxe does; the
// responses behind the gap are dropped meanwhile. The retry consumes
// retry_cnt like any other.
void IbaQp::retry_from(uint32_t psn) {
  if (comp_.retrying && comp_.retry_psn == psn) return;
  ++stats_.seq_naks_received;
  if (spend_retry()) go_back_to(psn);
}

// One transport retry out of retry_cnt; false when none is left (the oldest
// WQE then fails with IBV_WC_RETRY_EXC_ERR and the QP goes to ERR).
bool IbaQp::spend_retry() {
  if (comp_.retry_left == 0) {
    fail_front(IBV_WC_RETRY_EXC_ERR);
    return false;
  }
  --comp_.retry_left;
  return true;
}

void IbaQp::on_retry_timeout() {
  if (!sending() || sq_.empty() || !sq_.front().started) return;
  ++stats_.timeouts;
  if (cc_) cc_->on_timeout(nic_.sim().now());
  if (!recovery_->timed_out(*this)) return;  // retry_cnt spent: the QP failed
  arm_retry_timer();
}

// Completes, in order, the SENDs and WRITEs that end before `psn`. A READ or
// atomic in the way has lost its response: it is requested again; nothing
// from it on counts as acknowledged.
void IbaQp::ack_through(uint32_t psn) {
  bool progress = false;
  while (!sq_.empty() && sq_.front().started) {
    SendWqe& w = sq_.front();
    if (is_read(w) || is_atomic(w)) {
      const uint32_t expected = next_response_psn(w);
      if (psn_diff(w.last_psn, psn) < 0) {
        if (is_read(w))
          recovery_->read_responses_missing(*this, w, expected);
        else
          retry_from(expected);
      }
      if (psn_diff(psn, expected) > 0) psn = expected;
      break;
    }
    if (psn_diff(w.last_psn, psn) >= 0) break;
    SendWqe done = std::move(w);
    sq_.pop_front();
    if (req_.wqe > 0) --req_.wqe;
    complete_send(done, IBV_WC_SUCCESS);
    progress = true;
  }
  if (psn_diff(psn, comp_.unacked_psn) > 0) {
    comp_.unacked_psn = psn;
    progress = true;
  }
  if (progress) note_progress();
}

// The PSN of the response READ `w` expects next (an atomic: its one response).
uint32_t IbaQp::next_response_psn(const SendWqe& w) const {
  return psn_add(w.first_psn, static_cast<int64_t>(w.done_bytes / mtu_bytes()));
}

// An ACK may also complete READs whose responses came before it out of
// order (IRN); under go-back-N a READ completes with its last response, and
// complete_reads finds none.
void IbaQp::on_ack(const IbaParsed& p) {
  ack_through(psn_add(p.h.psn, 1));
  complete_reads();
}

void IbaQp::on_read_response(const IbaParsed& p, const Payload& payload) {
  ack_through(p.h.psn);  // a response implicitly acknowledges what came before
  if (sq_.empty() || !sq_.front().started) return;
  if (!is_read(sq_.front()) || psn_diff(sq_.front().last_psn, p.h.psn) < 0) {
    recovery_->read_response_behind_head(*this, p, payload);
    return;
  }
  SendWqe& w = sq_.front();
  const uint32_t expected = next_response_psn(w);
  if (p.h.psn != expected) {
    // Beyond the expected PSN: a response went missing. Before it: a duplicate.
    if (psn_diff(p.h.psn, expected) > 0) recovery_->read_response_beyond(*this, w, p, payload, expected);
    return;
  }
  // Land the data in the local SGEs.
  if (!scatter(w.sges, w.done_bytes, payload)) {
    fail_front(IBV_WC_LOC_PROT_ERR);
    return;
  }
  w.done_bytes += payload.size();
  comp_.unacked_psn = psn_add(p.h.psn, 1);
  complete_reads();
  note_progress();
}

// Completes the READ at the head of the send queue once all its responses
// came, then each READ behind it whose responses all came too (placed out
// of order by IRN; under go-back-N a READ behind the head has none yet).
void IbaQp::complete_reads() {
  while (!sq_.empty() && sq_.front().started && is_read(sq_.front())) {
    SendWqe& f = sq_.front();
    recovery_->read_at_head(*this, f);
    if (f.done_bytes < f.length || comp_.unacked_psn != psn_add(f.last_psn, 1)) break;
    SendWqe finished = std::move(f);
    sq_.pop_front();
    if (req_.wqe > 0) --req_.wqe;
    --req_.rd_atomic_in_flight;
    recovery_->read_completed(finished.first_psn);
    complete_send(finished, IBV_WC_SUCCESS, static_cast<uint32_t>(finished.length));
    if (sending() && requester_ready()) nic_.wake(*this);
  }
}

void IbaQp::on_atomic_ack(const IbaParsed& p) {
  ack_through(p.h.psn);
  if (sq_.empty() || !sq_.front().started || !is_atomic(sq_.front()) || sq_.front().first_psn != p.h.psn)
    return;
  SendWqe w = std::move(sq_.front());
  sq_.pop_front();
  if (req_.wqe > 0) --req_.wqe;
  --req_.rd_atomic_in_flight;
  comp_.unacked_psn = psn_add(p.h.psn, 1);
  // The original remote value lands in the local buffer, in host byte order.
  if (!w.sges.empty()) {
    const ibv_sge& sge = w.sges.front();
    const MemoryRegion* mr = device_.mr_by_lkey(sge.lkey);
    if (!mr || mr->pd != &pd_ || !mr->contains(sge.addr, 8) || !(mr->access & IBV_ACCESS_LOCAL_WRITE)) {
      sq_.push_front(std::move(w));
      ++req_.rd_atomic_in_flight;
      fail_front(IBV_WC_LOC_PROT_ERR);
      return;
    }
    std::memcpy(mr->bytes(sge.addr, 8).data(), &p.h.orig, 8);
  }
  complete_send(w, IBV_WC_SUCCESS, 8);
  note_progress();
  if (sending() && requester_ready()) nic_.wake(*this);
}

void IbaQp::on_nak(const IbaParsed& p, const IrnExt* ext) {
  const uint8_t s = p.h.syndrome;
  if (is_rnr_nak(s)) {
    ++stats_.rnr_naks_received;
    ack_through(p.h.psn);
    // rnr_retry 7 means retry forever (IBA 9.7.5.2.8).
    if (attr_.rnr_retry != 7) {
      if (comp_.rnr_left == 0) {
        fail_front(IBV_WC_RNR_RETRY_EXC_ERR);
        return;
      }
      --comp_.rnr_left;
    }
    req_.rnr_wait = true;
    retry_timer_.stop();
    const uint32_t psn = p.h.psn;
    rnr_timer_ = nic_.sim().after(rnr_timer_duration(s), [this, psn] {
      rnr_timer_ = {};
      req_.rnr_wait = false;
      go_back_to(psn);
      arm_retry_timer();
    });
    return;
  }
  switch (s) {
    case kNakSeqError:  // go-back-N's, or IRN's NACK with its SACK
      recovery_->sequence_nak(*this, p, ext);
      return;
    case kNakInvalidRequest:
      ack_through(p.h.psn);
      fail_front(IBV_WC_REM_INV_REQ_ERR);
      return;
    case kNakRemoteAccess:
      ack_through(p.h.psn);
      fail_front(IBV_WC_REM_ACCESS_ERR);
      return;
    default:
      ack_through(p.h.psn);
      fail_front(IBV_WC_REM_OP_ERR);
      return;
  }
}

// The oldest WQE fails with `status`; the QP goes to the error state (an
// RC QP) or the send queue error state (UC, UD: receives go on) and every
// other send WQE is flushed (IBA 10.3.1, 11.6.2).
void IbaQp::fail_front(ibv_wc_status status) {
  if (!sq_.empty()) {
    SendWqe w = std::move(sq_.front());
    sq_.pop_front();
    w.signaled = true;  // errors always complete
    complete_send(w, status);
  }
  if (type() == IBV_QPT_RC)
    enter_error();
  else
    enter_send_queue_error();
}

}  // namespace rdmasim
