#include "parallel/parallel_run.hpp"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

#include "core/errors.hpp"
#include "parallel/messages.hpp"

namespace rdmasim {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

ParallelRun::ParallelRun(Cluster& cluster, Network& net, Partition partition)
    : cluster_(cluster), net_(net), part_(std::move(partition)) {
  const int me = cluster_.rank();
  std::vector<bool> foreign(net.nodes.size() + 1, false);
  for (size_t n = 0; n < net.nodes.size(); ++n) foreign[net.nodes[n]->context()] = part_.rank[n] != me;
  for (int l : part_.cut_links) {
    const LinkConfig& c = net.cfg.topology.links[static_cast<size_t>(l)].config;
    const Graph::Link& gl = net.graph.link(l);
    if (c.delay <= Time{})
      throw InputError(
          fmt::format("topology.links[{}] ({} - {}): the partition over {} ranks cuts this link, and it "
                      "has no propagation delay: no lookahead to run the ranks apart (give it a delay, "
                      "or choose another --partition)",
                      l, net.graph.name(gl.a), net.graph.name(gl.b), part_.ranks));
    lookahead_ = std::min(lookahead_, c.delay);
    const Network::LinkEnds ends = net.links[static_cast<size_t>(l)];
    for (int end = 0; end < 2; ++end) {
      Port* port = end == 0 ? ends.a : ends.b;
      const int node = end == 0 ? gl.a : gl.b;
      const int peer = end == 0 ? gl.b : gl.a;
      port->set_remote(this);  // on every rank: a replica never sends, the owner's sends leave
      end_of_[port] = {static_cast<uint32_t>(l), static_cast<uint8_t>(end),
                       part_.rank[static_cast<size_t>(node)]};
      if (part_.rank[static_cast<size_t>(node)] != me) continue;
      cut_of_[port] = cuts_.size();
      cuts_.push_back({port, static_cast<uint32_t>(l), static_cast<uint8_t>(end),
                       part_.rank[static_cast<size_t>(peer)], false, 0});
    }
  }
  net.sim.set_foreign(std::move(foreign));
}

ParallelRun::~ParallelRun() {
  for (int l : part_.cut_links) {
    net_.links[static_cast<size_t>(l)].a->set_remote(nullptr);
    net_.links[static_cast<size_t>(l)].b->set_remote(nullptr);
  }
}

void ParallelRun::sent(Port& from) {
  const auto it = cut_of_.find(&from);
  // Port::transmit sends only from nodes this rank runs.
  if (it == cut_of_.end())
    throw std::logic_error("parallel: a frame sent on a cut link from a node of another rank");
  Cut& c = cuts_[it->second];
  ++c.unsent;
  if (!c.queued) {
    c.queued = true;
    outbox_.push_back(it->second);
  }
}

void ParallelRun::gate_update(Port& gate, Time at, uint64_t order, uint8_t cls, uint64_t amount) {
  const auto it = end_of_.find(&gate);
  if (it == end_of_.end() || it->second.rank == cluster_.rank())
    throw std::logic_error("parallel: a gate update for a port that is not across a cut link");
  if (notes_.empty()) notes_.resize(static_cast<size_t>(cluster_.size()));
  codec::Writer(notes_[static_cast<size_t>(it->second.rank)])
      .put(message::WindowItem{message::Gate{it->second.link, it->second.b, at, order, cls, amount}});
  ++stats_.credits_sent;
}

void ParallelRun::note(int rank, std::string note) {
  if (notes_.empty()) notes_.resize(static_cast<size_t>(cluster_.size()));
  codec::Writer(notes_[static_cast<size_t>(rank)]).put(message::WindowItem{message::NoteText{note}});
  ++stats_.notes_sent;
}

// Frames on the wire of this rank's cut ports go to the peer's rank
// (message::Frame); then the notes and gate updates, in the order written.
void ParallelRun::exchange() {
  const auto packing = Clock::now();
  pack_window();
  const auto sending = Clock::now();
  stats_.pack_s += std::chrono::duration<double>(sending - packing).count();
  cluster_.exchange(out_, in_);
  const auto unpacking = Clock::now();
  const std::vector<std::string> notes = unpack_window();
  stats_.pack_s += since(unpacking);
  for (const std::string& n : notes) {
    if (!on_note) throw std::logic_error("parallel: a note and no one to read it");
    on_note(n);
  }
}

void ParallelRun::pack_window() {
  std::vector<std::string>& out = out_;
  out.resize(static_cast<size_t>(cluster_.size()));
  for (std::string& to : out) to.clear();
  for (size_t i : outbox_) {
    Cut& c = cuts_[i];
    c.queued = false;
    codec::Writer to(out[static_cast<size_t>(c.to_rank)]);
    // The frames this window sent are the newest on the wire; a rank that
    // owns both ends of a cut link (a test's) has those put on it to arrive
    // before them.
    auto& wire = c.port->wire();
    for (size_t k = wire.size() - c.unsent; k < wire.size(); ++k) {
      Port::InFlight& f = wire[k];
      if (sealer_ && f.packet.meta().crc_pending) sealer_(f.packet);
      const PacketMeta& m = f.packet.meta();
      const std::span<const std::byte> bytes = f.packet.bytes();  // a deferred payload read in
      to.put(message::WindowItem{
          message::Frame{c.link, c.from_b, f.at, f.order, f.lost, m.crc_pending, m.flow_hash, m.priority,
                         m.vl, m.enqueued, static_cast<uint32_t>(f.packet.headroom()),
                         std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())}});
      ++stats_.frames_sent;
      stats_.bytes_sent += bytes.size();
    }
    for (; c.unsent > 0; --c.unsent) wire.pop_back();
  }
  outbox_.clear();
  for (size_t r = 0; r < notes_.size(); ++r) {
    out[r] += notes_[r];
    notes_[r].clear();
  }
}

