// A verbs RC queue pair on an iWARP RNIC: the verbs API of nodes/host/
// verbs.hpp mapped onto an IwarpEndpoint (RDMAP/DDP/MPA) over a
// TcpConnection, as siw and iw_cxgb4 map it.
//
// Connection. iWARP connects with rdma_cm; the model keeps the verbs
// sequence every fabric uses (INIT, RTR, RTS with the peer's address and
// QPN) and derives the rest: the peer's IP address from ah_attr.grh.dgid
// (IPv4-mapped for IPv4), the TCP ports: the passive end's listening port
// and the active end's ephemeral one (IwarpFabric::port_of). At RTR the
// connection is created: the end whose (address, QPN) is lower opens
// actively (TCP SYN, then the MPA Request), the other listens. Work posted
// in RTS before the MPA exchange ends waits in the endpoint's queue. When
// the exchange ends, a QP its consumer left in RTR moves to RTS, as the
// connection manager leaves a connected QP (siw at both ends); its
// consumer's own RTR -> RTS is still taken afterwards.
//
// Keys. An MR's lkey and rkey are its STags; the tagged offset is the
// virtual address (the MR is not zero-based).
//
// What is refused, as siw does: QP types other than RC at ibv_create_qp
// (EOPNOTSUPP), atomics and *_WITH_IMM at ibv_post_send (EINVAL: iWARP has
// neither, RFC 5040). A READ gathers into one SGE only (EINVAL otherwise).
//
// Completions. A SEND or WRITE completes when TCP has its last byte
// acknowledged (a hardware RNIC retransmits from host memory; siw completes
// earlier, when its TCP takes the bytes), a READ when its last Read Response
// is placed, in posting order. A received Terminate completes the WQE its
// quoted DDP header names with IBV_WC_REM_ACCESS_ERR (a too-short receive
// buffer or a missing one: IBV_WC_REM_INV_REQ_ERR; others
// IBV_WC_REM_OP_ERR), the finished WQEs before it successfully; the QP
// enters the error state and flushes the rest (IBV_WC_WR_FLUSH_ERR). A
// connection TCP gives up on (IwarpEndpoint waits for the peer within TCP's
// retransmission limit too) completes the oldest unfinished WQE with
// IBV_WC_RETRY_EXC_ERR.
//
// Disconnection. MPA has no message for it (RFC 5044, RFC 6581): the TCP
// connection's close is the connection's end, as iw_cm has it. The QP
// leaving RTS or RTR for ERR or RESET (rdma_disconnect, ibv_modify_qp,
// ibv_destroy_qp) ends the stream: what the endpoint had not handed to TCP
// is dropped, and TCP sends a FIN after the bytes it holds (siw_qp_modify,
// siw_qp_cm_drop); data the peer sends after it gets a RST (the socket siw
// released reads no more). The peer's QP, on that FIN, completes what had finished,
// enters ERR and flushes the rest (IBV_WC_WR_FLUSH_ERR: siw_qp_llp_close),
// and its consumer is told (on_disconnected: siw's IW_CM_EVENT_DISCONNECT,
// rdma_cm's RDMA_CM_EVENT_DISCONNECTED); a reset or a connection TCP gave
// up on is told the same way, after the failure above.
//
// The RNIC acknowledges the TCP segment that ends a message (a Write placed,
// a Send delivered) at once instead of after the delayed-ACK timer: the
// requester completes on that ACK, and a 40 us delayed ACK would otherwise be
// all of a small message's latency.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>

#include "core/engine.hpp"
#include "fabrics/ip/tcp/tcp_connection.hpp"
#include "fabrics/iwarp/iwarp_endpoint.hpp"
#include "nodes/host/rnic.hpp"
#include "nodes/host/verbs.hpp"

namespace rdmasim {

class IwarpFabric;

class IwarpQp final : public verbs::QueuePair, public TxSource, private IwarpMemory, private IwarpEvents {
 public:
  IwarpQp(verbs::Device& d, verbs::ProtectionDomain& pd, uint32_t qpn, const verbs::QpInitAttr& init,
          Rnic& nic, IwarpFabric& fabric);
  ~IwarpQp() override;

