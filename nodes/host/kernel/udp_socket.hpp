// A UDP socket's receive queue (the kernel side of recvmsg): datagrams the
// softirq enqueued, charged against SO_RCVBUF by their skb truesize, as
// __udp_enqueue_schedule_skb does; a datagram that would pass it is
// dropped (the socket's RcvbufErrors), after all the work spent on it.
#pragma once

#include <cstdint>

#include "core/ring.hpp"
#include "core/task.hpp"
#include "core/units.hpp"

namespace rdmasim {

class UdpSocket {
 public:
  struct Datagram {
    uint32_t bytes;     // payload
    uint32_t truesize;  // what it holds of the receive buffer
    Time sent;          // when its first bit left the sender
  };
  UdpSocket(Simulator& sim, uint64_t rcvbuf) : readable_(sim), rcvbuf_(rcvbuf) {}

  // What an skb holding a frame of `frame_bytes` costs the receive buffer:
  // its data rounded to a cache line plus struct sk_buff and
  // skb_shared_info (SKB_TRUESIZE, about 576 bytes on x86-64).
  static uint32_t truesize(uint32_t frame_bytes) { return ((frame_bytes + 63) / 64) * 64 + 576; }

  // False (and counted) when the receive buffer is full.
  bool enqueue(const Datagram& d) {
    if (used_ + d.truesize > rcvbuf_) {
      ++drops_;
      return false;
    }
    used_ += d.truesize;
    queue_.push_back(d);
    readable_.notify();  // sk_data_ready wakes a reader
    return true;
  }
  bool empty() const { return queue_.empty(); }
  Datagram take() {
    Datagram d = queue_.take_front();
    used_ -= d.truesize;
    return d;
  }
  // co_await readable(): a sleeping reader's wake-up (latched, as Trigger).
  Trigger& readable() { return readable_; }
  uint64_t drops() const { return drops_; }

 private:
  Trigger readable_;
  uint64_t rcvbuf_;
  uint64_t used_ = 0;
  uint64_t drops_ = 0;
  Ring<Datagram> queue_;
};

}  // namespace rdmasim
