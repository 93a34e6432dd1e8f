// The NVMe over Fabrics host's error recovery decisions, as Linux's nvme-core
// and the fabrics drivers (nvme-rdma, nvme-tcp) make them:
//
// - a command not completed within its queue's timeout (nvme_core's
//   io_timeout on an I/O queue, admin_timeout on the admin queue) has the
//   controller recover when it is live (nvme_rdma_timeout: error recovery);
//   while it connects, the command completes at once, aborted by the host
//   (nvme_rdma_complete_timed_out), and the connect fails;
// - a command cancelled by the recovery's teardown completes with Command
//   Aborted By Host (nvme_cancel_request) and, having no DNR, is sent again
//   after the reconnect unless it has been `max_retries` times already
//   (nvme_decide_disposition); a completion with DNR set is final;
// - a failed reconnect is tried again after reconnect_delay while fewer than
//   ctrl_loss_tmo / reconnect_delay (rounded up) attempts were made
//   (nvmf_should_reconnect, opts->max_reconnects); then the controller is
//   removed. A negative ctrl_loss_tmo (-1) has it reconnect for ever
//   (max_reconnects -1);
// - with fast_io_fail_tmo set (not negative), that long after the
//   controller left live (nvme_start_failfast_work on RESETTING to
//   CONNECTING) what waits for the reconnect fails with Host Path Error
//   (nvme_failfast_work, nvmf_fail_nonready_command), and so does whatever
//   the teardown cancels after that.
// - keep-alive (nvme_keep_alive_work): while live, a Keep Alive on the admin
//   queue every kato / 2 (nvme_keep_alive_work_period without TBKAS), whose
//   timeout is kato (its request's rq->timeout).
#pragma once

#include <cstdint>

#include "core/units.hpp"
#include "topologies/storage_config.hpp"
#include "workloads/nvme/wire/completion.hpp"

namespace rdmasim::nvme {

// Command Aborted By Host: path related status (SCT 3), NVME_SC_HOST_ABORTED_CMD.
inline constexpr uint8_t kPathStatus = 3;
inline constexpr uint8_t kHostAbortedCommand = 0x71;

// A completion the host makes for command `cid` with path related status `sc`.
inline Completion path_status(uint16_t cid, uint8_t sc) {
  Completion c;
  c.cid = cid;
  c.sct = kPathStatus;
  c.sc = sc;
  return c;
}

inline Completion host_aborted(uint16_t cid) { return path_status(cid, kHostAbortedCommand); }

enum class Disposition { complete, retry };

// nvme_decide_disposition for a command that `retries` earlier sends already failed.
inline Disposition decide_disposition(const Completion& c, uint32_t retries, uint32_t max_retries) {
  if (c.ok() || c.dnr || retries >= max_retries) return Disposition::complete;
  return Disposition::retry;
}

// The timeout of a command on queue `qid`.
inline Time command_timeout(uint16_t qid, const NvmeJobConfig& c) {
  return qid ? c.io_timeout : c.admin_timeout;
}

// opts->max_reconnects: DIV_ROUND_UP(ctrl_loss_tmo, reconnect_delay); a
// negative ctrl_loss_tmo: no limit.
inline uint64_t max_reconnects(const NvmeJobConfig& c) {
  if (c.ctrl_loss_tmo.count() < 0) return UINT64_MAX;
  return static_cast<uint64_t>((c.ctrl_loss_tmo.count() + c.reconnect_delay.count() - 1) /
                               c.reconnect_delay.count());
}

// nvmf_should_reconnect after `attempts` reconnects.
inline bool should_reconnect(uint64_t attempts, const NvmeJobConfig& c) {
  return attempts < max_reconnects(c);
}

// Fast I/O failure is on (fast_io_fail_tmo not -1).
inline bool fails_fast(const NvmeJobConfig& c) { return c.fast_io_fail_tmo.count() >= 0; }

// Host Path Error (SCT 3, 0x70), NVME_SC_HOST_PATH_ERROR: what a command
// gets when the controller cannot reach the target and failfast expired.
inline constexpr uint8_t kHostPathError = 0x70;

inline Completion host_path_error(uint16_t cid) { return path_status(cid, kHostPathError); }

// The keep-alive period (nvme_keep_alive_work_period: kato / 2; the
// target advertises no TBKAS, which would halve it again).
inline Time keep_alive_period(const NvmeJobConfig& c) { return Time::ps(c.kato.count() / 2); }

}  // namespace rdmasim::nvme