std::vector<std::string> ParallelRun::unpack_window() {
  std::vector<std::string> notes;
  // Frames go on the wire in the order their senders sent them: by rank,
  // then as each rank wrote them (one link's frames in order).
  for (const std::string& msg : in_)
    for (codec::Reader r(msg); !r.done();) {
      const auto item = r.get<message::WindowItem>();
      if (const auto* n = std::get_if<message::NoteText>(&item))
        notes.emplace_back(n->text);
      else if (const auto* g = std::get_if<message::Gate>(&item))
        update_gate(*g);
      else
        put_on_wire(std::get<message::Frame>(item));
    }
  return notes;
}

void ParallelRun::update_gate(const message::Gate& g) {
  // Keyed as its sender keyed it: where it is placed among the
  // gate's events does not depend on when it was handed over.
  if (g.link >= net_.links.size()) throw std::runtime_error("parallel: a malformed gate update");
  Port* gate = g.b ? net_.links[g.link].b : net_.links[g.link].a;
  if (!gate->gate()) throw std::runtime_error("parallel: a gate update for a port with no gate");
  gate->gate()->remote_update(g.due, g.order, g.cls, g.amount);
}

void ParallelRun::put_on_wire(const message::Frame& m) {
  const size_t len = m.bytes.size();
  if (m.link >= net_.links.size() || m.headroom + len > PacketPool::kMaxCapacity)
    throw std::runtime_error("parallel: a malformed frame message");
  Port::InFlight f{net_.pool.make(m.headroom, len), m.lost, m.at, m.order};
  std::memcpy(f.packet.push_back(len).data(), m.bytes.data(), len);
  PacketMeta meta;
  meta.id = f.packet.meta().id;
  meta.crc_pending = m.crc_pending;
  meta.flow_hash = m.flow_hash;
  meta.priority = m.priority;
  meta.vl = m.vl;
  meta.enqueued = m.enqueued;
  f.packet.meta() = meta;
  Port* sender = m.from_b ? net_.links[m.link].b : net_.links[m.link].a;
  sender->put_on_wire(std::move(f));
}

void ParallelRun::agree(std::exception_ptr local) {
  std::vector<int64_t> first{local ? cluster_.rank() : INT64_MAX};
  cluster_.min(first);
  if (first[0] != INT64_MAX) fail(static_cast<int>(first[0]), local);
}

void ParallelRun::fail(int who, std::exception_ptr local) {
  using message::Failure;
  Failure what;
  if (who == cluster_.rank()) {
    try {
      std::rethrow_exception(local);
    } catch (const InputError& e) {
      what = {Failure::Kind::input, e.what()};
    } catch (const OutputError& e) {
      what = {Failure::Kind::output, e.what()};
    } catch (const std::exception& e) {
      what = {Failure::Kind::other, e.what()};
    } catch (...) {
      what = {Failure::Kind::other, "unknown exception"};
    }
  }
  what = codec::decode<Failure>(cluster_.broadcast(codec::encode(what), who));
  const std::string msg = fmt::format("rank {}: {}", who, what.what);
  if (what.kind == Failure::Kind::input) throw InputError(msg);
  if (what.kind == Failure::Kind::output) throw OutputError(msg);
  throw std::runtime_error(msg);
}

bool ParallelRun::all(bool v) {
  std::vector<int64_t> x{v ? 1 : 0};
  cluster_.min(x);
  return x[0] != 0;
}

uint64_t ParallelRun::run(Time until) {
  Simulator& sim = net_.sim;
  if (until < sim.now()) return sum({sim.pending()})[0] > 0;
  Time from = sim.now();
  for (;;) {
    // The window [from, end]: nothing sent in it arrives on another rank before end.
    const Time end = until - from < lookahead_ ? until : from + lookahead_ - Time::ps(1);
    std::exception_ptr failed;
    const auto t0 = Clock::now();
    try {
      sim.run(end);
    } catch (...) {
      failed = std::current_exception();
    }
    const auto t1 = Clock::now();
    stats_.run_s += std::chrono::duration<double>(t1 - t0).count();
    ++stats_.windows;
    if (!failed) {
      try {
        exchange();
      } catch (...) {
        failed = std::current_exception();
      }
    } else {
      out_.assign(static_cast<size_t>(cluster_.size()), std::string());
      cluster_.exchange(out_, in_);
    }
    // One reduction agrees on all the window's end needs: the lowest
    // failed rank, the earliest pending event, the last event run (as its
    // negation: the latest) and whether any rank has events left.
    std::vector<int64_t> v{failed ? cluster_.rank() : INT64_MAX, sim.next_time_bound().count(),
                           -sim.last_event_time().count(), sim.pending() > 0 ? 0 : 1};
    cluster_.min(v);
    if (v[0] != INT64_MAX) fail(static_cast<int>(v[0]), failed);
    const Time next = Time::ps(v[1]), last = Time::ps(-v[2]);
    stats_.wait_s += since(t1);
    if (v[3] == 1) {
      // Idle everywhere: as one engine, now() is the last event's time.
      sim.advance(last);
      return 0;
    }
    if (end >= until || next > until) {
      sim.advance(until);
      return 1;
    }
    from = std::max(end + Time::ps(1), next);
  }
}

}  // namespace rdmasim
