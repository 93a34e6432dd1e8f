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
//   removed.
#pragma once

#include <cstdint>

#include "core/units.hpp"
#include "topologies/storage_config.hpp"
#include "workloads/nvme/wire/completion.hpp"

namespace rdmasim::nvme {

// Command Aborted By Host: path related status (SCT 3), NVME_SC_HOST_ABORTED_CMD.
inline constexpr uint8_t kPathStatus = 3;
inline constexpr uint8_t kHostAbortedCommand = 0x71;

inline Completion host_aborted(uint16_t cid) {
  Completion c;
  c.cid = cid;
  c.sct = kPathStatus;
  c.sc = kHostAbortedCommand;
  return c;
}

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

// opts->max_reconnects: DIV_ROUND_UP(ctrl_loss_tmo, reconnect_delay).
inline uint64_t max_reconnects(const NvmeJobConfig& c) {
  return static_cast<uint64_t>((c.ctrl_loss_tmo.count() + c.reconnect_delay.count() - 1) /
                               c.reconnect_delay.count());
}

// nvmf_should_reconnect after `attempts` reconnects.
inline bool should_reconnect(uint64_t attempts, const NvmeJobConfig& c) {
  return attempts < max_reconnects(c);
}

}  // namespace rdmasim::nvme
