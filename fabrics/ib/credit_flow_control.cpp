#include "fabrics/ib/credit_flow_control.hpp"

#include <algorithm>
#include <stdexcept>

#include "fabrics/ib/virtual_lanes.hpp"
#include "nodes/node.hpp"

namespace rdmasim {

CreditChannel::CreditChannel(Simulator& sim, Port& sender, Port& receiver, uint64_t buffer_bytes,
                             uint8_t data_vls, bool receiver_frees_on_arrival)
    : sim_(sim),
      sender_(sender),
      receiver_(receiver),
      data_vls_(modelled_data_vls(data_vls)),
      limit_(buffer_bytes / data_vls_ / kCreditBlock),
      frees_on_arrival_(receiver_frees_on_arrival) {
  // Link initialisation advertises each VL's whole buffer (IBA 7.9.4.1).
  for (uint8_t vl = 0; vl < data_vls_; ++vl) credits_[vl] = limit_;
}

void CreditChannel::sent(uint8_t vl, size_t bytes) {
  const uint64_t n = credit_blocks(bytes);
  if (n > credits_[vl]) throw std::logic_error("credit flow control: a packet left without credits");
  credits_[vl] -= n;
  ++stats_.packets;
}

void CreditChannel::remote_update(Time at, uint64_t order, uint8_t vl, uint64_t blocks) {
  if (vl >= data_vls_)
    throw std::runtime_error("credit flow control: an update for a VL the link does not have");
  sim_.place(at, order, sender_.owner().context(), [this, vl, blocks] { credit_arrives(vl, blocks); });
}

void CreditChannel::credit_arrives(uint8_t vl, uint64_t blocks) {
  credits_[vl] += blocks;
  sender_.kick();
}

void CreditChannel::hold(uint8_t vl, size_t bytes) {
  const uint64_t n = credit_blocks(bytes);
  if (frees_on_arrival_) {
    give_back(vl, n);
    return;
  }
  occupied_[vl] += n;
  if (occupied_[vl] > limit_) ++stats_.overruns;
  stats_.peak_blocks = std::max(stats_.peak_blocks, occupied_[vl]);
}

void CreditChannel::release(uint8_t vl, size_t bytes) {
  if (frees_on_arrival_) return;  // given back when it arrived
  const uint64_t n = credit_blocks(bytes);
  occupied_[vl] -= std::min(n, occupied_[vl]);
  give_back(vl, n);
}

void CreditChannel::lost(uint8_t vl, size_t bytes) {
  // It took credits when it left; the receiver never holds it.
  ++stats_.lost;
  give_back(vl, credit_blocks(bytes));
}

void CreditChannel::give_back(uint8_t vl, uint64_t blocks) {
  // The flow-control update reaches the sender a link delay later and runs
  // as the sending node (core/engine.hpp: contexts), keyed by this one.
  const Time at = sim_.now() + sender_.params().delay;
  const uint64_t order = sim_.next_order();
  RemoteLink* remote = sender_.remote();
  if (remote && !sim_.runs(sender_.owner().context())) {
    remote->gate_update(sender_, at, order, vl, blocks);
    return;
  }
  sim_.place(at, order, sender_.owner().context(), [this, vl, blocks] { credit_arrives(vl, blocks); });
}

CreditLink install_credit_flow_control(Simulator& sim, Port& a, Port& b, uint64_t buffer_bytes,
                                       uint8_t data_vls, bool a_frees_on_arrival, bool b_frees_on_arrival) {
  CreditLink link{std::make_shared<CreditChannel>(sim, a, b, buffer_bytes, data_vls, b_frees_on_arrival),
                  std::make_shared<CreditChannel>(sim, b, a, buffer_bytes, data_vls, a_frees_on_arrival)};
  for (const auto& ch : {link.a_to_b, link.b_to_a}) {
    Port& s = ch->sender();
    s.classify_by_vl(true);
    s.set_gate(ch.get());
    ch->receiver().set_meter(ch.get());
    // The sender's observers own the channel: it lives as long as the port.
    s.on_drop([ch](Time, Packet&) {});
  }
  return link;
}

}  // namespace rdmasim
