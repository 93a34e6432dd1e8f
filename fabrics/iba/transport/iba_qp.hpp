// The IBA transport for one queue pair (IBA chapter 9), written once for
// ib, roce_v1 and roce_v2: only the encapsulation below it differs.
//
// Three roles, each its own state machine:
//  - requester (9.7.2..9.7.4): turns send-queue WQEs into request packets,
//    segmented at the path MTU, with PSNs; go-back-N on NAK or timeout;
//  - responder (9.7.5): checks PSN and opcode sequence, validates keys,
//    places data, generates ACK/NAK, READ responses and atomic ACKs;
//  - completer (9.7.6, "requester side"): consumes ACKs, NAKs, READ
//    responses and atomic ACKs, completes WQEs, arms the retry timer.
// RC uses all three; UC has no ACKs and no retransmission; UD sends
// single-packet datagrams with a DETH. Each role's code is its own file
// (requester.cpp, completer.cpp, responder.cpp); iba_qp.cpp holds what
// they share. How an RC QP recovers lost packets (IBA's go-back-N, or IRN's
// selective repeat) is a strategy the roles call at named points
// (loss_recovery/loss_recovery.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "core/boxed_optional.hpp"
#include "core/engine.hpp"
#include "core/lazy_timer.hpp"
#include "fabrics/iba/iba_fabric.hpp"
#include "fabrics/iba/transport/cc/congestion_control.hpp"
#include "fabrics/iba/transport/headers.hpp"
#include "nodes/host/rnic.hpp"
#include "nodes/host/verbs.hpp"

namespace rdmasim {

struct IbaOpInfo;
class QpLossRecovery;

// The responder's steps, in the order a request passes them (IBA 9.7.5,
// rxe's resp_states); resp_step_name() gives the name a trace prints.
enum class RespStep : uint8_t {
  CheckPsn,
  Duplicate,
  OutOfSequence,
  CheckOpSequence,
  CheckOpValid,
  CheckResources,
  CheckLength,
  CheckRkey,
  Execute,
  Complete,
  Done
};
const char* resp_step_name(RespStep s);

class IbaQp final : public verbs::QueuePair, public TxSource {
 public:
  IbaQp(verbs::Device& d, verbs::ProtectionDomain& pd, uint32_t qpn, const verbs::QpInitAttr& init, Rnic& nic,
        IbaFabric& fabric);
  ~IbaQp() override;

  // TxSource: the NIC pulls frames one at a time when its port can take one.
  bool has_tx() const override;
  Packet next_frame() override;
  Time not_before() const override;

  // A packet for this QP arrived (transport headers parsed, payload follows).
  void receive(const IbaParsed& pkt, const Payload& payload, const IbaSource& src);

  struct Stats {
    uint64_t retransmitted_packets = 0, timeouts = 0, seq_naks_sent = 0, seq_naks_received = 0;
    uint64_t rnr_naks_sent = 0, rnr_naks_received = 0, duplicates = 0, acks_sent = 0, pkey_violations = 0;
  };
  const Stats& stats() const { return stats_; }
  // Its congestion control (nullptr: none) and its unacknowledged request bytes.
  const QpCongestionControl* congestion_control() const { return cc_.get(); }
  uint64_t in_flight_bytes() const { return sent_bytes_; }
  uint64_t retransmitted_packets() const override { return stats_.retransmitted_packets; }
  SendLimits send_limits() const override;

 protected:
  int check_send(const ibv_send_wr& wr) const override;
  void send_posted() override;
  void recv_posted() override;
  void state_changed(ibv_qp_state from) override;

 private:
  // The loss recovery strategies act as the roles do.
  friend class QpLossRecovery;
  friend class GoBackN;
  friend class IrnRecovery;

  // RTS, or SQD finishing what it had started: the requester and completer work.
  bool sending() const { return state_ == IBV_QPS_RTS || state_ == IBV_QPS_SQD; }

