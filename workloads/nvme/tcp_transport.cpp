#include "workloads/nvme/tcp_transport.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "nodes/host/kernel/socket_stack.hpp"
#include "nodes/host/kernel/stream_socket.hpp"
#include "workloads/nvme/wire/tcp_pdu.hpp"
#include "workloads/workload.hpp"

namespace rdmasim::nvme {

using namespace tcp;

namespace {

constexpr uint32_t kAdminCapsule = 8192;    // in-capsule data on the admin queue (NVME_TCP_ADMIN_CCSZ)
constexpr uint32_t kMaxH2CData = 0x400000;  // the target's MAXH2CDATA (nvmet-tcp's)
constexpr size_t kRxBuffer = 64 * 1024;     // what one read of the socket takes at most, to begin with

// A PDU of type `t` with `hlen` bytes of header and room for `data` bytes
// of data; its common header written, the rest zero.
std::vector<std::byte> new_pdu(PduType t, uint8_t flags, size_t hlen, size_t data, uint8_t digests) {
  const Ch ch = pdu_header(t, flags, hlen, data, digests);
  std::vector<std::byte> p(ch.plen);
  ch.emit(p);
  return p;
}

std::span<std::byte> pdu_data(std::vector<std::byte>& p) {
  const Ch ch = *Ch::parse(p);
  return std::span(p).subspan(ch.data_offset(), ch.data_len());
}

// One end of an NVMe/TCP connection: its socket, the thread that reads
// PDUs from it and the thread that writes them (everything queued goes out
// in one send, as io_work pushes what it has with MSG_MORE).
class PduStream {
 public:
  PduStream(Host& h, Process& rx, Process& tx, CpuUse use)
      : host_(h),
        rx_p_(rx),
        tx_p_(tx),
        use_(use),
        socket_(h.nic().sim(), SocketCosts::of(h.config())),
        tx_ready_(h.nic().sim()) {}
  virtual ~PduStream() { tcp_.reset(); }

  // Takes the connection's end; a server listens at once.
  void open(std::unique_ptr<StreamConnection> end, bool server) {
    tcp_ = std::move(end);
    if (server) tcp_->listen();
    reader(server);
    writer();
  }
  // Ends the connection (kernel_sock_shutdown: a FIN) and stops using it.
  void shut() {
    lose();
    if (tcp_) tcp_->close();
  }
  // The client's connect(), in process `p`.
  Task connect(Process& p, bool& ok) { co_await socket_.connect(host_.cpu(), p, ok); }
  void send(std::vector<std::byte> pdu) {
    if (closed_) return;
    txq_.push_back(std::move(pdu));
    tx_ready_.notify();
  }
  void owe(Time t) { owed_ = owed_ + t; }
  bool closed() const { return closed_; }
  StreamSocket& socket() { return socket_; }
  uint8_t digests = 0;  // as the ICReq and ICResp agreed

 protected:
  // A whole PDU (its digests not yet checked); the reader waits for it.
  virtual Task on_pdu(std::span<const std::byte> pdu) = 0;
  virtual void on_lost() = 0;
  // The connection is unusable (reset, or a PDU that breaks the protocol).
  void lose() {
    if (closed_) return;
    closed_ = true;
    tx_ready_.notify();
    on_lost();
  }
  Host& host_;
  Process& rx_p_;
  Process& tx_p_;
  CpuUse use_;

