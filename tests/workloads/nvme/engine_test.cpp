// The NVMe-oF engines on a built network: a host's job against a target,
// queues connected through the RDMA CM (IBA fabrics) or directly (iWARP),
// or NVMe/TCP connections (tcp).
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "tests/fixtures/network.hpp"
#include "workloads/nvme/initiator.hpp"
#include "workloads/nvme/rdma_cm.hpp"
#include "workloads/nvme/target.hpp"
#include "workloads/workload.hpp"

using namespace rdmasim;
using namespace rdmasim::nvme;

namespace {

struct Bench {
  test::BuiltNetwork b;
  WorkloadEnv env;
  std::unique_ptr<CmDirectory> cm;
  std::unique_ptr<NvmeTarget> target;

  Bench(const std::string& fabric, const StorageTargetConfig& t)
      : b(test::two_hosts(fabric)), env{b.net.sim, b.cfg,   nullptr, b.fabric.address, nullptr, b.fabric.mtu,
                                        nullptr,   nullptr, 0,       nullptr} {
    env.connect_time = [](Host&, Host&) { return Time::us(5); };
    if (fabric != "iwarp") {
      cm = std::make_unique<CmDirectory>(env);
      cm->add_host(b.host(0));
      cm->add_host(b.host(1));
    }
    target = std::make_unique<NvmeTarget>(env, b.host(1), t, cm.get(), 7);
  }
  ~Bench() { b.net.sim.clear(); }
  NvmeResult run(const NvmeJobConfig& c, Time limit = Time::ms(100)) {
    NvmeJob job(env, "job", c, b.host(0), *target, cm.get(), 11);
    job.start();
    b.net.sim.run(limit);
    CHECK(job.finished());
    return job.result();
  }
};

StorageTargetConfig target_config(bool ram = false) {
  StorageTargetConfig t;
  t.host = "b";
  NamespaceConfig ns;
  ns.nsid = 1;
  ns.size = 64ull << 20;
  ns.block_size = 512;
  ns.ram = ram;
  t.namespaces.push_back(ns);
  return t;
}

// `reads` 4 KiB random reads, one at a time.
NvmeJobConfig qd1_reads(uint64_t reads) {
  NvmeJobConfig c;
  c.rw = NvmeRw::randread;
  c.iodepth = 1;
  c.size = reads * 4096;
  return c;
}

}  // namespace

TEST_CASE("nvme engine: QD 1 random reads; IOPS is 1 / latency") {
  for (const char* fabric : {"roce_v2", "ib", "roce_v1", "iwarp", "tcp"}) {
    CAPTURE(fabric);
    Bench bench(fabric, target_config());
    const NvmeResult r = bench.run(qd1_reads(400));
    CHECK(r.data_verified);
    CHECK(r.errors == 0);
    REQUIRE(r.read.ios == 400);
    double mean = 0;
    for (int64_t v : r.read.lat) mean += static_cast<double>(v);
    mean /= static_cast<double>(r.read.lat.size());
    const double iops = static_cast<double>(r.read.ios) / ((r.measure_end - r.measure_start).count() * 1e-12);
    CHECK(iops == doctest::Approx(1e12 / mean).epsilon(0.05));
    CHECK(mean > 82e6);  // the SSD's 82 us plus the fabric
    CHECK(mean < 110e6);
  }
}

TEST_CASE("nvme engine: writes then reads of the same blocks verify; a RAM namespace") {
  // RDMA, and NVMe/TCP with both digests.
  for (const char* fabric : {"roce_v2", "tcp"}) {
    CAPTURE(fabric);
    Bench bench(fabric, target_config(true));
    NvmeJobConfig w;
    w.rw = NvmeRw::write;
    w.bs = 8192;  // beyond the in-capsule size: the target RDMA READs the data, or sends an R2T
    w.iodepth = 4;
    w.size = 1 << 20;
    w.hdgst = w.ddgst = true;
    const NvmeResult rw = bench.run(w);
    CHECK(rw.write.ios == 128);
    CHECK(rw.data_verified);
    NvmeJobConfig w2 = w;
    w2.bs = 4096;  // in-capsule
    const NvmeResult rw2 = bench.run(w2, Time::ms(200));
    CHECK(rw2.write.ios == 256);
    CHECK(rw2.data_verified);
    NvmeJobConfig r = w;
    r.rw = NvmeRw::randread;
    const NvmeResult rr = bench.run(r, Time::ms(300));
    CHECK(rr.read.ios == 128);
    CHECK(rr.data_verified);
    CHECK(rr.bad_blocks == 0);
  }
}

