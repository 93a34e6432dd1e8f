// What the kinds' memory estimates share (experiment/memory_estimate.cpp
// adds them up): saturating arithmetic, the fastest host link, and the
// buffers of a workload of fixed-size messages between pairs of hosts.
#pragma once

#include <cstdint>

#include "topologies/config.hpp"

namespace rdmasim {

inline constexpr uint64_t kMaxRecvDepth = 512;  // receive buffers a QP keeps posted (workloads/)

// a * b and a + b, saturating: an estimate past 2^64 bytes is refused all the same.
inline uint64_t sat_mul(uint64_t a, uint64_t b) { return b && a > UINT64_MAX / b ? UINT64_MAX : a * b; }
inline uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// The fastest host link: what bounds what a sender can send.
DataRate fastest_host_link(const ExperimentConfig& x);

// Buffers a workload of `w.size` messages between `pairs` pairs commits
// (host memory is committed when touched): per pair, the sender's
// `min(count, outstanding)` message slots, each written just before it
// first goes out, and where they land: as many slots at the target of a
// WRITE, READ or atomic, the posted receive buffers of a SEND (both ends'
// for a ping-pong, which echoes into them). With `stop`, no more than its
// senders can send by then (and the message each has started) at each end.
uint64_t message_buffer_bytes(const ExperimentConfig& x, const WorkloadConfig& w, uint64_t pairs);

// What one connection's byte stream holds while it keeps `posted` bytes in
// flight: TCP's send buffer, which doubles as it fills (iwarp: up to
// Fabric::MemoryCosts::stream_buffer_limit); with sockets (fabric: tcp)
// also the socket's receive queue and the reader's buffer (socket_flow.cpp),
// bounded by `host.kernel`'s sndbuf and rcvbuf. 0 on a fabric without
// byte streams.
uint64_t stream_buffer_bytes(const ExperimentConfig& x, uint64_t posted);

}  // namespace rdmasim
