#include "fabrics/tcp/kernel_tcp.hpp"

#include <algorithm>
#include <cstring>

#include "fabrics/tcp/kernel_ip.hpp"
#include "fabrics/tcp/kernel_nic.hpp"

namespace rdmasim {

KernelTcp::KernelTcp(KernelIp& ip, StreamSocket& socket, const TcpFlow& flow, uint32_t iss)
    : ip_(ip),
      socket_(socket),
      tcp_(ip.host().nic().sim(), ip.host().nic().pool(), ip.tcp_config(), flow, iss) {
  tcp_.set_upper(this);
  tcp_.set_auto_consume(false);  // the window opens as the program reads
  // The driver posts a transmit descriptor and rings the doorbell; the
  // NIC reads the descriptor and then the frame by DMA before it can send
  // (the same PCIe round trips an RNIC pays for a WQE and its payload).
  tcp_.set_wake([this] { doorbell(); });
  socket_.attach(*this);
  ip_.attach_tcp(*this);
}

KernelTcp::KernelTcp(KernelNic& nic, StreamSocket& socket, const TcpFlow& flow, uint32_t iss)
    : KernelTcp(nic.ip(), socket, flow, iss) {}

void KernelTcp::doorbell() {
  Rnic& nic = ip_.host().nic();
  nic.sim().after(nic.doorbell_delay(false, true), [this, &nic] { nic.wake(*this); });
}

KernelTcp::~KernelTcp() {
  ip_.detach_tcp(*this);
  ip_.host().nic().forget(*this);
}

void KernelTcp::tcp_established() {
  // An active open owes the ACK of the SYN-ACK (a passive one owes nothing).
  if (immediate_handshake_ack_ && built_.empty() && tcp_.has_tx()) {
    built_.push_back(tcp_.next_tx());
    doorbell();
  }
  socket_.established();
}

Packet KernelTcp::next_frame() {
  TcpTx t = built_.empty() ? tcp_.next_tx() : built_.take_front();
  ip_.encap_tcp(t.packet, tcp_.flow().ip.dst4, t.ect);
  return std::move(t.packet);
}

size_t KernelTcp::room() const {
  const TcpState s = tcp_.state();
  if (s != TcpState::established && s != TcpState::close_wait) return 0;
  const uint64_t held = tcp_.stream_end() - tcp_.acked_offset();
  const uint64_t limit = tcp_.config().send_buffer;
  return held >= limit ? 0 : static_cast<size_t>(limit - held);
}

uint64_t KernelTcp::segments(size_t n) const {
  const uint64_t mss = std::max<size_t>(tcp_.max_record(), 1);
  const uint64_t first = std::min<uint64_t>(n, mss - tcp_.stream_end() % mss);
  return n == 0 ? 0 : 1 + (n - first + mss - 1) / mss;
}

size_t KernelTcp::push(std::span<const std::byte> data) {
  const size_t mss = std::max<size_t>(tcp_.max_record(), 1);
  size_t done = 0;
  while (done < data.size()) {
    const size_t len = std::min(data.size() - done, mss - static_cast<size_t>(tcp_.stream_end() % mss));
    std::span<std::byte> rec = tcp_.reserve(len);
    if (rec.empty()) break;
    std::memcpy(rec.data(), data.data() + done, len);
    tcp_.commit();
    done += len;
  }
  return done;
}

}  // namespace rdmasim