  // ---- requester (requester.cpp) ----
  bool requester_ready() const;
  Packet next_request();  // a packet the loss recovery sends again, else build_request()
  // The packet at the requester's cursor; a READ request asks for
  // `read_bytes` only when given (IRN asks for one hole of its responses).
  Packet build_request(uint32_t read_bytes = 0);
  Packet next_ud_request(verbs::SendWqe& w);
  void go_back_to(uint32_t psn);
  bool ask_for_ack(bool last);
  uint32_t packets_of(const verbs::SendWqe& w) const;
  bool copy_out(const verbs::SendWqe& w, uint64_t offset, Packet& p, std::span<std::byte> dst,
                ibv_wc_status& err);

  // ---- completer (completer.cpp) ----
  void on_ack(const IbaParsed& p);
  void on_read_response(const IbaParsed& p, const Payload& payload);
  void on_atomic_ack(const IbaParsed& p);
  void on_nak(const IbaParsed& p, const IrnExt* ext);
  void ack_through(uint32_t psn);                             // everything before `psn` is acknowledged
  uint32_t next_response_psn(const verbs::SendWqe& w) const;  // the response a READ expects next
  void complete_reads();
  void fail_front(ibv_wc_status status);
  void arm_retry_timer();
  void on_retry_timeout();
  void note_progress();
  void retry_from(uint32_t psn);
  bool spend_retry();

  // ---- responder (responder.cpp) ----
  // One arriving request and what its opcode says.
  struct RespPacket {
    RespPacket(const IbaParsed& parsed, const Payload& bytes, const IrnExt* extension = nullptr);
    const IbaParsed& p;
    Payload payload;
    const IrnExt* ext;  // IRN's extension header, when the packet had one
    const IbaOpInfo& info;
    bool send, write, read, atomic, first, last, imm;
    const verbs::MemoryRegion* mr = nullptr;  // the region check_rkey found
    uint32_t psn_span = 1;                    // PSNs it takes (a READ: its response packets)
  };
  void respond(const IbaParsed& p, const Payload& payload, const IrnExt* ext = nullptr);
  RespStep resp_step(RespStep s, RespPacket& r);
  RespStep check_psn(const RespPacket& r) const;
  RespStep duplicate(const RespPacket& r);
  RespStep out_of_sequence(const RespPacket& r);
  RespStep check_op_sequence(const RespPacket& r);
  RespStep check_op_valid(const RespPacket& r);
  RespStep check_resources(const RespPacket& r);
  RespStep check_length(const RespPacket& r);
  RespStep check_rkey(RespPacket& r);
  RespStep remote_access_error(const RespPacket& r);
  RespStep execute(RespPacket& r);
  RespStep execute_send(const RespPacket& r);
  RespStep execute_write(const RespPacket& r);
  void execute_atomic(const RespPacket& r);
  RespStep complete(const RespPacket& r);
  bool pkey_matches(uint16_t pkey) const;
  int read_atomic_queued() const;
  void respond_duplicate(const IbaParsed& p);
  void respond_ud(const IbaParsed& p, const Payload& payload, const IbaSource& src);
  bool place_recv(const Payload& payload);
  const verbs::MemoryRegion* remote_region(const IbaParsed& p, int access, uint64_t len) const;
  void class_c_error(const IbaParsed& p, uint8_t syndrome);
  void drop_uc_message();
  void queue_ack(uint32_t psn);
  void queue_nak(uint32_t psn, uint8_t syndrome);
  Packet next_response();

  // ---- congestion control: the receiver's feedback, the sender's seam ----
  void congestion_experienced();
  void on_cnp();
  void pace(size_t frame_bytes);
  bool window_allows() const;
  void track_sent(uint32_t psn, uint32_t bytes);
  void forget_sent_from(uint32_t psn);
  void cc_response(const IbaParsed& p, const IbaSource& src);
  void encap_request(Packet& p, const std::optional<IrnExt>& ext = std::nullopt);

  // ---- loss recovery (loss_recovery/) ----
  void connect_loss_recovery();

  Rnic& nic_;
  IbaFabric& fabric_;
  Stats stats_;

