#include "nodes/host/rnic.hpp"

#include "nodes/host/verbs.hpp"

namespace rdmasim {

Rnic::Rnic(Simulator& sim, PacketPool& pool, HostMemory& memory, Port& port, const NicConfig& cfg)
    : sim_(sim),
      pool_(pool),
      port_(port),
      cfg_(cfg),
      device_(std::make_unique<verbs::Device>(*this, memory)) {
  port_.on_tx_ready([this] { pump(); });
}

Rnic::~Rnic() {
  // QPs unregister themselves from the scheduler as the device goes.
  device_.reset();
}

void Rnic::wake(TxSource& s) {
  if (!s.scheduled_) {
    s.scheduled_ = true;
    ready_.push_back(&s);
  }
  pump();
}

void Rnic::forget(TxSource& s) {
  sim_.cancel(s.paced_);
  s.paced_ = {};
  if (!s.scheduled_) return;
  ready_.remove_if([&s](TxSource* x) { return x == &s; });
  s.scheduled_ = false;
}

// Round robin over sources with work, one frame each, while the port has room.
void Rnic::pump() {
  pump_frames();
  // Hear from the port when a frame leaves only while there is more to send.
  port_.want_tx_ready(!ready_.empty());
}

void Rnic::pump_frames() {
  while (!ready_.empty() && port_.queued_frames() < cfg_.tx_queue_frames) {
    TxSource* s = ready_.take_front();
    s->scheduled_ = false;
    if (!s->has_tx()) continue;
    if (const Time t = s->paced_source_ ? s->not_before() : Time{}; t > sim_.now()) {
      // Held back by its rate: it comes back in turn when its time comes.
      if (!s->paced_)
        s->paced_ = sim_.at(t, [this, s] {
          s->paced_ = {};
          wake(*s);
        });
      continue;
    }
    Packet p = s->next_frame();
    if (s->has_tx()) {
      s->scheduled_ = true;
      ready_.push_back(s);
    }
    if (!p) continue;
    ++stats_.frames_sent;
    port_.send(std::move(p));
  }
}

void Rnic::receive(Packet p) {
  ++stats_.frames_received;
  rx_pipe_.push_back(std::move(p));
  sim_.after(cfg_.rx_pipeline, [this] { rx_done(); });
}

void Rnic::rx_done() { fabric_->receive(rx_pipe_.take_front()); }

void Rnic::send_cnp(Packet p) {
  ++stats_.cnps_sent;
  port_.send(std::move(p));
}

Time Rnic::doorbell_delay(bool inline_pio, bool reads_payload) const {
  // A doorbell is a posted PCIe write; with a DMA doorbell the NIC then reads
  // the WQE (a PCIe round trip). PIO (BlueFlame) writes the WQE itself.
  // Data not inline is then read from host memory by DMA: one more round
  // trip before the first byte can go (the rest streams behind it).
  if (inline_pio) return cfg_.pcie_latency;
  const Time wqe = cfg_.doorbell == Doorbell::pio ? cfg_.pcie_latency : cfg_.pcie_latency * 3;
  return reads_payload ? wqe + cfg_.pcie_latency * 2 : wqe;
}

void Rnic::deliver_cqe(verbs::CompletionQueue& cq, const ibv_wc& wc, bool solicited) {
  ++stats_.cqes;
  cqe_pipe_.push_back({&cq, wc, solicited});
  sim_.after(cfg_.pcie_latency, [this] {
    const CqeWrite w = cqe_pipe_.take_front();
    w.cq->push(w.wc, w.solicited);
  });
}

}  // namespace rdmasim
