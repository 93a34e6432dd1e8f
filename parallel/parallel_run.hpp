// One network simulated by several ranks (docs/parallel.md). Every rank
// builds the whole network, as the single-process run does, and runs the
// events of the nodes it owns; the experiment's own events (context 0:
// faults, flow arrivals) run on every rank. A frame on a cut link leaves
// its sender's wire as bytes and metadata and is put on the wire of the
// receiver's rank, keyed as its sender keyed it, so every rank runs its
// nodes' events in the order one engine does (core/engine.hpp).
//
// Synchronisation is a conservative windowed barrier: with L the smallest
// propagation delay of a cut link, no frame sent in [t, t + L) arrives
// before t + L, so every rank runs a window of L, then all exchange the
// frames the window put on cut links, and agree on the next window's start
// (the earliest pending event anywhere: idle stretches are skipped).
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabrics/network.hpp"
#include "parallel/cluster.hpp"
#include "parallel/partition.hpp"

namespace rdmasim {

namespace message {
struct Frame;
struct Gate;
}  // namespace message

class ParallelRun final : public RemoteLink {
 public:
  // Refuses (InputError) a cut link with no propagation delay: it leaves
  // no lookahead.
  ParallelRun(Cluster& cluster, Network& net, Partition partition);
  ~ParallelRun() override;
  ParallelRun(const ParallelRun&) = delete;
  ParallelRun& operator=(const ParallelRun&) = delete;

  Cluster& cluster() const { return cluster_; }
  const Partition& partition() const { return part_; }
  bool owns(int node) const { return part_.rank[static_cast<size_t>(node)] == cluster_.rank(); }
  Time lookahead() const { return lookahead_; }

  // Runs every rank's engine through `until` (as Simulator::run(until)
  // would run one engine holding every node: afterwards now() is the same
  // on every rank and the same as there). Returns whether events are
  // still pending on any rank (1) or not (0).
  uint64_t run(Time until);

  // Every rank calls it at the same point: if any rank failed (a non-null
  // `local`), all throw the failure of the lowest such rank, with its type
  // (InputError, OutputError or std::runtime_error) and "rank R: " before
  // its message.
  void agree(std::exception_ptr local);

  // The totals of every rank: each counts what ran on it.
  std::vector<uint64_t> sum(std::vector<uint64_t> v) {
    cluster_.sum(v);
    return v;
  }
  bool all(bool v);

  // What the synchronisation cost this rank (DIR/parallel.json).
  struct Stats {
    uint64_t windows = 0;
    uint64_t frames_sent = 0, bytes_sent = 0, notes_sent = 0, credits_sent = 0;
    double run_s = 0, wait_s = 0;  // running events; in the exchange and agreement
    double pack_s = 0;             // of wait_s: writing frames out and putting those that came on wires
  };
  const Stats& stats() const { return stats_; }

  void sent(Port& from) override;
  // A link-level update (IB credits) for a gate on another rank's port: it
  // goes with this window's frames, and is due at least a link delay on.
  void gate_update(Port& gate, Time at, uint64_t order, uint8_t cls, uint64_t amount) override;

  // A note for `rank`, handed over with this window's frames; there,
  // on_note(note) runs at the window's end, after the frames are on their
  // wires (notes from lower ranks first, each rank's in the order written).
  // What a note says can only matter from the next window on: it must be
  // about something that happened at least a lookahead before it is read,
  // or that no event reads (a flow's end, for its receiver's check).
  // Frames leave for another rank sealed by `sealer` (BuiltFabric::
  // seal_before_crossing): as one process's first capture of them would,
  // with the sender's state, which the receiving rank does not hold.
  void seal_crossing(std::function<void(Packet&)> sealer) { sealer_ = std::move(sealer); }
  void note(int rank, std::string note);
  std::function<void(const std::string&)> on_note;

 private:
  void exchange();
  // exchange's steps: this rank's frames for the other ranks, and the notes
  // after them, into out_; what the other ranks sent (in_) taken in, the
  // notes returned to be read once every frame is on its wire.
  void pack_window();
  std::vector<std::string> unpack_window();
  // A frame from another rank, on the wire of the cut link's end it left by.
  void put_on_wire(const message::Frame& m);
  // A gate update from another rank, on the gate of the cut link's end it names.
  void update_gate(const message::Gate& g);
  // agree(), once the ranks know the lowest failed rank `who`.
  [[noreturn]] void fail(int who, std::exception_ptr local);

  // One direction of a cut link, from a port this rank owns.
  struct Cut {
    Port* port;
    uint32_t link;
    uint8_t from_b;  // the port is the link's b end
    int to_rank;
    bool queued;      // in outbox_
    uint32_t unsent;  // frames sent this window, the newest on the port's wire
  };
  Cluster& cluster_;
  Network& net_;
  Partition part_;
  Time lookahead_ = Time::max();
  std::unordered_map<const Port*, size_t> cut_of_;
  // Every port of a cut link, this rank's or not: link, end, owner's rank.
  struct End {
    uint32_t link;
    uint8_t b;
    int rank;
  };
  std::unordered_map<const Port*, End> end_of_;
  std::vector<Cut> cuts_;
  std::vector<size_t> outbox_;      // cuts with frames to hand over
  std::vector<std::string> notes_;  // by rank: notes to hand over
  // By rank: what a window hands over and receives, kept from window to
  // window (Cluster::exchange).
  std::vector<std::string> out_, in_;
  Stats stats_;
  std::function<void(Packet&)> sealer_;
};

}  // namespace rdmasim
