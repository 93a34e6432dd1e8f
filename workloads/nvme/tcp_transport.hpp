// NVMe/TCP (NVM Express TCP Transport Specification 1.0; TP 8000), as
// Linux's nvme-tcp host and nvmet-tcp target speak it, over the kernel TCP
// sockets of `fabric: tcp` (fabrics/tcp/kernel_tcp.hpp). Each queue, the
// admin queue too, is a TCP connection from an ephemeral port of the host
// to port 4420 of the target. The host opens it with an ICReq (the digests
// it wants: hdgst, ddgst), the target answers with an ICResp (the digests,
// MAXH2CDATA); then every command is a CapsuleCmd PDU (a write's data in it
// when it fits the in-capsule size: 8 KiB on the admin queue, the target's
// inline_data_size on an I/O queue; else a transport SGL), a read's data
// comes back in a C2HData PDU, a larger write's data goes out in H2CData
// PDUs when the target asks with an R2T, and the completion is a
// CapsuleResp PDU. Header and data digests (CRC32C) are on every PDU but
// ICReq and ICResp when negotiated.
//
// CPU, on both hosts: each connection has a thread reading PDUs and one
// writing them (nvme-tcp's and nvmet-tcp's io_work), paying for every
// socket call and copy (nodes/host/kernel/stream_socket.hpp); the kernel's
// receive path pays per frame (net_rx.hpp). On the host, issuing a command
// and reaping its completion cost the job a system call each (io_uring);
// on the target, each command costs `io_cost`. A target's queues' threads
// are spread over its first `cores` cores.
#pragma once

#include <memory>

#include "workloads/nvme/initiator.hpp"
#include "workloads/nvme/target.hpp"

namespace rdmasim {
class StreamConnection;
class StreamSocket;
}  // namespace rdmasim

namespace rdmasim::nvme {

class TcpTargetPort final : public TargetPort {
 public:
  explicit TcpTargetPort(NvmeTarget& t);
  ~TcpTargetPort() override;

  // A queue's connection from `client` on `from` to port 4420: the
  // target's end made and listening, the client's end returned.
  std::unique_ptr<StreamConnection> accept(Host& from, StreamSocket& client, uint32_t client_iss);

  void fetch(TargetQueue& q, TargetCmd& c) override;
  bool send_data(TargetQueue& q, TargetCmd& c) override;
  void send_completion(TargetQueue& q, TargetCmd& c, std::span<const std::byte> cqe) override;
  void owe(TargetQueue& q, Time t) override;
  bool moves(const Sgl& sgl) const override { return sgl.transport; }
  void disconnect(TargetQueue& q) override;

 private:
  NvmeTarget& t_;
};

std::unique_ptr<HostQueue> make_tcp_host_queue(WorkloadEnv& env, const HostQueueSpec& spec, Host& host,
                                               NvmeTarget& target, const NvmeJobConfig& job, uint64_t seed);

}  // namespace rdmasim::nvme
