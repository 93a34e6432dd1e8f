// The NVMe host's error recovery decisions (recovery.hpp), as Linux's
// nvme-core and fabrics code make them: which timeout a queue's commands
// have, which failed command is sent again, how many reconnects
// ctrl_loss_tmo allows.
#include "workloads/nvme/recovery.hpp"

#include <doctest/doctest.h>

using namespace rdmasim;
using namespace rdmasim::nvme;

TEST_CASE("nvme recovery: Linux's defaults") {
  const NvmeJobConfig c;
  CHECK(c.io_timeout == Time::s(30));       // NVME_IO_TIMEOUT
  CHECK(c.admin_timeout == Time::s(60));    // NVME_ADMIN_TIMEOUT
  CHECK(c.max_retries == 5);                // nvme_core.max_retries
  CHECK(c.reconnect_delay == Time::s(10));  // NVMF_DEF_RECONNECT_DELAY
  CHECK(c.ctrl_loss_tmo == Time::s(600));   // NVMF_DEF_CTRL_LOSS_TMO
  CHECK(c.kato == Time::s(5));              // NVME_DEFAULT_KATO
  CHECK_FALSE(fails_fast(c));               // NVMF_DEF_FAIL_FAST_TMO: -1, off
  CHECK(keep_alive_period(c) == Time::ms(2500));
  CHECK(command_timeout(0, c) == Time::s(60));
  CHECK(command_timeout(1, c) == Time::s(30));
  CHECK(command_timeout(7, c) == Time::s(30));
}

TEST_CASE("nvme recovery: a command aborted by the host is retried up to max_retries times") {
  const Completion aborted = host_aborted(3);
  CHECK(aborted.cid == 3);
  CHECK(aborted.sct == 3);
  CHECK(aborted.sc == 0x71);
  CHECK(aborted.status_field() == (0x371 << 1));  // NVME_SC_HOST_ABORTED_CMD in the status field
  CHECK_FALSE(aborted.dnr);
  for (uint32_t retries = 0; retries < 5; ++retries)
    CHECK(decide_disposition(aborted, retries, 5) == Disposition::retry);
  CHECK(decide_disposition(aborted, 5, 5) == Disposition::complete);
  CHECK(decide_disposition(aborted, 0, 0) == Disposition::complete);
}

TEST_CASE("nvme recovery: success and a status with DNR complete") {
  Completion ok;
  CHECK(decide_disposition(ok, 0, 5) == Disposition::complete);
  Completion lba;  // LBA Out of Range, as the target answers it: DNR set
  lba.sc = static_cast<uint8_t>(Status::lba_out_of_range);
  lba.dnr = true;
  CHECK(decide_disposition(lba, 0, 5) == Disposition::complete);
  lba.dnr = false;
  CHECK(decide_disposition(lba, 0, 5) == Disposition::retry);
}

TEST_CASE("nvme recovery: ctrl_loss_tmo / reconnect_delay reconnects, rounded up") {
  NvmeJobConfig c;
  CHECK(max_reconnects(c) == 60);  // 600 s / 10 s
  CHECK(should_reconnect(0, c));
  CHECK(should_reconnect(59, c));
  CHECK_FALSE(should_reconnect(60, c));
  c.ctrl_loss_tmo = Time::s(25);
  CHECK(max_reconnects(c) == 3);  // DIV_ROUND_UP
  c.ctrl_loss_tmo = Time::s(0);
  CHECK(max_reconnects(c) == 0);  // removed at once
  CHECK_FALSE(should_reconnect(0, c));
  c.ctrl_loss_tmo = Time::ms(1);
  CHECK(max_reconnects(c) == 1);
}

TEST_CASE("nvme recovery: ctrl_loss_tmo -1 reconnects for ever; fast_io_fail_tmo 0 is on") {
  NvmeJobConfig c;
  c.ctrl_loss_tmo = Time::ps(-1);
  CHECK(should_reconnect(1'000'000, c));
  c.fast_io_fail_tmo = Time{};
  CHECK(fails_fast(c));
  const Completion e = host_path_error(2);
  CHECK(e.status_field() == (0x370 << 1));  // NVME_SC_HOST_PATH_ERROR
  CHECK_FALSE(e.dnr);
}