  // TxSource: the next TCP segment with IP and Ethernet in front.
  bool has_tx() const override;
  // An iWARP QP's states are RDMAP's (RFC 5040 has no send queue drain or error state).
  bool has_send_queue_states() const override { return false; }
  Packet next_frame() override;

  // A TCP segment of this connection (bytes from the TCP header on).
  void tcp_input(Packet p, bool ce);

  TcpConnection* tcp() const { return tcp_.get(); }
  uint64_t retransmitted_packets() const override;
  IwarpEndpoint* endpoint() const { return ep_.get(); }
  bool active() const { return active_; }
  // What its MPA request (active end) or reply (passive end) carries after
  // IRD and ORD: the consumer's private data.
  bool set_connect_private_data(std::span<const std::byte> d) override {
    private_data_.assign(d.begin(), d.end());
    return true;
  }
  // Called once when the peer ends the established connection (its FIN, or
  // a reset or TCP's giving up), after the QP entered ERR.
  bool on_connection_closed(std::function<void()> f) override {
    on_disconnected_ = std::move(f);
    return true;
  }

 protected:
  int check_send(const ibv_send_wr& wr) const override;
  void send_posted() override;
  void recv_posted() override;
  void state_changed(ibv_qp_state from) override;

 private:
  // IwarpMemory: STags are the MRs' keys, the tagged offset is the VA.
  StagStatus resolve(uint32_t stag, uint64_t to, uint64_t length, IwarpAccess access,
                     BufferPiece& out) override;
  // IwarpEvents.
  void iwarp_send_done(uint64_t id) override { done(id); }
  void iwarp_write_done(uint64_t id) override { done(id); }
  void iwarp_read_done(uint64_t id) override { done(id); }
  void iwarp_recv(const IwarpRecv& r) override;
  void iwarp_need_recv() override;
  void iwarp_write_placed(uint32_t, uint64_t, uint64_t) override;
  void iwarp_established(std::span<const std::byte>) override;
  void iwarp_rejected(std::span<const std::byte>) override;
  void iwarp_terminate(const TermError& e, bool local, std::optional<uint64_t> wr_id) override;
  void iwarp_disconnected() override;
  void iwarp_closed() override;
  void tell_disconnected();
  // In ERR or RESET, the QP has left its connection (siw_qp_cm_drop): what
  // the connection still reports (the peer's FIN crossing ours) is not its.
  bool left_connection() const { return state_ == IBV_QPS_ERR || state_ == IBV_QPS_RESET; }

  void open_connection();
  void hand_next();
  // What the stream sends of `w`: its inline data, its one SGE in place, or
  // its SGEs gathered into it; nullopt when an SGE is outside its region.
  std::optional<BufferPiece> message_bytes(verbs::SendWqe& w);
  void hand_recv(size_t index);  // rq_[index] to the endpoint
  void done(uint64_t seq);
  void schedule_completions();
  void complete_in_order();
  void fail(ibv_wc_status status, std::optional<uint64_t> wr_id = std::nullopt);

  Rnic& nic_;
  IwarpFabric& fabric_;
  std::array<uint8_t, 16> remote_{};  // the peer's address (IPv4-mapped for IPv4)
  bool active_ = false;
  std::unique_ptr<TcpConnection> tcp_;
  std::unique_ptr<IwarpEndpoint> ep_;  // after tcp_: goes first

  // Per WQE of sq_ (same order): the endpoint reported it finished. WQEs
  // are handed to the endpoint in order, so the handed ones are a prefix.
  std::deque<bool> finished_;
  size_t handed_ = 0;
  uint64_t sq_base_ = 0;  // endpoint wr_id of sq_.front()
  uint64_t rq_base_ = 0;  // endpoint wr_id of rq_.front()
  size_t rq_handed_ = 0;
  bool completion_pass_ = false;
  std::vector<std::byte> private_data_;
  bool established_ = false;  // the MPA exchange ended: a close is the consumer's disconnect
  std::function<void()> on_disconnected_;
};

}  // namespace rdmasim
