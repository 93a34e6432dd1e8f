// The attach channel between rdmasim and a program it runs (docs/programs.md):
// a socketpair whose end in the program is the fd named by RDMASIM_FD. The
// library loaded into the program (programs/shim/) sends one Request per
// intercepted call and waits for its Reply; rdmasim handles each request at
// the program's simulated time, so the program runs only between a reply
// and its next request, one thing at a time.
//
// Plain structs and <infiniband/verbs.h> types only: both sides include it,
// and the shim uses nothing of rdmasim.
#pragma once

#include <infiniband/verbs.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

namespace rdmasim::attach {

inline constexpr const char* kFdEnv = "RDMASIM_FD";
inline constexpr uint32_t kMagic = 0x5244534d;  // "RDSM", the hello's check
// The value of the SIGTRAP rdmasim sigqueues to a program silent for kNudgeAfterMs of real time: the
// pages its writes opened close again (shim/memory_watch.hpp).
inline constexpr int kNudge = 0x4e554447;  // "NUDG"
inline constexpr int kNudgeAfterMs = 1000;
inline constexpr int kMaxSge = 16;
inline constexpr int kMaxWr = 256;  // work requests one post carries at most (a longer list: several posts)

// One Request header with room for one descriptor beside it (SCM_RIGHTS,
// unix(7)): a new memory segment's fd goes to rdmasim with its reg_mr.
struct FdMessage {
  FdMessage(void* data, size_t len) : iov{data, len} {
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl;
    m.msg_controllen = sizeof ctl;
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;

  iovec iov;
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
  msghdr m{};
};

enum class Op : uint32_t {
  hello,  // -> HelloReply
  // device
  query_device,    // -> ibv_device_attr
  query_port,      // a = port -> ibv_port_attr
  query_gid,       // a = port, b = index -> ibv_gid
  query_gid_type,  // a = port, b = index -> ret = ibv_gid_type
  query_pkey,      // a = port, b = index -> ret = pkey
  alloc_pd,        // -> ret = handle
  dealloc_pd,      // a = pd
  reg_mr,          // RegMr, plus the segment's fd (SCM_RIGHTS) when new -> RegMrReply
  dereg_mr,        // a = mr
  create_comp_channel,
  destroy_comp_channel,  // a = channel
  create_cq,             // a = cqe, b = channel (0: none) -> ret = handle
  destroy_cq,            // a = cq
  req_notify_cq,         // a = cq, b = solicited only
  get_cq_event,          // a = channel -> ret = cq handle
  poll_cq,               // a = cq, b = entries -> ret = n, n ibv_wc (wr_id, status, ...)
  create_srq,            // a = pd, SrqInit -> ret = handle
  destroy_srq,           // a = srq
  modify_srq,            // a = srq, b = mask, ibv_srq_attr
  query_srq,             // a = srq -> ibv_srq_attr
  create_qp,             // CreateQp -> CreateQpReply
  destroy_qp,            // a = qp
  modify_qp,             // a = qp, b = mask, ibv_qp_attr
  query_qp,              // a = qp -> ibv_qp_attr, ibv_qp_cap
  create_ah,             // a = pd, ibv_ah_attr -> ret = handle
  destroy_ah,            // a = ah
  post_send,             // a = qp, b = count, WireSend[count] -> ret = errno, c = index of the bad one
  post_recv,             // a = qp (or srq for post_srq_recv), b = count, WireRecv[count]
  post_srq_recv,
  unsupported,  // the shim met a verb the model does not implement: payload = its name
  // the out-of-band side channel (docs/programs.md): stream sockets
  sock_listen,  // a = port -> ret = listener id or -errno
  // accept, connect and recv may carry the socket's timeout (SO_RCVTIMEO; SO_SNDTIMEO for connect) as
  // payload: 8 bytes of nanoseconds. Their wait ends with -EINTR when the alarm is due, and with -EAGAIN
  // (connect: -EINPROGRESS) when the timeout passes; the call goes on, and the next one on the socket
  // waits for it.
  sock_accept,   // a = listener -> ret = connection id, Address of the peer
  sock_connect,  // a = IPv4 address (host order), b = port | the program's fd << 16 -> ret = connection id or
                 // -errno
  sock_send,     // a = connection, payload = bytes -> ret = bytes or -errno
  sock_recv,     // a = connection, b = at most | mode << 56 -> ret = bytes (0: the peer closed), payload
  sock_close,    // a = connection or listener, b = 1 (a listener), or a = fd, b = 2 (a connect that goes on)
  sock_poll,     // a = connection, b = events wanted -> ret = events ready (waits for one)
  sleep,         // a = nanoseconds (returns early, at the alarm's deadline, if that comes first)
  set_alarm,     // a = the ITIMER_REAL deadline in simulated ps (0: none): waits end no later than it
  mem_wait,      // a = an address of a watched region the program spins on: answered once a message was
                 // placed into its memory (or after a poll's spin, or at the alarm)
  get_async_event,  // -> ret = event type | port << 16 (a port event), c = the program's handle of the QP,
                    // CQ or SRQ an affiliated event names; or -EINTR at the alarm
};

struct Request {
  Op op;
  uint32_t len;  // bytes of payload that follow
  uint64_t
      local_ps;  // CPU time the program spent since its last request on calls answered in place (clock reads)
  uint64_t a, b;
};

struct Reply {
  int64_t ret;      // >= 0: the result; < 0: -errno
  uint64_t now_ps;  // the program's simulated time after the call
  uint64_t c;
  uint32_t len;  // bytes of payload that follow
  uint32_t pad;
};

struct HelloReply {
  char name[64];           // the device's name
  uint64_t node_guid;      // network byte order
  uint32_t transport;      // ibv_transport_type
  uint32_t node_type;      // ibv_node_type
  uint32_t vpid;           // the program's pid as it sees it (getpid): deterministic
  uint32_t cost_clock_ps;  // a clock read answered in place
  uint64_t tsc_hz;         // the TSC's rate
  uint32_t cores;          // the host's cores (/proc/cpuinfo's processors)
  uint32_t pad;
};

struct RegMr {
  uint32_t pd;
  int32_t access;
  uint64_t addr, length;
  uint64_t seg_addr, seg_length;  // the shared pages that hold it
  uint32_t seg_id;                // the segment (a new id: its fd comes with the request)
  uint32_t pad;
};
struct RegMrReply {
  uint32_t lkey, rkey;
};

struct CreateQp {
  uint32_t pd, send_cq, recv_cq, srq;
  ibv_qp_cap cap;
  uint32_t qp_type;
  uint32_t sq_sig_all;
};
struct CreateQpReply {
  uint32_t qpn;
  ibv_qp_cap cap;
};

struct SrqInit {
  ibv_srq_attr attr;
};

struct WireSge {
  uint64_t addr;
  uint32_t length, lkey;
};
struct WireSend {
  uint64_t wr_id;
  uint32_t opcode, send_flags;
  uint32_t imm_data;  // network byte order
  uint32_t num_sge;
  uint64_t remote_addr;
  uint32_t rkey;
  uint32_t ah;  // UD: the address handle
  uint32_t remote_qpn, remote_qkey;
  uint64_t compare_add, swap;
  WireSge sge[kMaxSge];
};
struct WireRecv {
  uint64_t wr_id;
  uint32_t num_sge, pad;
  WireSge sge[kMaxSge];
};

}  // namespace rdmasim::attach
