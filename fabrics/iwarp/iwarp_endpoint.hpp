// One end of an iWARP connection: RDMAP (RFC 5040) over DDP (RFC 5041)
// over MPA (RFC 5044) over a TcpConnection.
//
// Life of a connection:
//   1. TCP handshake (the caller connects or listens the TcpConnection).
//   2. MPA startup (RFC 5044 connection setup): the initiator sends the MPA Request,
//      the responder answers with the MPA Reply; they settle CRCs and
//      markers and carry private data (the rdma_cm connection data).
//   3. Full operation: RDMAP messages, each cut into DDP segments that fit
//      one FPDU in one TCP segment (MULPDU). Sends and Read Requests go to
//      the peer's untagged queues 0 and 1, RDMA Writes and Read Responses
//      straight to tagged buffers named by STag and TO.
//   4. An error ends the stream with a Terminate (queue 2) naming the
//      layer, error type and code, and the TCP connection closes.
//   5. MPA has no disconnect message (RFC 5044, RFC 6581): a connection
//      ends with its TCP stream. The QP leaving RTS (rdma_disconnect, an
//      error) disconnects: what was not handed to TCP is dropped and TCP
//      sends a FIN after the bytes it holds (siw_qp_cm_drop, sock_release);
//      data the peer still sends gets a RST, as the kernel's TCP answers
//      data for a released socket (an abort).
//      The peer's FIN in full operation is the connection's end there:
//      nothing more is sent, the consumer is told (siw's
//      IW_CM_EVENT_DISCONNECT: rdma_cm's RDMA_CM_EVENT_DISCONNECTED) and
//      TCP answers with its own FIN.
//
// Memory stays abstract (IwarpMemory): the endpoint asks it to validate an
// STag for an access and to give the bytes to read or the place to write.
// Completions come back through IwarpEvents. A Send or Write completes when
// TCP has the last byte acknowledged (the data may then be reused, as on an
// RNIC that retransmits from host memory); a Read completes when its last
// Read Response is placed.
//
// MPA revision 2 by default (RFC 6581: IRD and ORD negotiated in the
// private data), revision 1 on request. Not modelled: peer-to-peer mode and
// its "ready to receive" message, Send with Invalidate on the sending side (it is accepted
// and reported on the receiving side), STag invalidation, atomics (RFC 5040
// has none), CRC checking on receive (the model does not corrupt bytes;
// the CRC is filled when a frame is observed, see mpa_seal.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/payload.hpp"
#include "core/ring.hpp"
#include "fabrics/ip/tcp/tcp_connection.hpp"
#include "fabrics/iwarp/ddp.hpp"
#include "fabrics/iwarp/fpdu.hpp"
#include "fabrics/iwarp/mpa.hpp"
#include "fabrics/iwarp/mpa_seal.hpp"
#include "fabrics/iwarp/rdmap.hpp"

