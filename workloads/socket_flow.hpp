// One sender-receiver pair of a `send` workload (or of its patterns, or one
// flow of `kind: flows` with op: send) on `fabric: tcp`: two programs
// talking over a kernel TCP connection, as netperf's TCP_STREAM and
// TCP_RR do. Everything a message costs the hosts is on their CPUs: the
// connect/accept, send() and recv() system calls with their copies
// (nodes/host/kernel/stream_socket.hpp), the protocol per segment in softirq
// (net_rx.hpp), the interrupts.
//
//   stream (send, send_bw, incast, all_to_all, flows): the client sends
//     `count` messages of `size` bytes back to back with blocking send();
//     the server reads the stream with recv() until each message is whole.
//     A message's latency is from the send() call that starts it to the
//     recv() that completes it on the server (application to application;
//     a socket has no completion to wait for).
//   ping-pong (pingpong, send_lat): the client sends a message, the server
//     reads it whole and sends the same bytes back; half the round trip,
//     as TCP_RR and perftest report.
//
// Data is checked as it is read: every byte the server reads must be the
// pattern's byte of that message at that offset (payload_pattern.hpp); the
// echo must equal what the client sent.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "core/random.hpp"
#include "core/task.hpp"
#include "nodes/host/kernel/socket_stack.hpp"
#include "nodes/host/kernel/stream_socket.hpp"
#include "workloads/flow.hpp"
#include "workloads/payload_pattern.hpp"

namespace rdmasim {

// Whether `h`'s NIC offers sockets (a host network stack, fabric: tcp)
// rather than verbs: its flows are socket flows.
bool has_kernel_stack(Host& h);

// The flow a pair of hosts runs: sockets on the kernel stack, else verbs.
std::unique_ptr<PairFlow> make_pair_flow(WorkloadEnv& env, const WorkloadConfig& w, Host& a, Host& b,
                                         WorkloadKind op, bool pingpong, uint64_t index, uint64_t seed);

class SocketFlow final : public PairFlow {
 public:
  SocketFlow(WorkloadEnv& env, const WorkloadConfig& w, Host& a, Host& b, bool pingpong, uint64_t index,
             uint64_t seed);
  ~SocketFlow() override;

  void single_message(uint64_t size, Time at) override;
  void setup() override;
  void start() override;
  FlowStats result() override;
  bool placed_correctly() const override { return stats_.data_verified && received_ == count_; }
  void release_buffers() override;
  void each_qp(const std::function<void(const Host&, const verbs::QueuePair*)>&) const override {}
  uint64_t retransmits(bool on_a) const override {
    const End& e = on_a ? ca_ : sb_;
    return e.tcp ? e.tcp->retransmits() : 0;
  }
  bool runs_on_b() const override { return true; }
  EndPart b_part() const override { return {stats_, received_, true}; }
  void absorb(const EndPart& p) override {
    stats_.merge(p.stats);
    received_ += p.received;
  }
  // On the server's rank: the client sent its next message at `t`.
  void told(Time t) override { sent_at_.push_back(t); }

 private:
  struct End {
    std::unique_ptr<StreamSocket> socket;
    std::unique_ptr<StreamConnection> tcp;
    Process* process = nullptr;
    std::vector<std::byte> buf;   // the program's buffer in user memory (a stream's client has none)
    std::vector<std::byte> echo;  // ping: where the echo is read
  };
  uint64_t message_id(uint64_t k) const { return index_ * count_ + k; }
  Task client(Time t0);
  Task server();
  // Reads message k, into `into` whole if it has the room, else each
  // recv's bytes from its start; checks them against the pattern when
  // `check`; ok is false when the connection went first.
  Task read_message(Host& h, End& e, std::span<std::byte> into, uint64_t k, bool check, bool& ok);
  void failed(const char* why);
  End ca_, sb_;               // client on a, server on b
  std::deque<Time> sent_at_;  // stream: when each message not yet read whole was sent
  uint64_t received_ = 0;
  FlowStats stats_;
};

}  // namespace rdmasim
