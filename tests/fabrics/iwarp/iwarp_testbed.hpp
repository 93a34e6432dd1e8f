// Two IwarpEndpoints over the TCP testbed (tests/fabrics/ip/tcp/tcp_testbed.hpp),
// with a memory of registered regions and a recorder of events.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "fabrics/iwarp/iwarp_endpoint.hpp"
#include "tests/fabrics/ip/tcp/tcp_testbed.hpp"

namespace rdmasim::iwarp_test {

using namespace rdmasim::tcp_test;

// Registered regions by STag, each with a base TO and access rights.
struct TestMemory : IwarpMemory {
  struct Region {
    std::vector<std::byte> bytes;
    uint64_t base = 0;
    bool local_write = true, remote_read = false, remote_write = false;
  };
  std::map<uint32_t, Region> regions;

  Region& add(uint32_t stag, uint64_t base, size_t len, bool remote_read, bool remote_write) {
    Region& r = regions[stag];
    r.bytes.assign(len, std::byte{0});
    r.base = base;
    r.remote_read = remote_read;
    r.remote_write = remote_write;
    return r;
  }
  StagStatus resolve(uint32_t stag, uint64_t to, uint64_t len, IwarpAccess a, BufferPiece& out) override {
    auto it = regions.find(stag);
    if (it == regions.end()) return StagStatus::invalid_stag;
    Region& r = it->second;
    const bool allowed = a == IwarpAccess::local_write   ? r.local_write
                         : a == IwarpAccess::remote_read ? r.remote_read
                                                         : r.remote_write;
    if (!allowed) return StagStatus::access_rights;
    if (to < r.base || to + len > r.base + r.bytes.size()) return StagStatus::base_bounds;
    out = std::span<std::byte>(r.bytes).subspan(to - r.base, len);
    return StagStatus::ok;
  }
};

struct Recorder : IwarpEvents {
  bool established = false, rejected = false, closed = false;
  std::vector<std::byte> peer_pd;
  std::vector<uint64_t> sends_done, writes_done, reads_done;
  std::vector<IwarpRecv> recvs;
  struct Placed {
    uint32_t stag;
    uint64_t to, length;
  };
  std::vector<Placed> placed;
  struct Term {
    TermError error;
    bool local;
    std::optional<uint64_t> wr_id;  // received: the message it reports
  };
  std::vector<Term> terms;

  void iwarp_established(std::span<const std::byte> pd) override {
    established = true;
    peer_pd.assign(pd.begin(), pd.end());
  }
  void iwarp_rejected(std::span<const std::byte> pd) override {
    rejected = true;
    peer_pd.assign(pd.begin(), pd.end());
  }
  void iwarp_send_done(uint64_t id) override { sends_done.push_back(id); }
  void iwarp_write_done(uint64_t id) override { writes_done.push_back(id); }
  void iwarp_read_done(uint64_t id) override { reads_done.push_back(id); }
  void iwarp_recv(const IwarpRecv& r) override { recvs.push_back(r); }
  void iwarp_write_placed(uint32_t stag, uint64_t to, uint64_t len) override {
    placed.push_back({stag, to, len});
  }
  void iwarp_terminate(const TermError& e, bool local, std::optional<uint64_t> wr_id) override {
    terms.push_back({e, local, wr_id});
  }
  void iwarp_closed() override { closed = true; }
};

inline std::vector<std::byte> pattern_bytes(size_t n, uint64_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = pattern(i * 3 + seed);
  return v;
}

// a is the initiator, b the responder.
struct IwarpPair {
  Testbed t;
  TestMemory ma, mb;
  Recorder ea, eb;
  std::unique_ptr<IwarpEndpoint> a, b;

  IwarpPair(const IwarpConfig& ca, const IwarpConfig& cb, const LinkParams& near, const LinkParams& far,
            const TcpEndpointConfig& tcp = TcpEndpointConfig{}, uint64_t seed = 1)
      : t(tcp, tcp, near, far, seed) {
    a = std::make_unique<IwarpEndpoint>(*t.a, ma, ca, IwarpEndpoint::Role::initiator, &ea);
    b = std::make_unique<IwarpEndpoint>(*t.b, mb, cb, IwarpEndpoint::Role::responder, &eb);
    t.open();
  }
};

}  // namespace rdmasim::iwarp_test
