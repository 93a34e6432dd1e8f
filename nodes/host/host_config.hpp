// How a host posts work and learns of completions: the `host:` section of
// an experiment (docs/host.md), kept with the host it configures so that
// nodes/ needs nothing of the experiment's schema (topologies/config.hpp).
#pragma once

#include <cstdint>

#include "core/units.hpp"

namespace rdmasim {

// polling, interrupt, hybrid: how an RDMA program waits on its CQ. On the
// kernel stack (fabric: tcp) the receive path runs by `interrupt` (one hard
// IRQ per frame, or per coalesced batch, as before NAPI) or by `napi`.
enum class Completion { polling, interrupt, hybrid, napi };

// The kernel network stack of a host on `fabric: tcp` (nodes/host/kernel,
// docs/host.md "The kernel receive path"): Linux's defaults and per-frame
// CPU costs of its receive path.
struct KernelConfig {
  uint32_t rx_ring = 1024;                   // NIC receive descriptors (ethtool -g; mlx5's default)
  uint32_t netdev_budget = 300;              // frames one net_rx_action may take (net.core.netdev_budget)
  Time netdev_budget_time = Time::us(2000);  // ... and time (net.core.netdev_budget_usecs)
  uint32_t max_backlog = 1000;  // per-CPU backlog of frames queued by netif_rx (net.core.netdev_max_backlog)
  Time softirq_time = Time::ms(2);  // __do_softirq's MAX_SOFTIRQ_TIME, then ksoftirqd takes over
  uint32_t softirq_restarts = 10;   // ... or after MAX_SOFTIRQ_RESTART rounds
  // napi: polls run in a kernel thread the scheduler shares fairly with the
  // programs, never on IRQ exit (/sys/class/net/DEV/threaded, Linux 5.12).
  bool threaded_napi = false;
  // CPU time per frame (docs/host.md gives their sources):
  Time driver_rx = Time::ns(250);           // the driver: descriptor, skb, GRO
  Time ip_rx = Time::ns(150);               // ip_rcv: checks, route lookup, netfilter hooks
  Time transport_rx = Time::ns(200);        // udp_rcv / tcp_v4_rcv: socket lookup, checksum, enqueue, wake-up
  Time syscall = Time::ns(450);             // one recvmsg/sendmsg: entry, exit, socket locking and dequeue
  DataRate copy_bandwidth{80'000'000'000};  // copy_to_user / copy_from_user on one core
  uint64_t socket_buffer = 212992;          // SO_RCVBUF (net.core.rmem_default), in skb truesize
  // TCP sockets (nodes/host/kernel/stream_socket.hpp):
  Time transport_tx = Time::ns(300);  // per segment sent: tcp_write_xmit, ip_output, the driver's xmit
  uint64_t sndbuf = 262144;           // SO_SNDBUF: bytes queued or unacknowledged
  uint64_t rcvbuf = 131072;           // SO_RCVBUF: bytes received, not yet read (the window), tcp_rmem[1]
};
// Which network stack a host of `fabric: tcp` runs (docs/host.md): the
// kernel's, or a DPDK-style user-space stack on poll-mode cores.
enum class NetStack { kernel, dpdk };
// The user-space stack (nodes/host/dpdk/poll_mode_driver.hpp): `cores`
// dedicated poll-mode cores, each polling its receive queue in bursts.
struct DpdkConfig {
  uint32_t cores = 1;               // host.dpdk_cores: poll-mode cores, the first ones
  uint32_t burst = 32;              // host.dpdk_burst: frames one rte_eth_rx_burst takes at most
  uint32_t rx_ring = 1024;          // receive descriptors per queue
  Time poll = Time::ns(20);         // a burst call, whatever it finds
  Time rx_frame = Time::ns(200);    // per frame: mbuf, then IP and TCP/UDP input in user space
  Time tx_segment = Time::ns(150);  // per segment sent: TCP/IP output, the tx descriptor
  Time api_call = Time::ns(30);     // a call into the stack (send, recv): a function call, no trap
};
enum class Doorbell { dma, pio };
struct HostConfig {
  Completion completion = Completion::polling;
  Time hybrid_spin = Time::us(10);  // hybrid: poll this long, then wait for an interrupt
  struct InterruptCoalescing {
    uint32_t frames = 1;  // raise after this many completions ...
    Time delay;           // ... or this long after the first, whichever comes first
  } interrupt_coalescing;
  Doorbell doorbell = Doorbell::dma;  // dma: NIC fetches the WQE; pio: CPU writes it to the NIC
  struct Pcie {
    Time latency = Time::ns(400);
    DataRate bandwidth{128'000'000'000};
  } pcie;
  Time poll_cost = Time::ns(50);
  Time interrupt_cost = Time::us(1);  // the hard IRQ handler, up to waking the program
  Time post_cost = Time::ns(100);
  uint32_t cores = 1;                      // each runs one thing at a time (nodes/host/cpu)
  Time context_switch = Time::us(1);       // giving a core to a process whose context is not loaded
  DataRate pio_bandwidth{32'000'000'000};  // the CPU's programmed-I/O copy of inline data to the NIC
  uint32_t max_inline = 256;  // bytes of inline data a WQE may carry (ibv_qp_cap.max_inline_data)
  uint32_t napi_budget = 64;  // frames per NAPI poll (the driver's weight, NAPI_POLL_WEIGHT)
  KernelConfig kernel;
  NetStack stack = NetStack::kernel;
  DpdkConfig dpdk;
};

}  // namespace rdmasim