namespace rdmasim {

enum class IwarpAccess : uint8_t { local_write, remote_read, remote_write };

// Outcome of validating an STag access: the tagged-buffer checks of
// RFC 5041 and the access rights of RFC 5040.
enum class StagStatus : uint8_t { ok, invalid_stag, base_bounds, access_rights, not_associated, to_wrap };

class IwarpMemory {
 public:
  virtual ~IwarpMemory() = default;
  // The bytes [to, to + length) of the buffer `stag` names, when `access` is
  // allowed; `out` is set only on ok. The piece must stay valid while the
  // endpoint uses it (for a Read source: until the responses are sent).
  virtual StagStatus resolve(uint32_t stag, uint64_t to, uint64_t length, IwarpAccess access,
                             BufferPiece& out) = 0;
};

struct IwarpRecv {
  uint64_t wr_id = 0;
  uint32_t msn = 0;  // RFC 5041 message sequence number on queue 0
  uint32_t length = 0;
  bool solicited = false;
  bool invalidate = false;  // Send with Invalidate: `inval_stag` names the STag
  uint32_t inval_stag = 0;
};

class IwarpEvents {
 public:
  virtual ~IwarpEvents() = default;
  virtual void iwarp_established(std::span<const std::byte> /*peer_private_data*/) {}
  virtual void iwarp_rejected(std::span<const std::byte> /*peer_private_data*/) {}
  virtual void iwarp_send_done(uint64_t /*wr_id*/) {}
  virtual void iwarp_write_done(uint64_t /*wr_id*/) {}
  virtual void iwarp_read_done(uint64_t /*wr_id*/) {}
  virtual void iwarp_recv(const IwarpRecv&) {}
  // A Send arrived with no receive buffer posted: a QP on a shared receive
  // queue takes its next WQE now and posts it (post_recv); the endpoint
  // then places the Send there.
  virtual void iwarp_need_recv() {}
  // An RDMA Write message has been placed (the responder learns nothing
  // in verbs; reported for statistics and tests).
  virtual void iwarp_write_placed(uint32_t /*stag*/, uint64_t /*to*/, uint64_t /*length*/) {}
  // A Terminate was sent (local = true: this end found the error) or
  // received; a received one names, when its quoted DDP header identifies
  // it, the message of this end it reports.
  virtual void iwarp_terminate(const TermError&, bool /*local*/, std::optional<uint64_t> /*wr_id*/) {}
  // The peer closed the stream (its FIN) in full operation: nothing more
  // will be sent or placed; TCP's FIN back is on its way.
  virtual void iwarp_disconnected() {}
  virtual void iwarp_closed() {}
};

struct IwarpConfig {
  bool crc = true;                       // ask for CRCs (C flag); they are used if either side asks
  bool markers = false;                  // ask the peer to put markers in what it sends us (M flag)
  bool reject = false;                   // responder: answer the request with R set
  std::vector<std::byte> private_data;   // at most 512 bytes (RFC 5044), 508 with Rev 2
  uint8_t mpa_revision = 2;              // 2: RFC 6581 (IRD/ORD negotiated), 1: RFC 5044
  uint32_t ord = 16;                     // RDMA Read Requests this end may have outstanding
  uint32_t ird = 16;                     // RDMA Read Requests this end serves at once
  MpaStreamRegistry* streams = nullptr;  // where to publish the sending stream for sealing
};

struct IwarpStats {
  uint64_t fpdus_sent = 0, fpdus_received = 0;
  uint64_t markers_sent = 0;
  uint64_t payload_sent = 0, payload_placed = 0;  // ULP bytes
  uint64_t sends = 0, writes = 0, reads = 0, read_responses = 0;
  uint64_t terminates_sent = 0, terminates_received = 0;
};

class IwarpEndpoint final : public TcpUpper {
 public:
  enum class Role : uint8_t { initiator, responder };
  enum class Phase : uint8_t { tcp_connecting, mpa_startup, full_operation, error, closed };

  // Takes over `tcp` as its upper layer. The caller opens the TCP
  // connection (connect() for the initiator, listen() for the responder).
  IwarpEndpoint(TcpConnection& tcp, IwarpMemory& memory, const IwarpConfig& cfg, Role role,
                IwarpEvents* events = nullptr);
  ~IwarpEndpoint() override;
  IwarpEndpoint(const IwarpEndpoint&) = delete;
  IwarpEndpoint& operator=(const IwarpEndpoint&) = delete;