 private:
  Task reader(bool server) {
    Cpu& cpu = host_.cpu();
    if (server) {
      bool ok = false;
      co_await socket_.accept(cpu, rx_p_, ok);
      if (!ok) co_return lose();
    }
    std::vector<std::byte> rx(kRxBuffer);
    size_t have = 0;
    while (!closed_) {
      size_t got = 0;
      co_await socket_.recv(cpu, rx_p_, std::span(rx).subspan(have), got);
      if (got == 0) co_return lose();
      have += got;
      size_t at = 0;
      while (have - at >= kChLen) {
        const auto ch = Ch::parse(std::span(rx).subspan(at, kChLen));
        if (!ch) co_return lose();
        if (have - at < ch->plen) break;
        co_await on_pdu(std::span(rx).subspan(at, ch->plen));
        if (closed_) co_return;
        at += ch->plen;
      }
      std::memmove(rx.data(), rx.data() + at, have - at);
      have -= at;
      // Room for the PDU begun, and for more.
      size_t need = have + kChLen;
      if (have >= kChLen) need = std::max<size_t>(need, Ch::parse(rx)->plen);
      if (need > rx.size() || have == rx.size()) rx.resize(std::max(need, 2 * rx.size()));
    }
  }
  Task writer() {
    Cpu& cpu = host_.cpu();
    while (true) {
      while (txq_.empty() && !closed_) co_await tx_ready_;
      if (closed_) co_return;
      if (owed_.count() > 0) {
        const Time t = owed_;
        owed_ = Time{};
        co_await cpu.run(tx_p_, use_, t);
      }
      std::vector<std::byte> batch;
      for (const auto& p : txq_) batch.insert(batch.end(), p.begin(), p.end());
      txq_.clear();
      bool ok = false;
      co_await socket_.send(cpu, tx_p_, batch, ok);
      if (!ok) co_return lose();
    }
  }

  StreamSocket socket_;
  std::unique_ptr<StreamConnection> tcp_;
  std::deque<std::vector<std::byte>> txq_;
  Trigger tx_ready_;
  Time owed_;
  bool closed_ = false;
};

}  // namespace

// ---- target

namespace {

struct TcpTargetQueue final : PortQueue, PduStream {
  TcpTargetQueue(NvmeTarget& t, TargetQueue& q, Process& rx, Process& tx, CpuUse use)
      : PduStream(t.host(), rx, tx, use), t_(t), q_(q) {}

  // In-capsule data the queue takes: 8 KiB on the admin queue (and before
  // the Connect says which queue it is), the target's inline_data_size on an I/O queue.
  uint32_t capsule_limit() const {
    return q_.sized && q_.qid ? t_.config().inline_data_size
                              : std::max(kAdminCapsule, t_.config().inline_data_size);
  }

  Task on_pdu(std::span<const std::byte> pdu) override {
    const Ch ch = *Ch::parse(pdu);
    if (ch.type == PduType::ic_req) {
      const auto ic = Ic::parse(ch, pdu);
      if (!ic || ic->pfv != 0 || initialized_) co_return lose();
      initialized_ = true;
      digests = ic->digests & (kDgstHeader | kDgstData);
      std::vector<std::byte> r(kIcLen);
      Ic{false, digests, kMaxH2CData, 0, 0}.emit(r);
      send(std::move(r));
      co_return;
    }
    if (!initialized_ ||
        !digests_ok(pdu)) {  // no ICReq first, or a digest error: nvmet-tcp ends the connection
      t_.count_error();
      co_return lose();
    }
    if (ch.type == PduType::capsule_cmd && ch.hlen == kCmdHlen) {
      co_await host_.cpu().run(rx_p_, use_, t_.io_cost());
      // The SQE and the in-capsule data after it, as far as the queue takes.
      const uint32_t data = std::min(ch.data_len(), capsule_limit());
      std::vector<std::byte> capsule(kSqeLen + data);
      std::copy_n(pdu.begin() + kChLen, kSqeLen, capsule.begin());
      std::copy_n(pdu.begin() + ch.data_offset(), data, capsule.begin() + kSqeLen);
      t_.on_command(q_, capsule, static_cast<uint32_t>(kSqeLen + ch.data_len()));
      co_return;
    }
    if (ch.type == PduType::h2c_data && ch.hlen == kDataHlen) {
      const DataHeader h = DataHeader::parse(pdu);
      if (h.cccid >= q_.cmds.size() || !q_.cmds[h.cccid].busy || h.ttag != h.cccid) {
        t_.count_error();
        co_return lose();  // no transfer it belongs to: a PDU sequence error
      }
      TargetCmd& c = q_.cmds[h.cccid];
      if (uint64_t{h.offset} + h.length > c.len || h.length != ch.data_len() || h.offset != c.arrived)
        co_return t_.transfer_failed(q_, c);
      const auto in = pdu.subspan(ch.data_offset(), h.length);
      std::copy(in.begin(), in.end(), host_.memory().view(c.buf + h.offset, h.length).begin());
      c.arrived += h.length;
      if (ch.flags & kFlagLast && c.arrived == c.len) t_.data_arrived(q_, c);
      co_return;
    }
    co_return lose();  // H2CTermReq, or a PDU a host does not send
  }
  void on_lost() override { t_.queue_gone(q_); }

