// IRN loss recovery (Mittal et al., "Revisiting Network Support for RDMA",
// SIGCOMM 2018, sections 3 and 5): the PSN bookkeeping a queue pair keeps
// for it, apart from the queue pair (irn_recovery.hpp drives it).
//
//  - PsnBitmap: a window of PSNs from a moving base, one bit each, the
//    structure both ends keep (the receiver: which packets beyond the
//    expected PSN have arrived; the sender: which were selectively acked).
//  - IrnSender (section 3.1): the SACK bitmap, loss recovery mode and the
//    choice of the next packet to send again; BDP-FC (section 3.2); the
//    two retransmission timeouts RTO_low and RTO_high.
//  - IrnExt: the information IRN adds to packets (section 5.2): a WRITE
//    packet's own remote address (the RETH every packet carries), a SEND
//    packet's receive WQE sequence number and offset, and the PSN a NACK
//    selectively acknowledges; fabrics/ip/wire/irn_option.hpp declares it
//    with its encoding on the wire.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "core/units.hpp"
#include "fabrics/iba/transport/psn.hpp"
#include "fabrics/ip/wire/irn_option.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

namespace verbs {
struct MemoryRegion;
}

// Bits for PSNs [base, base + capacity), modulo 2^24; a PSN outside reads 0
// and cannot be set.
class PsnBitmap {
 public:
  explicit PsnBitmap(uint32_t capacity = 0, uint32_t base = 0);
  uint32_t capacity() const { return cap_; }
  uint32_t base() const { return base_; }
  bool in_window(uint32_t psn) const;
  bool test(uint32_t psn) const;
  // False (and nothing set) when `psn` is outside the window.
  bool set(uint32_t psn);
  // Moves the base forward to `psn` (never back), clearing what it passes.
  void advance_to(uint32_t psn);
  // The first PSN in [from, to) whose bit is clear, or nullopt.
  std::optional<uint32_t> first_clear(uint32_t from, uint32_t to) const;
  // The ring index of `psn` (in the window), for data kept beside the bits.
  size_t slot_of(uint32_t psn) const { return slot(psn); }

 private:
  // A ring: the base's bit is at head_, the rest follow it (PSNs wrap at
  // 2^24, which the capacity need not divide).
  size_t slot(uint32_t psn) const { return (head_ + static_cast<uint32_t>(psn_diff(psn, base_))) % cap_; }
  uint32_t cap_;
  uint32_t base_;
  uint32_t head_ = 0;
  std::vector<uint64_t> bits_;
};

// BDP-FC's cap: line rate x base RTT in packets of the path MTU (at least
// one), unless given.
uint32_t irn_bdp_packets(const IrnConfig& c, DataRate line, uint32_t mtu);

// The sender's side of IRN, PSNs only: the completer tells it of cumulative
// and selective acknowledgements and timeouts, the requester asks it what
// to send again and whether BDP-FC lets a new packet go.
class IrnSender {
 public:
  IrnSender(const IrnConfig& c, uint32_t bdp_packets, uint32_t first_psn);

  uint32_t bdp_packets() const { return sacked_.capacity(); }
  bool in_recovery() const { return recovery_; }
  uint32_t cumulative() const { return sacked_.base(); }

  // BDP-FC (section 3.2): a new packet at `next_psn` may go while fewer than
  // the cap are unacknowledged.
  bool may_send_new(uint32_t next_psn) const;
  // RTO_low with at most N packets in flight, else RTO_high (section 3.1).
  Time rto(uint32_t next_psn) const;

  // Everything before `psn` is acknowledged. Leaves recovery once the
  // recovery sequence is (section 3.1).
  void on_cumulative(uint32_t psn);
  // A NACK: cumulative `cum`, selectively acking `sack`; `next_psn` the
  // first PSN never sent. Enters recovery when not in it.
  void on_nack(uint32_t cum, uint32_t sack, uint32_t next_psn);
  // The retransmission timer fired: every unacknowledged packet not
  // selectively acked is taken for lost.
  void on_timeout(uint32_t next_psn);
  // Go-back-N was forced (a READ response went missing): from `psn` on
  // everything is sent again in order, nothing is owed selectively.
  void restart_from(uint32_t psn);

  // The next packet to send again, if any: in recovery, the cumulative
  // PSN first, then each PSN not selectively acked below the highest that
  // is (below every unacknowledged one after a timeout), once each.
  std::optional<uint32_t> next_retransmit() const;
  // It was sent again: move past it (a READ request covers `span` PSNs).
  void retransmitted(uint32_t psn, uint32_t span = 1);

 private:
  const IrnConfig* cfg_;
  PsnBitmap sacked_;  // base: the cumulative acknowledgement
  bool recovery_ = false;
  uint32_t recovery_psn_ = 0;  // the last new packet sent before recovery began
  uint32_t retx_next_ = 0;     // retransmission goes on from here
  uint32_t lost_end_ = 0;      // packets before it not sacked are lost
};

// The receiver's side (section 3.1 and 5.2): which packets beyond the
// expected PSN have been placed, and what each one's message needs to
// complete once the expected PSN reaches it (completions stay in order).
struct IrnSlot {
  uint8_t opcode = 0;
  bool solicited = false;
  uint32_t bytes = 0;    // payload
  uint32_t offset = 0;   // bytes of its message before it
  uint32_t dma_len = 0;  // a WRITE's message length
  uint32_t imm = 0;
  uint64_t va = 0;  // a WRITE packet's remote address
  const verbs::MemoryRegion* mr = nullptr;
};
struct IrnReceiver {
  IrnReceiver(uint32_t capacity, uint32_t epsn) : received(capacity, epsn), slots(received.capacity()) {}
  // Where `psn`'s record goes: the slot of its bit (it must be in the window).
  IrnSlot& slot(uint32_t psn) { return slots[received.slot_of(psn)]; }
  PsnBitmap received;  // base: the expected PSN
  std::vector<IrnSlot> slots;
};

// The requester's side of its READs (section 5.3, "out-of-order READ
// responses"): each response's PSN gives its offset in its READ, so one
// that arrives beyond the PSN expected is placed at once; the PSNs it
// skipped are asked for again, once each, by a READ request for just that
// hole (a duplicate READ, which the responder executes again from its PSN,
// IBA 9.7.5.1.3). A retransmission timeout asks for the rest again as
// go-back-N would.
struct IrnReadAsk {
  uint32_t read;  // the READ's first PSN
  uint32_t psn;   // the hole's first PSN
  uint32_t end;   // one past its last
};
struct IrnReadRx {
  IrnReadRx(uint32_t first_psn, uint32_t packets)
      : first(first_psn & kPsnMask), got(packets, first_psn), asked_end(first) {}
  // Queues requests for the PSNs in [from, to) not yet placed nor asked
  // for; returns whether it queued any.
  bool ask_holes(uint32_t from, uint32_t to, std::deque<IrnReadAsk>& asks);
  uint32_t first;      // the READ's first PSN
  PsnBitmap got;       // its responses placed out of order
  uint32_t asked_end;  // the holes before it were asked for again
};

}  // namespace rdmasim
