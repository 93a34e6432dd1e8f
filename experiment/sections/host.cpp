// `host:`, how hosts post work and learn of completions, and the stacks of
// the plain NICs (fabric: tcp): `host.kernel`, `host.dpdk`.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

using namespace keys;

namespace {

// TCP socket buffers: at least two full segments, at most what a TCP
// window can say with scaling (RFC 7323: 2^30).
ValueType<Bytes> socket_buffer(std::string name) { return size_in(Bytes(4096), Bytes(1u << 30), name); }

// host.kernel: the kernel stack's settings and per-frame costs (fabric: tcp; docs/host.md).
const KeyTable<KernelConfig>& kernel_keys() {
  using K = KernelConfig;
  static const KeyTable<K> t{
      "host.kernel",
      "kernel stack settings",
      {
          key("rx_ring", &K::rx_ring, whole(1, 1 << 16, "descriptors"), "1024",
              "receive descriptors per queue (`ethtool -g`; mlx5's default)"),
          key("netdev_budget", &K::netdev_budget, whole(1, 1 << 20, "frames"), "300",
              "frames one `net_rx_action` may take (`net.core.netdev_budget`)"),
          key("netdev_budget_time", &K::netdev_budget_time, positive_time(), "2000us",
              "... and time (`net.core.netdev_budget_usecs`)"),
          key("max_backlog", &K::max_backlog, whole(1, 1 << 20, "frames"), "1000",
              "per-CPU backlog of frames queued by `netif_rx` (`net.core.netdev_max_backlog`)"),
          key("softirq_time", &K::softirq_time, positive_time(), "2ms",
              "`__do_softirq`'s `MAX_SOFTIRQ_TIME`, then ksoftirqd takes over"),
          key("softirq_restarts", &K::softirq_restarts, whole(1, 1 << 20), "10",
              "... or after `MAX_SOFTIRQ_RESTART` rounds"),
          key("threaded_napi", &K::threaded_napi, boolean(), "false",
              "`napi`: polls run in a kernel thread the scheduler shares fairly with the programs "
              "(`/sys/class/net/DEV/threaded`)"),
          key("driver_rx", &K::driver_rx, time(), "250ns", "per frame: descriptor, skb, GRO"),
          key("ip_rx", &K::ip_rx, time(), "150ns", "per frame: `ip_rcv`, route lookup, netfilter hooks"),
          key("transport_rx", &K::transport_rx, time(), "200ns",
              "per frame: `udp_rcv` / `tcp_v4_rcv`, socket lookup, checksum, enqueue, wake-up"),
          key("syscall", &K::syscall, time(), "450ns",
              "per `recvmsg`/`sendmsg`: entry, exit, socket lock, dequeue"),
          key("copy_bandwidth", &K::copy_bandwidth, rate(), "80Gbps",
              "`copy_to_user` / `copy_from_user` on one core"),
          key("socket_buffer", &K::socket_buffer, size(), "212992",
              "a UDP socket's receive buffer (`net.core.rmem_default`, SO_RCVBUF), in skb truesize"),
          key("transport_tx", &K::transport_tx, time(), "300ns",
              "per TCP segment sent: `tcp_write_xmit`, `ip_output`, the driver's transmit (no TSO)"),
          key("sndbuf", &K::sndbuf, socket_buffer("sndbuf"), "262144",
              "a TCP socket's send buffer (SO_SNDBUF): bytes queued or not yet acknowledged"),
          key("rcvbuf", &K::rcvbuf, socket_buffer("rcvbuf"), "131072",
              "a TCP socket's receive buffer (SO_RCVBUF, `tcp_rmem[1]`): bytes received, not yet read (the "
              "window)"),
      }};
  return t;
}

// host.dpdk: the user-space stack's ring and CPU costs (host.stack: dpdk).
const KeyTable<DpdkConfig>& dpdk_keys() {
  static const KeyTable<DpdkConfig> t{
      "host.dpdk",
      "DPDK stack settings",
      {
          key("rx_ring", &DpdkConfig::rx_ring, whole(1, 1 << 16, "descriptors"), "1024",
              "receive descriptors per queue"),
          key("poll", &DpdkConfig::poll, time(), "20ns", "one `rte_eth_rx_burst` call, whatever it finds"),
          key("rx_frame", &DpdkConfig::rx_frame, time(), "200ns",
              "per frame received: the mbuf, IP and TCP/UDP input in user space"),
          key("tx_segment", &DpdkConfig::tx_segment, time(), "150ns",
              "per segment sent: TCP/IP output and the transmit descriptor"),
          key("api_call", &DpdkConfig::api_call, time(), "30ns",
              "a call into the stack (send, recv, connect, accept): a function call, no trap"),
      }};
  return t;
}

const KeyTable<HostConfig::InterruptCoalescing>& coalescing_keys() {
  using C = HostConfig::InterruptCoalescing;
  static const KeyTable<C> t{
      "host.interrupt_coalescing",
      "interrupt coalescing settings",
      {
          key("frames", &C::frames, whole(1, 65535, "completions"), "1",
              "raise an interrupt after this many completions ..."),
          key("delay", &C::delay, time(), "0", "... or this long after the first, whichever is sooner"),
      }};
  return t;
}

const KeyTable<HostConfig::Pcie>& pcie_keys() {
  using P = HostConfig::Pcie;
  static const KeyTable<P> t{
      "host.pcie",
      "PCIe settings",
      {
          key("latency", &P::latency, time(), "400ns", "one PCIe transaction's latency"),
          key("bandwidth", &P::bandwidth, rate(), "128Gbps", "the link's rate"),
      }};
  return t;
}

}  // namespace

