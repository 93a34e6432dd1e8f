// How a host posts work and learns of completions: the `host:` section of
// an experiment (docs/host.md), kept with the host it configures so that
// nodes/ needs nothing of the experiment's schema (topologies/config.hpp).
#pragma once

#include <cstdint>

#include "core/units.hpp"

namespace rdmasim {

enum class Completion { polling, interrupt, hybrid };
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
  uint32_t cores = 1;                 // each runs one thing at a time (nodes/host/cpu)
  Time context_switch = Time::us(1);  // giving a core to a process whose context is not loaded
  DataRate pio_bandwidth{32'000'000'000};  // the CPU's programmed-I/O copy of inline data to the NIC
  uint32_t max_inline = 256;               // bytes of inline data a WQE may carry (ibv_qp_cap.max_inline_data)
};

}  // namespace rdmasim
