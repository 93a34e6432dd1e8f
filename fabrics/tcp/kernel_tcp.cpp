#include "fabrics/tcp/kernel_tcp.hpp"

#include <algorithm>
#include <cstring>

#include "fabrics/tcp/kernel_nic.hpp"

namespace rdmasim {

KernelTcp::KernelTcp(KernelNic& nic, StreamSocket& socket, const TcpFlow& flow, uint32_t iss)
    : nic_(nic),
      socket_(socket),
      tcp_(nic.host().nic().sim(), nic.host().nic().pool(), nic.tcp_config(), flow, iss) {
  tcp_.set_upper(this);
  tcp_.set_auto_consume(false);  // the window opens as the program reads
  // The driver posts a transmit descriptor and rings the doorbell; the
  // NIC reads the descriptor and then the frame by DMA before it can send
  // (the same PCIe round trips an RNIC pays for a WQE and its payload).
  tcp_.set_wake([this] {
    Rnic& nic = nic_.host().nic();
    nic.sim().after(nic.doorbell_delay(false, true), [this, &nic] { nic.wake(*this); });
  });
  socket_.attach(*this);
  nic_.attach_tcp(*this);
}

KernelTcp::~KernelTcp() {
  nic_.detach_tcp(*this);
  nic_.host().nic().forget(*this);
}

Packet KernelTcp::next_frame() {
  TcpTx t = tcp_.next_tx();
  nic_.encap_tcp(t.packet, tcp_.flow().ip.dst4, t.ect);
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
