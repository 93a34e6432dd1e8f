// The `storage:` section (NVMe over Fabrics targets) and the settings of a
// `kind: nvme` workload (fio's names), as the loader fills them. The
// models are in workloads/nvme/; docs/storage.md describes both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/units.hpp"

namespace rdmasim {

// A datacenter NVMe SSD. Defaults: Intel SSD D7-P5510 3.84 TB as its
// product specification lists it (4 KiB random read 700 000 IOPS, random
// write 170 000 IOPS, sequential read 6 500 MB/s, write 3 400 MB/s, read
// latency 82 us, write latency 15 us); docs/storage.md.
struct SsdConfig {
  Time read_latency = Time::us(82);   // mean service time of a read
  Time write_latency = Time::us(15);  // of a write (into the drive's power-protected cache)
  double latency_spread = 0.2;        // sigma of the lognormal service time (0: constant)
  uint32_t channels = 16, dies = 4;   // parallel units: channels x dies
  uint64_t read_iops = 700'000, write_iops = 170'000;
  DataRate read_bandwidth{52'000'000'000}, write_bandwidth{27'200'000'000};
};

struct NamespaceConfig {
  uint32_t nsid = 1;
  uint64_t size = 0;  // bytes
  uint32_t block_size = 512;
  bool ram = false;  // RAM-backed (null_blk-like): no SSD, a fixed latency
  Time ram_latency = Time::ns(500);
  int line = 0, column = 0;  // where it was written, for located errors
};

enum class TargetCpu { poll, interrupt };

struct StorageTargetConfig {
  std::string host;
  std::vector<NamespaceConfig> namespaces;
  SsdConfig ssd;
  TargetCpu cpu = TargetCpu::poll;  // poll: SPDK-style pollers; interrupt: the kernel target
  uint32_t cores = 1;               // cores whose pollers (or interrupt handlers) serve its queues
  Time io_cost;                     // CPU per command; 0: the mode's default (docs/storage.md)
  uint32_t inline_data_size =
      4096;  // in-capsule data a command may carry on an I/O queue (nvmet-rdma's default)
  uint32_t max_queue_size = 1024;  // entries an I/O queue may have
  int line = 0, column = 0;
};

struct StorageConfig {
  std::vector<StorageTargetConfig> targets;
  const StorageTargetConfig* target(const std::string& host) const {
    for (const auto& t : targets)
      if (t.host == host) return &t;
    return nullptr;
  }
};

enum class NvmeRw { read, write, randread, randwrite, randrw, readwrite };

// One `kind: nvme` workload: fio's job options.
struct NvmeJobConfig {
  std::string initiator, target;
  uint32_t nsid = 1;
  NvmeRw rw = NvmeRw::randread;
  uint64_t bs = 4096;
  uint32_t iodepth = 1;
  uint32_t numjobs = 1;          // one I/O queue each
  bool group_reporting = false;  // fio.json: the numjobs jobs as one entry (fio's group_reporting)
  uint32_t rwmixread = 50;       // randrw, readwrite: percent reads
  Time runtime;                  // 0: until `size` bytes are done
  uint64_t size = 0;             // bytes of the region and of I/O per job; 0: the namespace from `offset`
  uint64_t offset = 0;           // start of the region
  Time ramp_time;                // I/O before this is not counted
  uint32_t queue_size = 128;     // I/O queue entries (nvme connect -Q)
  Time start_time;               // when the host connects (the workload's `start`)
  bool hdgst = false;            // NVMe/TCP: header digests (nvme connect --hdr-digest)
  bool ddgst = false;            // NVMe/TCP: data digests (nvme connect --data-digest)
  // Error recovery, Linux's defaults: nvme_core's io_timeout and admin_timeout
  // (NVME_IO_TIMEOUT, NVME_ADMIN_TIMEOUT) and max_retries, nvme connect's
  // reconnect_delay and ctrl_loss_tmo (NVMF_DEF_RECONNECT_DELAY, NVMF_DEF_CTRL_LOSS_TMO).
  Time io_timeout = Time::s(30);
  Time admin_timeout = Time::s(60);
  uint32_t max_retries = 5;
  Time reconnect_delay = Time::s(10);
  Time ctrl_loss_tmo = Time::s(600);  // negative (-1): reconnect for ever
  // nvme connect --keep-alive-tmo (NVME_DEFAULT_KATO, whole seconds; 0: no
  // keep-alive) and --fast_io_fail_tmo (NVMF_DEF_FAIL_FAST_TMO: negative, off).
  Time kato = Time::s(5);
  Time fast_io_fail_tmo = Time::ps(-1);
  // fio's bw_avg_time and iops_avg_time: fio.json's bandwidth and IOPS
  // samples, one each this much of the job's time (whole ms, fio's 500 ms).
  Time bw_avg_time = Time::ms(500);
  Time iops_avg_time = Time::ms(500);
};

}  // namespace rdmasim