  NvmeTarget& t_;
  TargetQueue& q_;
  bool initialized_ = false;  // the ICReq has come
};

TcpTargetQueue& tq(TargetQueue& q) { return static_cast<TcpTargetQueue&>(*q.port); }

}  // namespace

TcpTargetPort::TcpTargetPort(NvmeTarget& t) : t_(t) {}
TcpTargetPort::~TcpTargetPort() = default;

std::unique_ptr<StreamConnection> TcpTargetPort::accept(Host& from, StreamSocket& client,
                                                        uint32_t client_iss) {
  Host& h = t_.host();
  const StorageTargetConfig& c = t_.config();
  // Its qid and size come with its Connect.
  TargetQueue& q = t_.add_queue(from, 0, c.max_queue_size);
  q.sized = false;
  const int cores = std::max(1, std::min<int>(static_cast<int>(c.cores), h.cpu().cores()));
  const int core = static_cast<int>(q.index) % cores;
  const std::string name = "nvmet_tcp" + std::to_string(q.index);
  Process& rx = h.cpu().spawn(name + " rx", Process::Kind::io, true, core);
  Process& tx = h.cpu().spawn(name + " tx", Process::Kind::io, true, core);
  auto pq = std::make_unique<TcpTargetQueue>(t_, q, rx, tx,
                                             c.cpu == TargetCpu::poll ? CpuUse::user : CpuUse::syscall);
  TcpTargetQueue& s = *pq;
  q.port = std::move(pq);
  auto [client_end, server_end] = socket_stack_of(from, "an NVMe/TCP host")
                                      .connect(client, socket_stack_of(h, "an NVMe/TCP target"), s.socket(),
                                               client_iss, static_cast<uint32_t>(t_.rng().next()), kNvmePort);
  Simulator::Scope as(t_.env().sim, h.context());
  s.open(std::move(server_end), true);
  return std::move(client_end);
}

// R2T: the whole of the data, which the host sends in H2CData PDUs.
void TcpTargetPort::fetch(TargetQueue& q, TargetCmd& c) {
  TcpTargetQueue& s = tq(q);
  auto p = new_pdu(PduType::r2t, 0, kDataHlen, 0, s.digests);
  DataHeader{c.c.cid, c.c.cid, 0, static_cast<uint32_t>(c.len)}.emit(p);
  seal_digests(p);
  s.send(std::move(p));
}

// One C2HData PDU with all of it (nvmet-tcp's), the CapsuleResp after it.
bool TcpTargetPort::send_data(TargetQueue& q, TargetCmd& c) {
  TcpTargetQueue& s = tq(q);
  auto p = new_pdu(PduType::c2h_data, kFlagLast, kDataHlen, c.len, s.digests);
  DataHeader{c.c.cid, 0, 0, static_cast<uint32_t>(c.len)}.emit(p);
  const auto from = t_.host().memory().view(c.buf, c.len);
  std::copy(from.begin(), from.end(), pdu_data(p).begin());
  seal_digests(p);
  s.send(std::move(p));
  return !s.closed();
}

void TcpTargetPort::send_completion(TargetQueue& q, TargetCmd&, std::span<const std::byte> cqe) {
  TcpTargetQueue& s = tq(q);
  auto p = new_pdu(PduType::capsule_resp, 0, kRespHlen, 0, s.digests);
  std::copy(cqe.begin(), cqe.end(), p.begin() + kChLen);
  seal_digests(p);
  s.send(std::move(p));
}

void TcpTargetPort::owe(TargetQueue& q, Time t) { tq(q).owe(t); }

// nvmet_tcp_delete_ctrl: the queue's socket shut down (a FIN), which the host sees as its connection failing.
void TcpTargetPort::disconnect(TargetQueue& q) { tq(q).shut(); }

// ---- host

namespace {

class TcpHostQueue final : public HostQueue, PduStream {
 public:
  TcpHostQueue(WorkloadEnv& env, const HostQueueSpec& s, Host& host, NvmeTarget& target,
               const NvmeJobConfig& job, uint64_t seed)
      : PduStream(host, host.spawn(s.name + "/" + std::to_string(s.qid) + " rx", Process::Kind::io, true),
                  host.spawn(s.name + "/" + std::to_string(s.qid) + " tx", Process::Kind::io, true),
                  CpuUse::syscall),
        env_(env),
        s_(s),
        target_(target),
        want_(static_cast<uint8_t>((job.hdgst ? kDgstHeader : 0) | (job.ddgst ? kDgstData : 0))),
        iss_(static_cast<uint32_t>(Rng::stream(seed, s.name + "/iss" + std::to_string(s.qid)).next())),
        busy_(s.entries),
        completed_(env.sim),
        ic_(env.sim) {
    // A reconnect's queue keeps the buffers (the driver's tag set).
    const auto* before = static_cast<const TcpHostQueue*>(s.previous);
    data_ = before ? before->data_ : host_.memory().allocate(uint64_t{s.data_slots} * s.slot_bytes);
  }