TEST_CASE("nvme engine: IOPS saturates at the SSD's ceiling at high queue depth") {
  StorageTargetConfig t = target_config();
  t.cores = 1;
  Bench bench("roce_v2", t);
  NvmeJobConfig c;
  c.rw = NvmeRw::randread;
  c.iodepth = 128;
  c.numjobs = 2;
  c.runtime = Time::ms(4);
  c.ramp_time = Time::ms(1);
  const NvmeResult r = bench.run(c, Time::ms(50));
  const double iops = static_cast<double>(r.read.ios) / ((r.measure_end - r.measure_start).count() * 1e-12);
  CHECK(iops == doctest::Approx(700000).epsilon(0.05));
  CHECK(r.data_verified);
}

// io_timeout below the SSD's read latency: every read times out on a live
// controller, which recovers (teardown, reconnect after reconnect_delay, a
// new association) and sends it again; after max_retries sends it fails,
// aborted by the host. Each read: 1 + max_retries timeouts and reconnects.
TEST_CASE("nvme engine: a command past io_timeout is retried after each reconnect, then fails") {
  for (const char* fabric : {"roce_v2", "ib", "roce_v1", "iwarp", "tcp"}) {
    CAPTURE(fabric);
    Bench bench(fabric, target_config());
    NvmeJobConfig c = qd1_reads(4);
    c.io_timeout = Time::us(60);  // the SSD takes 82 us
    c.reconnect_delay = Time::ms(1);
    c.max_retries = 2;
    const NvmeResult r = bench.run(c, Time::s(1));
    CHECK(r.error.empty());
    CHECK(r.read.ios == 0);
    CHECK(r.timeouts == 4 * 3);
    CHECK(r.reconnects == 4 * 3);
    CHECK(r.errors == 4);  // Command Aborted By Host
    CHECK_FALSE(r.data_verified);
  }
}

// ctrl_loss_tmo bounds the failed attempts of one recovery (nr_reconnects
// starts again at 0 once a reconnect succeeds): 2 ms / 1 ms allows two, and
// 24 recoveries that each reconnect at once remove nothing.
TEST_CASE("nvme engine: ctrl_loss_tmo counts failed reconnect attempts, not recoveries") {
  Bench bench("roce_v2", target_config());
  NvmeJobConfig c = qd1_reads(4);
  c.io_timeout = Time::us(60);
  c.reconnect_delay = Time::ms(1);
  c.ctrl_loss_tmo = Time::ms(2);
  const NvmeResult r = bench.run(c, Time::s(1));
  CHECK(r.error.empty());
  CHECK(r.reconnects == 4 * 6);  // max_retries 5: six sends a read
  CHECK(r.timeouts == 4 * 6);
  CHECK(r.errors == 4);
}

// The target removes the controller under I/O (nvmet_ctrl_fatal_error, as its
// keep-alive does): each queue's disconnect reaches the host at once, on RoCE
// as a CM DREQ, on iWARP as its TCP connection's close (a FIN), and the host's
// error recovery reconnects; the host is not left to its 30 s io_timeout.
TEST_CASE(
    "nvme engine: the target's removal of the controller reaches the host at once, RoCE and iWARP alike") {
  for (const char* fabric : {"roce_v2", "iwarp"}) {
    CAPTURE(fabric);
    Bench bench(fabric, target_config());
    NvmeJobConfig c = qd1_reads(100);
    c.reconnect_delay = Time::ms(1);
    NvmeJob job(bench.env, "job", c, bench.b.host(0), *bench.target, bench.cm.get(), 11);
    job.start();
    bench.b.net.sim.run(Time::ms(3));
    REQUIRE(bench.target->queues() == 2);
    for (uint32_t i = 0; i < bench.target->queues(); ++i)
      bench.target->port().disconnect(bench.target->queue(i));
    bench.b.net.sim.run(Time::ms(60));
    CHECK(job.finished());
    const NvmeResult r = job.result();
    CHECK(r.error.empty());
    CHECK(r.recovered);
    CHECK(r.reconnects == 1);
    CHECK(r.timeouts == 0);
    CHECK(r.read.ios == 100);
    CHECK(r.data_verified);
  }
}
