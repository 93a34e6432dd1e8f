// The responder's named steps, one table row each: requests built by hand
// go straight into b's NIC (RC, path MTU 1024, expected PSN 100), and the
// row says which step stops them and what b answers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/fabrics/iba/transport/qp_pair.hpp"

using namespace rdmasim;
using rdmasim::test::Pair;

namespace {

struct Req {
  uint8_t opcode;
  uint32_t psn;
  size_t len;
  bool bad_rkey = false;
};

enum class Reply { Ack, NakSeq, NakInvalid, NakAccess, Rnr, None };

struct Row {
  const char* step;  // the step that decides
  std::vector<Req> reqs;
  int qp_access;
  bool recv_posted;
  Reply reply;  // b's last answer
  bool error;   // b's QP ends in ERR
};

Reply reply_of(const Pair::SentBth& b) {
  if (b.opcode != RC_ACKNOWLEDGE) return Reply::Ack;  // a READ response or atomic ACK
  if ((b.syndrome & 0x60) == 0x20) return Reply::Rnr;
  switch (b.syndrome) {
    case 0x60:
      return Reply::NakSeq;
    case 0x61:
      return Reply::NakInvalid;
    case 0x62:
      return Reply::NakAccess;
    default:
      return Reply::Ack;
  }
}

}  // namespace

TEST_CASE("responder steps: which check stops a request, and what the requester hears") {
  constexpr int kAll = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  constexpr Reply kAck = Reply::Ack, kInvalid = Reply::NakInvalid, kAccess = Reply::NakAccess;
  const std::vector<Row> rows = {
      // step                                      requests                                   QP access, recv,
      // reply, ERR
      {"check_psn: duplicate", {{RC_SEND_ONLY, 99, 16}}, kAll, true, kAck, false},
      {"check_psn: out of sequence", {{RC_SEND_ONLY, 105, 16}}, kAll, true, Reply::NakSeq, false},
      {"check_op_sequence: MIDDLE outside a message",
       {{RC_SEND_MIDDLE, 100, 1024}},
       kAll,
       true,
       kInvalid,
       true},
      {"check_op_sequence: a SEND inside a WRITE",
       {{RC_RDMA_WRITE_FIRST, 100, 1024}, {RC_SEND_LAST, 101, 8}},
       kAll,
       true,
       kInvalid,
       true},
      {"check_op_valid: READ on a QP without REMOTE_READ",
       {{RC_RDMA_READ_REQUEST, 100, 0}},
       IBV_ACCESS_REMOTE_WRITE,
       true,
       kInvalid,
       true},
      {"check_resources: no receive posted", {{RC_SEND_ONLY, 100, 16}}, kAll, false, Reply::Rnr, false},
      {"check_length: FIRST shorter than the path MTU",
       {{RC_SEND_FIRST, 100, 512}},
       kAll,
       true,
       kInvalid,
       true},
      {"check_length: MIDDLE longer than the path MTU",
       {{RC_RDMA_WRITE_FIRST, 100, 1024}, {RC_RDMA_WRITE_MIDDLE, 101, 1028}},
       kAll,
       true,
       kInvalid,
       true},
      {"check_length: an empty LAST",
       {{RC_SEND_FIRST, 100, 1024}, {RC_SEND_LAST, 101, 0}},
       kAll,
       true,
       kInvalid,
       true},
      {"check_length: ONLY longer than the path MTU",
       {{RC_SEND_ONLY, 100, 1025}},
       kAll,
       true,
       kInvalid,
       true},
      {"check_rkey: WRITE with a bad R_Key",
       {{RC_RDMA_WRITE_ONLY, 100, 64, true}},
       kAll,
       true,
       kAccess,
       true},
      {"check_rkey: READ with a bad R_Key",
       {{RC_RDMA_READ_REQUEST, 100, 0, true}},
       kAll,
       true,
       kAccess,
       true},
      {"execute: SEND FIRST of one MTU, then LAST",
       {{RC_SEND_FIRST, 100, 1024}, {RC_SEND_LAST, 101, 100}},
       kAll,
       true,
       kAck,
       false},
      {"execute: READ", {{RC_RDMA_READ_REQUEST, 100, 0}}, kAll, true, kAck, false},
  };
  for (const Row& row : rows) {
    const std::string step = row.step;
    CAPTURE(step);
    Pair p;
    p.connect_both();
    Pair::set_access(p.sb, row.qp_access);
    if (row.recv_posted) REQUIRE(p.post_recv(p.sb, p.sb.buf, 8192) == 0);
    auto sent = Pair::record_bth(p.b);
    for (const Req& q : row.reqs) {
      IbaHeaders h;
      h.opcode = q.opcode;
      h.psn = q.psn;
      h.ack_req = true;
      if (q.opcode == RC_RDMA_WRITE_FIRST || q.opcode == RC_RDMA_WRITE_ONLY ||
          q.opcode == RC_RDMA_READ_REQUEST) {
        h.va = p.sb.buf;
        h.rkey = q.bad_rkey ? p.sb.mr->rkey ^ 0x100 : p.sb.mr->rkey;
        h.dma_len = q.opcode == RC_RDMA_READ_REQUEST ? 2048 : q.opcode == RC_RDMA_WRITE_ONLY ? q.len : 4096;
      }
      p.inject(h, q.opcode == RC_RDMA_READ_REQUEST ? 0 : q.len);
    }
    p.sim.run(p.sim.now() + Time::us(5));
    REQUIRE_FALSE(sent->empty());
    CHECK(reply_of(sent->back()) == row.reply);
    CHECK((p.sb.qp->state() == IBV_QPS_ERR) == row.error);
  }
}

TEST_CASE("responder steps have the names a trace prints, in rxe's order") {
  CHECK(std::string(resp_step_name(RespStep::CheckPsn)) == "check_psn");
  CHECK(std::string(resp_step_name(RespStep::CheckLength)) == "check_length");
  CHECK(std::string(resp_step_name(RespStep::Done)) == "done");
  CHECK(RespStep::CheckOpSequence < RespStep::CheckOpValid);
  CHECK(RespStep::CheckResources < RespStep::CheckLength);
  CHECK(RespStep::CheckLength < RespStep::CheckRkey);
}