  // nvme_tcp_stop_queue: the socket shut down.
  void stop() override { shut(); }
  std::string lost() const override {
    return "its TCP connection failed (reset, timed out, or a PDU that broke the protocol)";
  }

  uint64_t data(uint32_t slot) const override { return data_ + uint64_t{slot} * s_.slot_bytes; }

  // connect(), then ICReq and ICResp.
  Task connect(uint16_t, bool& ok, std::string& why) override {
    open(static_cast<TcpTargetPort&>(target_.port()).accept(host_, socket(), iss_), false);
    co_await PduStream::connect(*s_.p, ok);
    if (!ok) {
      why = "the TCP connection to port 4420 failed";
      co_return;
    }
    std::vector<std::byte> req(kIcLen);
    Ic{true, want_, 0, 0, 0}.emit(req);  // MAXR2T 0: one R2T outstanding per command
    send(std::move(req));
    while (!ic_done_ && !closed()) co_await ic_;
    ok = ic_done_ && !closed() && digests == want_;
    if (!ok) why = ic_done_ && !closed() ? "the ICResp's digests differ from the ICReq's" : "no ICResp";
  }

  Task submit(Command cmd, uint32_t len, bool to_controller, bool& ok) override {
    const uint32_t capsule = s_.qid ? target_.config().inline_data_size : kAdminCapsule;
    const bool in_capsule = to_controller && len > 0 && len <= capsule;
    cmd.sgl = in_capsule ? Sgl::in_capsule(len) : Sgl::transport_block(len);
    // io_uring_enter, the block layer and nvme_tcp_queue_rq in the job's context.
    co_await host_.cpu().run(*s_.p, CpuUse::syscall, host_.config().kernel.syscall);
    auto p = new_pdu(PduType::capsule_cmd, 0, kCmdHlen, in_capsule ? len : 0, digests);
    cmd.emit(std::span(p).subspan(kChLen, kSqeLen));
    if (in_capsule) {
      const auto from = host_.memory().view(data(cmd.cid), len);
      std::copy(from.begin(), from.end(), pdu_data(p).begin());
    }
    seal_digests(p);
    busy_[cmd.cid] = true;
    send(std::move(p));
    ok = !closed();
  }

