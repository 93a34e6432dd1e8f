#include "fabrics/ib/ib_switch.hpp"

#include <algorithm>

#include "fabrics/ib/wire/lrh.hpp"
#include "fabrics/iba/icrc.hpp"
#include "fabrics/iba/wire/bth.hpp"

namespace rdmasim {

namespace {
// Sets BTH FECN (after the LRH, and the GRH of a global packet); false when
// it was set already.
bool set_fecn(Packet& p) {
  std::span<std::byte> b = p.raw_bytes();
  auto lrh = LrhView::check(b);
  const size_t at = LrhView::kLen + (lrh->lnh() == Lnh::IbaGlobal ? 40 : 0);
  auto bth = BthView::check(b.subspan(std::min(at, b.size())));
  if (!bth || bth->fecn()) return false;
  bth->set_fecn(true);
  return true;
}
}  // namespace

IbSwitch::IbSwitch(Simulator& sim, std::string name, const SwitchConfig& cfg)
    : Node(sim, std::move(name)), cfg_(cfg) {}

void IbSwitch::set_forwarding(uint16_t dlid, uint16_t port) {
  if (lft_.size() <= dlid) lft_.resize(size_t{dlid} + 1, -1);
  lft_[dlid] = static_cast<int16_t>(port);
}

std::optional<uint16_t> IbSwitch::forwarding(uint16_t dlid) const {
  if (dlid >= lft_.size() || lft_[dlid] < 0) return std::nullopt;
  return static_cast<uint16_t>(lft_[dlid]);
}

void IbSwitch::set_sl_to_vl(uint16_t out_port, const SlToVl& t) {
  if (sl2vl_.size() <= out_port) sl2vl_.resize(size_t{out_port} + 1);
  sl2vl_[out_port] = t;
}

void IbSwitch::attach_ports() {
  if (sl2vl_.size() < port_count()) sl2vl_.resize(port_count());
  out_.resize(port_count());
  for (size_t n = 0; n < port_count(); ++n) {
    const auto i = static_cast<uint16_t>(n);
    Port& p = port(i);
    p.classify_by_vl(true);
    p.on_tx([this, i](Time, Packet& f) { on_tx(i, f); });
    p.on_tx_ready([this, i] { tx_done(i); });
  }
}

size_t IbSwitch::waiting() const {
  size_t n = 0;
  for (const Output& o : out_) {
    n += o.pipeline.size();
    for (const auto& q : o.vl_queue) n += q.size();
  }
  return n;
}

size_t IbSwitch::queue_bytes() const {
  size_t n = 0;
  for (const Output& o : out_) {
    n += o.pipeline.capacity() * sizeof(Held) + o.on_wire.capacity() * sizeof(Release);
    for (const auto& q : o.vl_queue) n += q.capacity() * sizeof(Held);
    for (const auto& q : o.in_port_queue) n += q.capacity() * sizeof(Release);
  }
  return n;
}

void IbSwitch::receive(Port& in, Packet p) {
  const uint8_t in_class = p.meta().vl & (Port::kClasses - 1);  // what the input buffer counted
  auto lrh = LrhView::check(p.raw_bytes());
  // IBA 7.7.8: PktLen counts LRH through ICRC in words; the VCRC follows.
  if (!lrh || (lrh->lnh() != Lnh::IbaLocal && lrh->lnh() != Lnh::IbaGlobal) ||
      size_t{lrh->pkt_len()} * 4 + kVcrcLen != p.size()) {
    ++stats_.malformed;
    in.release_ingress(in_class, p.size());
    return;
  }
  const std::optional<uint16_t> out = forwarding(lrh->dlid());
  if (!out || *out == in.index() || *out >= port_count() || !port(*out).connected()) {
    ++stats_.no_route;  // IBA 18.2.4.3.2: an unprogrammed entry discards the packet
    in.release_ingress(in_class, p.size());
    return;
  }
  // IBA 7.6.6: the output port's SL-to-VL table gives the VL of the next
  // link. VL is outside the ICRC but inside the VCRC, which this hop redoes
  // (a frame still waiting for its CRCs gets both when first observed).
  const uint8_t vl = sl2vl_[*out](lrh->sl());
  if (vl != lrh->vl()) {
    lrh->set_vl(vl);
    ++stats_.vl_changes;
    if (!p.meta().crc_pending) fill_vcrc(p.bytes());
  }
  p.meta().vl = vl;

  // Cut-through: the first bit leaves `latency` after the first bit came in;
  // the port model delivers at the last bit, so take back the ingress
  // serialisation. Store-and-forward: `latency` after the last bit.
  Time delay = cfg_.latency;
  if (cfg_.mode == SwitchMode::cut_through) {
    const Time in_tx = in.tx_time(p.size());
    delay = std::max(Time{}, cfg_.latency - in_tx);
  }
  Output& o = out_[*out];
  const Time when = std::max(sim_.now() + delay, o.last);  // keep each output's order
  o.last = when;
  o.pipeline.push_back({std::move(p), in.index(), in_class});
  ++stats_.forwarded;
  const uint16_t out_port = *out;
  sim_.at(when, [this, out_port] { reached_output(out_port); });
}

void IbSwitch::reached_output(uint16_t out) {
  Output& o = out_[out];
  Held h = std::move(o.pipeline.front());
  o.pipeline.pop_front();
  // IBA A10.2.1.1: an output port past its threshold marks what it
  // forwards, if it is the root of the congestion: a port whose VL has no
  // credits to send is a victim of congestion further on (its queue grows
  // because the next hop's does) and marks nothing, so that only the flows
  // through the root slow down. FECN is in BTH byte 4, outside the ICRC and
  // inside the VCRC.
  const Port& port = this->port(out);
  const uint8_t vl = h.packet.meta().vl & (Port::kClasses - 1);
  const bool victim = port.gate() && !port.gate()->may_send(vl, h.packet.size());
  if (!victim && o.queued + port.queued_bytes() > fecn_threshold_ && set_fecn(h.packet)) {
    ++stats_.fecn_marked;
    if (!h.packet.meta().crc_pending) fill_vcrc(h.packet.bytes());
  }
  o.queued += h.packet.size();
  // The port holds one packet a VL at most: the output's queue is the switch's.
  PortStats& st = this->port(out).stats();
  st.max_queue_bytes = std::max(st.max_queue_bytes, o.queued + port.queued_bytes());
  o.vl_queue[h.packet.meta().vl & (Port::kClasses - 1)].push_back(std::move(h));
  feed(out);
}

// Hands the port the head of every VL it holds nothing of: the port then
// arbitrates among the VLs whose next hop has credits.
void IbSwitch::feed(uint16_t out) {
  Output& o = out_[out];
  Port& port = this->port(out);
  for (uint8_t c = 0; c < Port::kClasses; ++c) {
    auto& q = o.vl_queue[c];
    if (q.empty() || port.queued_bytes(c) != 0) continue;
    const size_t n = q.front().packet.size();
    if (port.queued_bytes() + n > port.params().buffer_bytes) continue;
    Held h = std::move(q.front());
    q.pop_front();
    o.queued -= n;
    o.in_port_queue[c].push_back({h.in_port, h.in_class, static_cast<uint32_t>(n)});
    if (!port.send(std::move(h.packet))) {  // only when unconnected; routes avoid that
      o.in_port_queue[c].pop_back();
      this->port(h.in_port).release_ingress(h.in_class, n);
    }
  }
}

void IbSwitch::on_tx(uint16_t out, const Packet& p) {
  Output& o = out_[out];
  auto& q = o.in_port_queue[p.meta().vl & (Port::kClasses - 1)];
  if (q.empty()) return;
  o.on_wire.push_back(q.front());
  q.pop_front();
}

// The packet has left: its input buffer is free (its credits go back to the
// previous hop), and its VL may have the next one.
void IbSwitch::tx_done(uint16_t out) {
  Output& o = out_[out];
  if (!o.on_wire.empty()) {
    const Release r = o.on_wire.front();
    o.on_wire.pop_front();
    port(r.in_port).release_ingress(r.in_class, r.bytes);
  }
  feed(out);
}

}  // namespace rdmasim
