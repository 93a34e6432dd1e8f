// `host:`, how hosts post work and learn of completions.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

namespace {

// host.kernel: the kernel stack's settings and per-frame costs (fabric: tcp).
void read_kernel(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "kernel stack settings",
                      {"rx_ring", "netdev_budget", "netdev_budget_time", "max_backlog", "softirq_time",
                       "softirq_restarts", "threaded_napi", "driver_rx", "ip_rx", "transport_rx", "syscall",
                       "copy_bandwidth", "socket_buffer", "transport_tx", "sndbuf", "rcvbuf"});
  if (!f) return;
  KernelConfig& k = d.x.host.kernel;
  d.c.read(*f, "rx_ring", k.rx_ring, [&](const Entry& v) { return d.c.whole(v, 1, 1 << 16); });
  d.c.read(*f, "netdev_budget", k.netdev_budget, [&](const Entry& v) { return d.c.whole(v, 1, 1 << 20); });
  d.c.read(*f, "netdev_budget_time", k.netdev_budget_time,
           [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "max_backlog", k.max_backlog, [&](const Entry& v) { return d.c.whole(v, 1, 1 << 20); });
  d.c.read(*f, "softirq_time", k.softirq_time, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "softirq_restarts", k.softirq_restarts,
           [&](const Entry& v) { return d.c.whole(v, 1, 1 << 20); });
  d.c.read(*f, "threaded_napi", k.threaded_napi, [&](const Entry& v) { return d.c.boolean(v); });
  d.c.read(*f, "driver_rx", k.driver_rx, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "ip_rx", k.ip_rx, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "transport_rx", k.transport_rx, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "syscall", k.syscall, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "copy_bandwidth", k.copy_bandwidth, [&](const Entry& v) { return d.c.rate(v); });
  if (const Entry* v = f->find("socket_buffer"))
    if (auto b = d.c.bytes(*v)) k.socket_buffer = b->count();
  d.c.read(*f, "transport_tx", k.transport_tx, [&](const Entry& v) { return d.c.time(v); });
  // TCP socket buffers: at least two full segments, at most what a TCP
  // window can say with scaling (RFC 7323: 2^30).
  for (const auto& [key, to] : {std::pair{"sndbuf", &k.sndbuf}, std::pair{"rcvbuf", &k.rcvbuf}})
    if (const Entry* v = f->find(key))
      if (auto b = d.c.bytes(*v)) {
        if (b->count() < 4096 || b->count() > (uint64_t{1} << 30))
          d.c.error(v->value, v->path, std::string(key) + " must be from 4KiB to 1GiB, got " + to_string(*b));
        else
          *to = b->count();
      }
}

// host.dpdk: the user-space stack's ring and CPU costs (host.stack: dpdk).
void read_dpdk(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "DPDK stack settings",
                      {"rx_ring", "poll", "rx_frame", "tx_segment", "api_call"});
  if (!f) return;
  DpdkConfig& k = d.x.host.dpdk;
  d.c.read(*f, "rx_ring", k.rx_ring, [&](const Entry& v) { return d.c.whole(v, 1, 1 << 16); });
  d.c.read(*f, "poll", k.poll, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "rx_frame", k.rx_frame, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "tx_segment", k.tx_segment, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "api_call", k.api_call, [&](const Entry& v) { return d.c.time(v); });
}

}  // namespace

void read_host(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "host settings",
                      {"completion", "hybrid_spin", "interrupt_coalescing", "doorbell", "pcie", "poll_cost",
                       "interrupt_cost", "post_cost", "cores", "context_switch", "pio_bandwidth",
                       "max_inline", "napi_budget", "kernel", "stack", "dpdk_cores", "dpdk_burst", "dpdk"});
  if (!f) return;
  HostConfig& h = d.x.host;
  d.c.read(*f, "completion", h.completion,
           [&](const Entry& v) { return d.c.choice<Completion>(v, "completion mode"); });
  if (const Entry* v = f->find("completion")) d.completion = *v;
  d.c.read(*f, "napi_budget", h.napi_budget, [&](const Entry& v) { return d.c.whole(v, 1, 65536); });
  d.c.read(*f, "stack", h.stack, [&](const Entry& v) { return d.c.choice<NetStack>(v, "network stack"); });
  if (const Entry* v = f->find("stack")) d.stack = *v;
  d.c.read(*f, "dpdk_cores", h.dpdk.cores, [&](const Entry& v) { return d.c.whole(v, 1, 1023); });
  if (const Entry* v = f->find("dpdk_cores")) d.dpdk_cores = *v;
  // rte_eth_rx_burst's nb_pkts; drivers take at most their ring.
  d.c.read(*f, "dpdk_burst", h.dpdk.burst, [&](const Entry& v) { return d.c.whole(v, 1, 1024); });
  if (auto v = f->find("dpdk")) read_dpdk(d, *v);
  if (auto v = f->find("kernel")) read_kernel(d, *v);
  d.c.read(*f, "hybrid_spin", h.hybrid_spin, [&](const Entry& v) { return d.c.time(v); });
  if (auto v = f->find("interrupt_coalescing")) {
    if (auto g = d.c.fields(v->value, v->path, "interrupt coalescing settings", {"frames", "delay"})) {
      d.c.read(*g, "frames", h.interrupt_coalescing.frames,
               [&](const Entry& w) { return d.c.whole(w, 1, 65535); });
      d.c.read(*g, "delay", h.interrupt_coalescing.delay, [&](const Entry& w) { return d.c.time(w); });
    }
  }
  d.c.read(*f, "doorbell", h.doorbell, [&](const Entry& v) { return d.c.choice<Doorbell>(v, "doorbell"); });
  if (auto v = f->find("pcie")) {
    if (auto g = d.c.fields(v->value, v->path, "PCIe settings", {"latency", "bandwidth"})) {
      d.c.read(*g, "latency", h.pcie.latency, [&](const Entry& w) { return d.c.time(w); });
      d.c.read(*g, "bandwidth", h.pcie.bandwidth, [&](const Entry& w) { return d.c.rate(w); });
    }
  }
  d.c.read(*f, "poll_cost", h.poll_cost, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "interrupt_cost", h.interrupt_cost, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "post_cost", h.post_cost, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "cores", h.cores, [&](const Entry& v) { return d.c.whole(v, 1, 1024); });
  d.c.read(*f, "context_switch", h.context_switch, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "pio_bandwidth", h.pio_bandwidth, [&](const Entry& v) { return d.c.rate(v); });
  if (const Entry* v = f->find("max_inline"))
    if (auto b = d.c.bytes(*v)) {
      if (b->count() > 65536)
        d.c.error(v->value, v->path, "at most 64KiB of inline data, got " + to_string(*b));
      else
        h.max_inline = static_cast<uint32_t>(b->count());
    }
}

}  // namespace rdmasim