  // Work requests, queued in order (RFC 5040, ordering) until full operation.
  // `data` must stay valid until the completion. It is read as each FPDU is
  // built, so a computed buffer's bytes (nodes/host/memory.hpp) are made only
  // a segment's worth at a time, in TCP's send buffer.
  void post_send(uint64_t wr_id, BufferPiece data, bool solicited = false);
  void post_write(uint64_t wr_id, BufferPiece data, uint32_t remote_stag, uint64_t remote_to);
  void post_send(uint64_t wr_id, std::span<const std::byte> data, bool solicited = false) {
    post_send(wr_id, BufferPiece::read_only(data), solicited);
  }
  void post_write(uint64_t wr_id, std::span<const std::byte> data, uint32_t remote_stag, uint64_t remote_to) {
    post_write(wr_id, BufferPiece::read_only(data), remote_stag, remote_to);
  }
  void post_read(uint64_t wr_id, uint32_t sink_stag, uint64_t sink_to, uint32_t length, uint32_t source_stag,
                 uint64_t source_to);
  // A receive buffer for the next untagged message on queue 0: one span, or
  // a scatter list filled in order (the receive WR's SGEs).
  void post_recv(uint64_t wr_id, std::span<std::byte> buffer);
  void post_recv(uint64_t wr_id, std::span<const BufferPiece> sges);

  // The ORD to offer in MPA startup (the QP's max_rd_atomic is set at RTS,
  // after the endpoint exists); once the offer went out it can only lower
  // the ORD in use.
  void set_ord(uint32_t ord) { cfg_.ord = phase_ == Phase::tcp_connecting ? ord : std::min(cfg_.ord, ord); }
  // Ends the stream with a Terminate carrying `e` (a local error).
  void terminate(const TermError& e);
  // Orderly close: TCP FIN once everything posted has been handed to TCP.
  void close();
  // The QP left RTS: what is not yet in TCP's buffer is dropped (the QP
  // flushes it), nothing more is read, and TCP sends a FIN after what it
  // holds; data the peer sends after that is answered with a RST (siw
  // releases the socket). Nothing once the stream has ended (or a
  // Terminate ends it).
  void disconnect();

  Role role() const { return role_; }
  Phase phase() const { return phase_; }
  bool crc_enabled() const { return crc_; }
  bool markers_to_peer() const { return tx_plan_.enabled; }    // we insert markers
  bool markers_from_peer() const { return rx_plan_.enabled; }  // the peer inserts them
  size_t mulpdu() const { return mulpdu_; }
  uint8_t mpa_revision() const { return revision_; }  // in use (after startup: negotiated)
  uint32_t ord() const { return cfg_.ord; }           // after startup: negotiated (Rev 2)
  uint32_t ird() const { return cfg_.ird; }
  const IwarpStats& stats() const { return stats_; }
  // The untagged buffers posted and not yet filled, oldest first: the
  // wr_id the verbs layer gave the i-th.
  size_t recvs_posted() const { return rq_.size(); }
  uint64_t posted_recv_id(size_t i) const { return rq_[i].wr_id; }
  TcpConnection& tcp() const { return tcp_; }
  // How to seal what this end sends (valid in full operation).
  MpaStreamInfo stream_info() const;
  // Fills the MPA CRCs and the TCP checksum of a segment this end sent.
  void seal(std::span<std::byte> tcp_segment, const TcpPseudoHeader& ph) const;

  // TcpUpper.
  void tcp_established() override;
  void tcp_receive(std::span<const std::byte> bytes) override;
  void tcp_acked(uint64_t acked) override;
  void tcp_peer_closed() override;
  void tcp_closed(TcpCloseReason why) override;

 private:
  enum class MsgKind : uint8_t { send, write, read };
  struct OutMsg {
    MsgKind kind = MsgKind::send;
    uint64_t wr_id = 0;
    BufferPiece data;
    size_t sent = 0;
    bool solicited = false;
    bool started = false;
    uint32_t msn = 0;
    uint32_t stag = 0;  // write: remote; read: data sink
    uint64_t to = 0;
    uint32_t read_len = 0, source_stag = 0;
    uint64_t source_to = 0;
  };
  struct ReadResp {  // a response this end owes the peer
    uint32_t sink_stag = 0;
    uint64_t sink_to = 0;
    BufferPiece source;
    size_t sent = 0;
  };
  struct PendingRead {  // a read this end waits for
    uint64_t wr_id = 0;
    uint32_t length = 0;
    uint64_t received = 0;
  };
  struct AwaitAck {  // a Send or Write waiting for TCP to acknowledge its last byte
    uint64_t stream_end = 0;
    uint64_t wr_id = 0;
    MsgKind kind = MsgKind::send;
  };
  struct SentMsg {  // a message a Terminate from the peer may report
    uint64_t wr_id = 0;
    MsgKind kind = MsgKind::send;
    uint32_t stag = 0;  // write
    uint64_t to_begin = 0, to_end = 0;
    uint32_t msn = 0;  // send: queue 0; read: queue 1
    bool finished = false;
  };
  struct RecvBuf {
    uint64_t wr_id = 0;
    std::vector<BufferPiece> sges;
    uint64_t length = 0;  // of all SGEs
    void place(uint64_t mo, std::span<const std::byte> payload);
  };
  enum class Emit : uint8_t { sent, blocked, idle };