  Task reap(std::vector<Completion>& done, uint64_t& errors, bool& failed) override {
    while (done_.empty() && !closed()) co_await completed_;
    // The job wakes and reaps its completions (io_uring_enter returns).
    co_await host_.cpu().run(*s_.p, CpuUse::syscall, host_.config().kernel.syscall);
    done.insert(done.end(), done_.begin(), done_.end());
    done_.clear();
    errors += std::exchange(errors_, 0);
    failed = closed();
  }

 private:
  Task on_pdu(std::span<const std::byte> pdu) override {
    const Ch ch = *Ch::parse(pdu);
    if (ch.type == PduType::ic_resp) {
      const auto ic = Ic::parse(ch, pdu);
      if (!ic || ic->pfv != 0 || ic->limit < 4096) co_return lose();
      digests = ic->digests;
      max_h2c_ = ic->limit;
      ic_done_ = true;
      ic_.notify();
      co_return;
    }
    // The controller's PDUs after ICResp all have a 24-byte header.
    if (!ic_done_ || ch.hlen != kRespHlen || !digests_ok(pdu)) {
      ++errors_;
      co_return lose();
    }
    static_assert(kRespHlen == kDataHlen);
    switch (ch.type) {
      case PduType::capsule_resp: {
        const auto cqe = Completion::parse(pdu.subspan(kChLen, kCqeLen));
        if (!cqe || cqe->cid >= busy_.size() || !busy_[cqe->cid]) {
          ++errors_;
          break;
        }
        busy_[cqe->cid] = false;
        done_.push_back(*cqe);
        completed_.notify();
        break;
      }
      case PduType::c2h_data: {
        const DataHeader h = DataHeader::parse(pdu);
        if (h.cccid >= busy_.size() || !busy_[h.cccid] || uint64_t{h.offset} + h.length > s_.slot_bytes ||
            h.length != ch.data_len()) {
          ++errors_;
          co_return lose();
        }
        const auto in = pdu.subspan(ch.data_offset(), h.length);
        std::copy(in.begin(), in.end(), host_.memory().view(data(h.cccid) + h.offset, h.length).begin());
        break;
      }
      case PduType::r2t: {
        // H2CData PDUs of at most MAXH2CDATA bytes for what the R2T asks.
        const DataHeader h = DataHeader::parse(pdu);
        if (h.cccid >= busy_.size() || !busy_[h.cccid] || uint64_t{h.offset} + h.length > s_.slot_bytes) {
          ++errors_;
          co_return lose();
        }
        for (uint32_t off = 0; off < h.length;) {
          const uint32_t n = std::min(h.length - off, max_h2c_);
          auto p = new_pdu(PduType::h2c_data, off + n == h.length ? kFlagLast : 0, kDataHlen, n, digests);
          DataHeader{h.cccid, h.ttag, h.offset + off, n}.emit(p);
          const auto from = host_.memory().view(data(h.cccid) + h.offset + off, n);
          std::copy(from.begin(), from.end(), pdu_data(p).begin());
          seal_digests(p);
          send(std::move(p));
          off += n;
        }
        break;
      }
      default:  // C2HTermReq, or a PDU a controller does not send
        ++errors_;
        co_return lose();
    }
  }
  void on_lost() override {
    completed_.notify();
    ic_.notify();
  }

  WorkloadEnv& env_;
  HostQueueSpec s_;
  NvmeTarget& target_;
  uint8_t want_;  // the digests the host asks for
  uint32_t iss_;
  uint64_t data_ = 0;
  uint32_t max_h2c_ = 0;
  bool ic_done_ = false;
  std::vector<bool> busy_;  // by CID: a command whose completion has not come
  std::vector<Completion> done_;
  uint64_t errors_ = 0;
  Trigger completed_, ic_;
};

}  // namespace

std::unique_ptr<HostQueue> make_tcp_host_queue(WorkloadEnv& env, const HostQueueSpec& spec, Host& host,
                                               NvmeTarget& target, const NvmeJobConfig& job, uint64_t seed) {
  return std::make_unique<TcpHostQueue>(env, spec, host, target, job, seed);
}

}  // namespace rdmasim::nvme