const KeyTable<HostConfig>& host_keys() {
  using H = HostConfig;
  static const KeyTable<H> t{
      "host",
      "host settings",
      {
          key("completion", &H::completion, choice<Completion>("completion mode"), "polling",
              "RDMA fabrics: how the program learns of completions (`polling`, `interrupt`, `hybrid`). `tcp` "
              "(whose default is `napi`): how the kernel receives frames: `interrupt` (a hard IRQ per frame "
              "or "
              "per coalesced batch, the driver's work inside it, as before NAPI) or `napi`"),
          key("hybrid_spin", &H::hybrid_spin, time(), "10us",
              "`hybrid`: poll this long, then wait for an interrupt"),
          map_key("interrupt_coalescing", &H::interrupt_coalescing, coalescing_keys(),
                  "when the NIC raises an interrupt"),
          key("doorbell", &H::doorbell, choice<Doorbell>("doorbell"), "dma",
              "`dma`: the NIC fetches the work request over PCIe after a doorbell; `pio`: the CPU writes it "
              "into the NIC"),
          map_key("pcie", &H::pcie, pcie_keys(), "the host's PCIe link to the NIC"),
          key("poll_cost", &H::poll_cost, time(), "50ns", "CPU time of one CQ poll"),
          key("interrupt_cost", &H::interrupt_cost, time(), "1us",
              "CPU time of the hard IRQ handler that wakes the program (it preempts what runs on the core)"),
          key("post_cost", &H::post_cost, time(), "100ns", "CPU time to post a work request"),
          key("cores", &H::cores, whole(1, 1024), "1",
              "CPU cores; each runs one thing at a time ([host model](host.md))"),
          key("context_switch", &H::context_switch, time(), "1us",
              "kernel time to give a core to a process whose context is not loaded"),
          key("pio_bandwidth", &H::pio_bandwidth, rate(), "32Gbps",
              "the CPU's programmed-I/O copy rate of inline data into the NIC (the core is busy meanwhile)"),
          key("max_inline", &H::max_inline, size_at_most(Bytes(65536), "inline data"), "256",
              "the most inline data a WQE may carry (`ibv_qp_cap.max_inline_data`); larger messages go by "
              "DMA"),
          key("napi_budget", &H::napi_budget, whole(1, 65536, "frames"), "64",
              "`napi`: frames a poll takes before it gives way (the driver's NAPI weight)"),
          map_key("kernel", &H::kernel, kernel_keys(),
                  "`tcp`: the kernel stack's ring, budgets, limits, socket buffers and CPU costs "
                  "([host.md](host.md#the-kernel-receive-path-fabric-tcp))"),
          key("stack", &H::stack, choice<NetStack>("network stack"), "kernel",
              "`tcp`: the kernel's network stack, or a DPDK-style user-space stack on poll-mode cores "
              "([host.md](host.md#dpdk-kernel-bypass-without-rdma-hoststack-dpdk)); another fabric with "
              "`dpdk` is an error"),
          key_at<H>(
              "dpdk_cores", [](H & h) -> auto& { return h.dpdk.cores; }, whole(1, 1023), "1",
              "`dpdk`: poll-mode cores (the first ones), fewer than `cores`"),
          // rte_eth_rx_burst's nb_pkts; drivers take at most their ring.
          key_at<H>(
              "dpdk_burst", [](H & h) -> auto& { return h.dpdk.burst; }, whole(1, 1024, "frames"), "32",
              "`dpdk`: frames one receive burst takes at most"),
          map_key("dpdk", &H::dpdk, dpdk_keys(),
                  "`dpdk`: the queue size and the CPU costs of the user-space stack"),
      }};
  return t;
}

void read_host(ExperimentDraft& d, const Entry& e) {
  const auto f = host_keys().read(d.c, e.value, e.path, d.x.host);
  if (!f) return;
  // What the validate pass checks against the fabric.
  if (const Entry* v = f->find("completion")) d.completion = *v;
  if (const Entry* v = f->find("stack")) d.stack = *v;
  if (const Entry* v = f->find("dpdk_cores")) d.dpdk_cores = *v;
}

}  // namespace rdmasim