  // MPA startup.
  void send_frame(bool request, bool reject);
  size_t consume(std::span<const std::byte> in, uint64_t off);
  size_t take_frame(std::span<const std::byte> in, uint64_t pos);
  bool take_ird_ord(const MpaFrameHeader& h, std::span<const std::byte> pd);
  void enter_full_operation();

  // Transmission.
  void pump();
  Emit emit_sq();
  Emit emit_read_response();
  Emit emit_terminate();
  std::span<std::byte> begin_fpdu(size_t ulpdu_len);
  void end_fpdu();

  // Reception.
  void on_ulpdu(std::span<const std::byte> ulpdu);
  void on_tagged(const DdpHeader& h, std::span<const std::byte> ulpdu, bool read_response);
  void on_send(const DdpHeader& h, std::span<const std::byte> ulpdu);
  void on_read_request(const DdpHeader& h, std::span<const std::byte> ulpdu);
  void on_terminate(std::span<const std::byte> ulpdu);
  void mark_finished(uint64_t wr_id);
  void forget_finished();
  std::optional<uint64_t> reported_message(const DdpHeader& h) const;
  void fail(const TermError& e, std::span<const std::byte> ulpdu = {}, bool with_rdmap_header = false);
  void enter_error();

  TcpConnection& tcp_;
  IwarpMemory& mem_;
  IwarpConfig cfg_;
  Role role_;
  IwarpEvents* events_;
  Phase phase_ = Phase::tcp_connecting;
  bool crc_ = false;
  bool close_requested_ = false;
  uint8_t revision_ = 2;
  MarkerPlan tx_plan_, rx_plan_;
  size_t mulpdu_ = 0;

  // Sending.
  Ring<OutMsg> sq_;
  Ring<ReadResp> rrq_;
  Ring<PendingRead> reads_;
  Ring<AwaitAck> await_ack_;
  Ring<SentMsg> sent_;               // in posting order, until finished before the segment being read
  bool rr_turn_ = false;             // round robin between the send queue and read responses
  uint32_t tx_msn_[3] = {1, 1, 1};   // RFC 5041: each queue's MSN starts at 1
  std::vector<std::byte> term_msg_;  // a Terminate waiting to be sent (its ULPDU)
  uint64_t first_fpdu_off_ = 0;      // stream offset of our first FPDU
  std::vector<std::byte> tx_scratch_;
  std::span<std::byte> open_record_;
  std::span<std::byte> open_fpdu_;
  uint64_t open_start_ = 0;

  // Receiving.
  std::vector<std::byte> rx_buf_;  // an incomplete frame or record
  uint64_t rx_off_ = 0;            // stream offset of the next byte to parse
  std::vector<std::byte> rx_scratch_;
  Ring<RecvBuf> rq_;
  uint32_t rx_msn_[3] = {1, 1, 1};
  uint64_t rx_msg_len_ = 0;  // bytes of the current untagged message on queue 0
  bool write_open_ = false;  // a tagged Write message is being placed
  uint32_t write_stag_ = 0;
  uint64_t write_to_ = 0, write_len_ = 0;
  std::vector<std::byte> peer_private_data_;

  IwarpStats stats_;
};

}  // namespace rdmasim