  // Each role's own state.
  struct RequesterState {
    size_t wqe = 0;         // index in sq_ of the WQE to send next
    uint64_t offset = 0;    // bytes of it already sent (or the READ's resume point)
    uint32_t psn = 0;       // next PSN to send
    uint32_t high_psn = 0;  // one past the highest PSN ever sent (retransmissions are before it)
    int rd_atomic_in_flight = 0;
    uint32_t noack_pkts = 0;  // request packets sent since the last AckReq
    bool rnr_wait = false;
    uint32_t drain_psn = 0;  // SQD: no request from this PSN on goes out (IBA 10.3.1)
  } req_;

  struct CompleterState {
    uint32_t unacked_psn = 0;  // oldest PSN not yet acknowledged
    int retry_left = 0;
    int rnr_left = 0;
    bool retrying = false;  // a go-back-N from retry_psn is under way
    uint32_t retry_psn = 0;
  } comp_;
  LazyTimer retry_timer_;  // the completer's local ACK timer
  EventId rnr_timer_;      // the completer's RNR wait

  // Congestion control
  std::unique_ptr<QpCongestionControl> cc_;  // the sender's algorithm, or nullptr
  const CcFeedback& fb_;                     // what this NIC does for the run's algorithm
  Time next_send_;                           // when its rate lets the next request frame go
  Time last_cnp_;                            // the notification point's last CNP to the peer
  bool cnp_sent_ = false;
  // Request packets not yet acknowledged, oldest first: their bytes make
  // the window's in-flight count, their send times the RTT samples. A run
  // of `count` packets from `psn` on, each of `bytes`, sent at `at` (or at
  // times nobody reads: no RTT samples), so that a message's full-MTU
  // packets are one entry, not one each (a k = 32 fat tree's 36,000
  // senders held 92 MiB of per-packet records).
  struct Sent {
    uint32_t psn;
    uint32_t count;
    uint32_t bytes;
    bool retransmitted;
    Time at;
  };
  void insert_sent(size_t i, const Sent& s);
  Ring<Sent> sent_;
  uint64_t sent_bytes_ = 0;
  // How lost packets are recovered: go_back_n(), shared, or own_recovery_.
  QpLossRecovery* recovery_;
  std::unique_ptr<QpLossRecovery> own_recovery_;  // a strategy with state of its own (IRN on RC)

  enum class InMessage : uint8_t { None, Send, Write };
  struct Response {
    enum Kind : uint8_t { Ack, ReadData, AtomicAck } kind;
    uint32_t psn;
    uint8_t syndrome;
    uint32_t msn;
    uint64_t va = 0;  // ReadData: next byte to send; AtomicAck: original value; IRN's NACK: its SACK PSN + 1
    uint32_t left = 0;
    uint32_t total = 0;
    const verbs::MemoryRegion* mr = nullptr;
    bool becn = false;  // Ack: echoes congestion (CE or FECN) of the packets it acknowledges
  };
  struct AtomicReplay {
    uint32_t psn;
    uint64_t orig;
  };
  struct ResponderState {
    uint32_t epsn = 0;
    uint32_t msn = 0;
    bool nak_sent = false;
    InMessage in_msg = InMessage::None;
    bool recv_active = false;
    verbs::RecvWqe recv;  // the receive WQE a multi-packet SEND is filling
    uint64_t recv_offset = 0;
    const verbs::MemoryRegion* write_mr = nullptr;
    uint64_t write_va = 0;
    uint64_t write_left = 0;
    uint32_t write_len = 0;    // the RETH DMA length of the WRITE in progress
    Ring<Response> responses;  // ACKs, NAKs, READ data and atomic ACKs to send
    Ring<AtomicReplay> atomic_replay;
    bool echo_becn = false;                  // the next ACK carries BECN (a request arrived CE or FECN)
    BoxedOptional<IntStack> echo_telemetry;  // HPCC: the latest request's telemetry, for the next ACK
  } resp_;
};

}  // namespace rdmasim
