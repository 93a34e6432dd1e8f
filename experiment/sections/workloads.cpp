// `workloads:`, what each host does.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unordered_map>

#include "experiment/flow_cdf.hpp"
#include "experiment/sections/sections.hpp"
#include "fabrics/registry.hpp"

namespace rdmasim {

namespace {

constexpr std::string_view kWorkloadKeys[] = {"name",
                                              "kind",
                                              "from",
                                              "to",
                                              "senders",
                                              "hosts",
                                              "qp",
                                              "size",
                                              "count",
                                              "outstanding",
                                              "start",
                                              "timeout",
                                              "retry_cnt",
                                              "rnr_retry",
                                              "min_rnr_timer",
                                              "post_recvs",
                                              "bad_rkey",
                                              "op",
                                              "inline_threshold",
                                              "add",
                                              "compare",
                                              "swap",
                                              "on",
                                              "work",
                                              "chunk",
                                              "cdf",
                                              "load",
                                              "duration",
                                              "payload",
                                              "rate",
                                              "app_cost",
                                              "initiator",
                                              "target",
                                              "nsid",
                                              "rw",
                                              "bs",
                                              "iodepth",
                                              "numjobs",
                                              "rwmixread",
                                              "runtime",
                                              "offset",
                                              "ramp_time",
                                              "queue_size"};
// The keys of `kind: compute` (a process, not a verbs workload).
constexpr std::string_view kComputeKeys[] = {"name", "kind", "on", "work", "chunk", "start"};
// The keys of `kind: udp` (kernel datagrams, no verbs).
constexpr std::string_view kUdpKeys[] = {"name", "kind",     "from",     "to",   "size",
                                         "rate", "duration", "app_cost", "start"};

// The keys of `kind: nvme` (fio's names; docs/storage.md).
constexpr std::string_view kNvmeKeys[] = {"name",   "kind",      "initiator", "target",    "nsid",    "rw",
                                          "bs",     "iodepth",   "numjobs",   "rwmixread", "runtime", "size",
                                          "offset", "ramp_time", "start",     "queue_size"};

// A host name for a workload endpoint.
std::optional<std::string> host_name(ExperimentDraft& d, const YAML::Node& v, const std::string& path) {
  auto n = d.c.name(v, path, "a host name");
  if (!n || !d.graph) return n;
  const auto i = d.graph->find(*n);
  if (!i) {
    d.c.error(v, path, "unknown host '" + *n + "'" + suggestion(*n, d.x.topology.hosts));
    return std::nullopt;
  }
  if (!d.graph->is_host(*i)) {
    d.c.error(v, path,
              "'" + *n + "' is a " + (d.graph->kind(*i) == NodeKind::router ? "router" : "switch") +
                  "; workloads run between hosts");
    return std::nullopt;
  }
  return n;
}

std::optional<std::string> one_host(ExperimentDraft& d, const Fields& f, std::string_view key) {
  const Entry* e = f.find(key);
  if (!e) {
    d.c.missing(f, key, "a host name");
    return std::nullopt;
  }
  if (e->value.IsSequence()) {
    d.c.error(e->value, e->path, "expected one host name, got a list (only incast takes a list of senders)");
    return std::nullopt;
  }
  return host_name(d, e->value, e->path);
}

std::optional<std::vector<std::string>> host_list(ExperimentDraft& d, const Entry& e) {
  if (!e.value.IsSequence()) {
    auto n = host_name(d, e.value, e.path);
    if (!n) return std::nullopt;
    return std::vector<std::string>{*n};
  }
  std::vector<std::string> out;
  bool ok = true;
  for (size_t i = 0; i < e.value.size(); ++i) {
    const std::string path = index_path(e.path, i);
    auto n = host_name(d, e.value[i], path);
    if (!n) {
      ok = false;
    } else if (std::find(out.begin(), out.end(), *n) != out.end()) {
      d.c.error(e.value[i], path, "'" + *n + "' is listed twice");
      ok = false;
    } else {
      out.push_back(*n);
    }
  }
  if (ok && out.empty()) {
    d.c.error(e.value, e.path, "the list is empty");
    return std::nullopt;
  }
  return ok ? std::optional(out) : std::nullopt;
}

// {kind: compute, on: HOST, work: TIME, chunk: TIME, start: TIME}.
bool compute(ExperimentDraft& d, const Fields& f, WorkloadConfig& w) {
  for (const Entry& e : f.entries)
    if (std::find(std::begin(kComputeKeys), std::end(kComputeKeys), e.key.Scalar()) == std::end(kComputeKeys))
      d.c.error(e.key, e.path, "compute takes on, work, chunk and start, not " + e.key.Scalar());
  if (auto on = one_host(d, f, "on")) w.from = {*on};
  if (!f.has("work")) d.c.missing(f, "work", "the CPU time it needs, such as 500us");
  d.c.read(f, "work", w.work, [&](const Entry& e) { return d.c.positive_time(e); });
  d.c.read(f, "chunk", w.chunk, [&](const Entry& e) { return d.c.positive_time(e); });
  d.c.read(f, "start", w.start, [&](const Entry& e) { return d.c.time(e); });
  w.op = "compute";
  return true;
}

// kind: flows: the size CDF (built in, or a file beside the experiment),
// the load and how long flows arrive.
void flow_settings(ExperimentDraft& d, const Fields& f, WorkloadConfig& w) {
  FlowsConfig& fl = w.flows;
  const Entry* ce = f.find("cdf");
  if (ce)
    if (auto s = d.c.scalar(ce->value, ce->path, "websearch, hadoop or a CDF file")) fl.cdf = *s;
  std::string text, error;
  if (auto b = builtin_cdf(fl.cdf)) {
    text = std::string(*b);
  } else if (ce) {
    // A file of `size_bytes cumulative_percent` lines, relative to the experiment file.
    // Only a regular file: a directory cannot be read, and a FIFO or a
    // device (/dev/zero) would block or never end.
    const std::filesystem::path file = d.x.file.parent_path() / fl.cdf;
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(file, ec);
    std::ifstream in;
    std::string why;
    if (fs::is_directory(st))
      why = ": it is a directory";
    else if (fs::exists(st) && !fs::is_regular_file(st))
      why = ": it is not a regular file (a FIFO or a device)";
    else if (fs::exists(st) && fs::file_size(file, ec) > kMaxCdfFileBytes)
      why = ": it is larger than 16MiB";
    else
      in.open(file);
    if (!in.is_open() || !in) {
      d.c.error(ce->value, ce->path,
                "expected websearch, hadoop or a readable CDF file, got '" + fl.cdf + "'" + why);
      return;
    }
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (auto pts = parse_cdf(text, error))
    fl.points = std::move(*pts);
  else if (ce)
    d.c.error(ce->value, ce->path, fl.cdf + ": " + error);
  d.c.read(f, "load", fl.load, [&](const Entry& e) -> std::optional<double> {
    auto p = d.c.probability(e);
    if (p && *p <= 0) {
      d.c.error(e.value, e.path, "expected a load above 0 and at most 1, got " + describe(e.value));
      return std::nullopt;
    }
    return p;
  });
  if (!f.find("duration")) d.c.missing(f, "duration", "how long flows arrive, such as 1ms");
  d.c.read(f, "duration", fl.duration, [&](const Entry& e) { return d.c.time(e); });
}

// payload: pattern (computed) or memory (stored bytes). Flows compute by
// default; other kinds store unless told, and compute only RC WRITEs and
// READs that are not ping-pongs: there every byte of a slot is what its
// flow wrote (workloads/workload.cpp, fill_message), so the slot's bytes
// are computable; a ping-pong's markers and a SEND's receive buffers are not.
void payload(ExperimentDraft& d, const Fields& f, WorkloadConfig& w, WorkloadKind op) {
  w.computed_payload = w.kind == WorkloadKind::flows;
  const Entry* e = f.find("payload");
  if (!e) return;
  const auto v = d.c.one_of(e->value, e->path, "the payload", {"pattern", "memory"});
  if (!v) return;
  w.computed_payload = *v == "pattern";
  const bool pingpong = w.kind == WorkloadKind::pingpong || w.kind == WorkloadKind::write_lat ||
                        w.kind == WorkloadKind::send_lat;
  const bool one_sided =
      op == WorkloadKind::rdma_write || op == WorkloadKind::rdma_write_imm || op == WorkloadKind::rdma_read;
  if (w.computed_payload && w.kind != WorkloadKind::flows &&
      (!one_sided || pingpong || w.qp != QpType::rc || !fabric_of(d.x).rdma()))
    d.c.error(e->value, e->path,
              "payload: pattern is for flows and for RC rdma_write, rdma_write_imm and rdma_read workloads "
              "(not ping-pongs) on an RDMA fabric; " +
                  std::string(to_string(w.kind)) + " here keeps payload: memory");
}

// {kind: udp, from: A, to: B, rate: RATE, size: SIZE, duration: TIME, app_cost: TIME}.
bool udp(ExperimentDraft& d, const Fields& f, WorkloadConfig& w, const Entry& kind) {
  for (const Entry& e : f.entries)
    if (std::find(std::begin(kUdpKeys), std::end(kUdpKeys), e.key.Scalar()) == std::end(kUdpKeys))
      d.c.error(e.key, e.path,
                "udp takes from, to, size, rate, duration, app_cost and start, not " + e.key.Scalar());
  if (fabric_of(d.x).rdma())
    d.c.error(kind.value, kind.path,
              "udp datagrams go through the kernel stack: they need fabric: " +
                  fabric_list([](const Fabric& g) { return !g.rdma(); }) + ", not " + d.x.fabric);
  auto from = one_host(d, f, "from");
  auto to = one_host(d, f, "to");
  if (from) w.from = {*from};
  if (to) w.to = {*to};
  if (from && to && *from == *to)
    d.c.error(f.find("to")->value, f.find("to")->path, "from and to are the same host '" + *to + "'");
  w.size = Bytes(1472);  // what fits a 1500-byte Ethernet MTU
  if (const Entry* e = f.find("size"))
    if (auto b = d.c.bytes(*e)) {
      const uint32_t most = path_mtu(d.x) - 28;  // IPv4 and UDP headers
      if (b->count() > most)
        d.c.error(e->value, e->path,
                  "a datagram fits in one frame here: at most " + std::to_string(most) +
                      " bytes (the path MTU less IPv4 and UDP headers), got " + to_string(*b));
      else
        w.size = *b;
    }
  if (!f.has("rate")) d.c.missing(f, "rate", "the offered load, such as 1Gbps (payload bits)");
  d.c.read(f, "rate", w.rate, [&](const Entry& e) -> std::optional<DataRate> {
    auto r = d.c.rate(e);
    if (r && r->bps() == 0) {
      d.c.error(e.value, e.path, "the offered rate must be above zero");
      return std::nullopt;
    }
    return r;
  });
  if (!f.has("duration")) d.c.missing(f, "duration", "how long it offers datagrams, such as 2ms");
  d.c.read(f, "duration", w.duration, [&](const Entry& e) { return d.c.positive_time(e); });
  d.c.read(f, "app_cost", w.app_cost, [&](const Entry& e) { return d.c.time(e); });
  d.c.read(f, "start", w.start, [&](const Entry& e) { return d.c.time(e); });
  w.op = "udp";
  return true;
}

// kind: nvme: a fio job against a storage target's namespace.
bool nvme(ExperimentDraft& d, const Fields& f, WorkloadConfig& w, const Entry& kind) {
  for (const Entry& e : f.entries)
    if (std::find(std::begin(kNvmeKeys), std::end(kNvmeKeys), e.key.Scalar()) == std::end(kNvmeKeys))
      d.c.error(e.key, e.path,
                "nvme takes initiator, target, nsid, rw, bs, iodepth, numjobs, rwmixread, runtime, size, "
                "offset, ramp_time, start and queue_size, not " +
                    e.key.Scalar());
  if (!fabric_of(d.x).rdma())
    d.c.error(kind.value, kind.path,
              "nvme over fabric: " + d.x.fabric + " (NVMe/TCP) is not modelled yet; use an RDMA fabric: " +
                  fabric_list([](const Fabric& g) { return g.rdma(); }));
  NvmeJobConfig& j = w.nvme;
  const auto initiator = one_host(d, f, "initiator");
  const auto target = one_host(d, f, "target");
  if (initiator) j.initiator = *initiator;
  if (target) j.target = *target;
  const Entry* te = f.find("target");
  const StorageTargetConfig* t = target ? d.x.storage.target(*target) : nullptr;
  if (target && !t)
    d.c.error(te->value, te->path, "host " + *target + " has no storage target (storage.targets)");
  if (initiator && target && *initiator == *target)
    d.c.error(te->value, te->path, "the initiator and the target are the same host");
  d.c.read(f, "nsid", j.nsid, [&](const Entry& e) { return d.c.whole(e, 1, 0xFFFFFFFE); });
  const NamespaceConfig* ns = nullptr;
  if (t) {
    for (const NamespaceConfig& n : t->namespaces)
      if (n.nsid == j.nsid) ns = &n;
    if (!ns) {
      const Entry* at = f.find("nsid") ? f.find("nsid") : te;
      d.c.error(at->value, at->path,
                "target " + t->host + " has no namespace " + std::to_string(j.nsid) + " (storage.targets)");
    }
  }
  d.c.read(f, "rw", j.rw, [&](const Entry& e) { return d.c.choice<NvmeRw>(e, "I/O pattern (fio's rw)"); });
  d.c.read(f, "rwmixread", j.rwmixread, [&](const Entry& e) { return d.c.whole(e, 0, 100); });
  d.c.read(f, "numjobs", j.numjobs, [&](const Entry& e) { return d.c.whole(e, 1, 1024); });
  d.c.read(f, "queue_size", j.queue_size, [&](const Entry& e) { return d.c.whole(e, 2, 1024); });
  if (const Entry* e = f.find("iodepth")) {
    if (auto v = d.c.whole(*e, 1, 1024)) {
      if (*v > j.queue_size)
        d.c.error(e->value, e->path,
                  "iodepth " + std::to_string(*v) + " is more than the I/O queue's " +
                      std::to_string(j.queue_size) + " entries (queue_size)");
      else
        j.iodepth = static_cast<uint32_t>(*v);
    }
  }
  d.c.read(f, "runtime", j.runtime, [&](const Entry& e) { return d.c.positive_time(e); });
  d.c.read(f, "ramp_time", j.ramp_time, [&](const Entry& e) { return d.c.time(e); });
  d.c.read(f, "start", w.start, [&](const Entry& e) { return d.c.time(e); });
  j.start_time = w.start;
  const uint32_t block = ns ? ns->block_size : 512;
  if (const Entry* e = f.find("bs")) {
    if (auto b = d.c.bytes(*e)) {
      if (b->count() % block != 0)
        d.c.error(e->value, e->path,
                  "bs " + to_string(*b) + " is not a multiple of the namespace's " + std::to_string(block) +
                      "-byte blocks");
      else if (b->count() > (1u << 20))
        d.c.error(e->value, e->path, "bs is at most 1MiB (the target's largest transfer)");
      else
        j.bs = b->count();
    }
  }
  if (const Entry* e = f.find("offset")) {
    if (auto b = d.c.bytes(*e, false)) {
      if (b->count() % block != 0)
        d.c.error(e->value, e->path, "offset " + to_string(*b) + " is not on a block boundary");
      else
        j.offset = b->count();
    }
  }
  if (const Entry* e = f.find("size")) {
    if (auto b = d.c.bytes(*e)) {
      if (b->count() < j.bs)
        d.c.error(e->value, e->path, "size " + to_string(*b) + " is less than one bs");
      else
        j.size = b->count();
    }
  }
  if (ns) {
    const uint64_t end = j.offset + (j.size ? j.size : j.bs);
    if (end > ns->size) {
      const Entry* at = f.find("size") ? f.find("size") : f.find("offset") ? f.find("offset") : te;
      d.c.error(at->value, at->path,
                "I/O from offset " + std::to_string(j.offset) + " to " + std::to_string(end) +
                    " goes past namespace " + std::to_string(ns->nsid) + "'s " + std::to_string(ns->size) +
                    " bytes");
    }
  }
  if (initiator) w.from = {*initiator};
  if (target) w.to = {*target};
  w.op = "nvme";
  return true;
}

bool workload(ExperimentDraft& d, const YAML::Node& v, const std::string& path, WorkloadConfig& w) {
  const std::vector<std::string_view> all(std::begin(kWorkloadKeys), std::end(kWorkloadKeys));
  auto f = d.c.fields(v, path, "a workload", all);
  if (!f) return false;
  const YAML::Mark m = mark_of(v);
  w.line = m.line + 1;
  w.column = m.column + 1;
  const Entry* ke = f->find("kind");
  if (!ke) {
    d.c.missing(*f, "kind", "one of " + join_names(EnumNames<WorkloadKind>::names));
    return false;
  }
  auto kind = d.c.choice<WorkloadKind>(*ke, "workload kind");
  if (!kind) return false;
  w.kind = *kind;
  if (auto e = f->find("name"))
    if (auto n = d.c.name(e->value, e->path, "a workload name")) w.name = *n;
  if (w.kind == WorkloadKind::compute) return compute(d, *f, w);
  if (w.kind == WorkloadKind::udp) return udp(d, *f, w, *ke);
  if (w.kind == WorkloadKind::nvme) return nvme(d, *f, w, *ke);
  for (std::string_view key : {"initiator", "target", "nsid", "rw", "bs", "iodepth", "numjobs", "rwmixread",
                               "runtime", "offset", "ramp_time", "queue_size"})
    if (const Entry* e = f->find(key))
      d.c.error(e->key, e->path,
                "only nvme takes " + std::string(key) + ", not " + std::string(to_string(w.kind)));
  for (std::string_view key : {"on", "work", "chunk"})
    if (const Entry* e = f->find(key))
      d.c.error(e->key, e->path,
                "only compute takes " + std::string(key) + ", not " + std::string(to_string(w.kind)));
  for (std::string_view key : {"rate", "app_cost"})
    if (const Entry* e = f->find(key))
      d.c.error(e->key, e->path,
                "only udp takes " + std::string(key) + ", not " + std::string(to_string(w.kind)));
  // A fabric without RDMA (tcp) says in check_workload which kinds it runs.

  // Keys that belong to other kinds.
  auto only = [&](std::string_view key, bool allowed, const std::string& why) {
    if (const Entry* e = f->find(key); e && !allowed) d.c.error(e->key, e->path, why);
  };
  const std::string kind_name(to_string(w.kind));
  only("senders", w.kind == WorkloadKind::incast, "only incast takes senders, not " + kind_name);
  const bool among_hosts = w.kind == WorkloadKind::all_to_all || w.kind == WorkloadKind::flows;
  only("hosts", among_hosts, "only all_to_all and flows take hosts; " + kind_name + " takes from and to");
  only("from", !among_hosts, kind_name + " takes hosts: [list], not from and to");
  only("to", !among_hosts, kind_name + " takes hosts: [list], not from and to");
  const bool flows = w.kind == WorkloadKind::flows;
  for (std::string_view k : {"cdf", "load", "duration"}) only(k, flows, "only flows takes " + std::string(k));
  for (std::string_view k : {"size", "count", "outstanding"})
    only(k, !flows,
         "flows draws each flow's size from its cdf and sends it as one message; no " + std::string(k));
  const bool atomic_kind = w.kind == WorkloadKind::atomic_bw || w.kind == WorkloadKind::atomic_lat;
  only("op", is_pattern(w.kind) || atomic_kind || flows,
       "only incast, all_to_all, pingpong, atomic_bw and atomic_lat take op; " + kind_name +
           " implies its operation");

  // The basic operation.
  WorkloadKind op = w.kind;
  const Entry* ope = f->find("op");
  if (is_pattern(w.kind) || flows) op = WorkloadKind::rdma_write;
  switch (w.kind) {
    case WorkloadKind::write_bw:
    case WorkloadKind::write_lat:
      op = WorkloadKind::rdma_write;
      break;
    case WorkloadKind::read_bw:
    case WorkloadKind::read_lat:
      op = WorkloadKind::rdma_read;
      break;
    case WorkloadKind::send_bw:
    case WorkloadKind::send_lat:
      op = WorkloadKind::send;
      break;
    case WorkloadKind::atomic_bw:
    case WorkloadKind::atomic_lat:
      op = WorkloadKind::atomic_fadd;
      break;
    default:
      break;
  }
  if (ope && (is_pattern(w.kind) || atomic_kind || flows)) {
    auto o = d.c.choice<WorkloadKind>(*ope, "operation");
    if (!o) return false;
    if (!is_basic(*o)) {
      d.c.error(ope->value, ope->path,
                "op must be a basic operation: send, send_imm, rdma_write, rdma_write_imm, "
                "rdma_read, atomic_cas or atomic_fadd");
      return false;
    }
    if (flows && *o != WorkloadKind::rdma_write && *o != WorkloadKind::send) {
      d.c.error(ope->value, ope->path, "flows takes op: rdma_write or send");
      return false;
    }
    if (atomic_kind && !is_atomic(*o)) {
      d.c.error(ope->value, ope->path, "atomic_bw and atomic_lat take op: atomic_cas or atomic_fadd");
      return false;
    }
    op = *o;
  }
  w.op = std::string(to_string(op));
  const Entry& op_at = ope ? *ope : *ke;  // where to point at errors about the operation

  // Endpoints.
  const size_t hosts = d.x.topology.hosts.size();
  if (among_hosts) {
    if (const Entry* e = f->find("hosts")) {
      if (auto l = host_list(d, *e)) w.from = *l;
      if (w.from.size() == 1) d.c.error(e->value, e->path, kind_name + " needs at least two hosts");
    } else if (d.graph) {
      w.from = d.x.topology.hosts;
      if (hosts < 2) d.c.error(v, path, kind_name + " needs at least two hosts");
    }
    w.to = w.from;
    if (flows) flow_settings(d, *f, w);
  } else if (w.kind == WorkloadKind::incast) {
    if (auto to = one_host(d, *f, "to")) w.to = {*to};
    const Entry* fe = f->find("from");
    const Entry* se = f->find("senders");
    if (fe && se) {
      d.c.error(se->key, se->path, "give either from (a list of senders) or senders (a count), not both");
    } else if (fe) {
      if (auto l = host_list(d, *fe)) {
        w.from = *l;
        if (!w.to.empty() && std::find(w.from.begin(), w.from.end(), w.to[0]) != w.from.end())
          d.c.error(fe->value, fe->path, "'" + w.to[0] + "' is both a sender and the receiver");
      }
    } else if (se) {
      if (auto n = d.c.whole(*se, 1, std::max<size_t>(hosts, 2) - 1)) {
        // The first n hosts other than the receiver, in topology order.
        for (const std::string& h : d.x.topology.hosts)
          if (w.from.size() < *n && (w.to.empty() || h != w.to[0])) w.from.push_back(h);
      }
    } else {
      d.c.missing(*f, "from", "incast needs from: [senders] or senders: N");
    }
  } else {
    auto from = one_host(d, *f, "from");
    auto to = one_host(d, *f, "to");
    if (from) w.from = {*from};
    if (to) w.to = {*to};
    if (from && to && *from == *to)
      d.c.error(f->find("to")->value, f->find("to")->path, "from and to are the same host '" + *to + "'");
  }

  // Amounts and timing.
  const Entry* se = f->find("size");
  if (is_atomic(op)) w.size = Bytes(8);
  if (se) {
    if (auto b = d.c.bytes(*se, /*positive=*/false)) {  // zero-length messages are legal verbs
      w.size = *b;
      if (is_atomic(op) && b->count() != 8)
        d.c.error(se->value, se->path,
                  "atomic operations move exactly 8 bytes (one 64-bit word), got " + to_string(*b));
      if (w.kind == WorkloadKind::write_lat && b->count() == 0)
        d.c.error(se->value, se->path,
                  "write_lat needs at least 1 byte: each side polls the last byte of what the other wrote");
    }
  }
  d.c.read(*f, "count", w.count, [&](const Entry& e) { return d.c.whole(e, 1, UINT64_MAX); });
  // A QP's send queue holds 16384 work requests (the RNIC's max_qp_wr); a
  // workload keeps one more than `outstanding` posted.
  d.c.read(*f, "outstanding", w.outstanding, [&](const Entry& e) { return d.c.whole(e, 1, 16383); });
  d.c.read(*f, "start", w.start, [&](const Entry& e) { return d.c.time(e); });
  d.c.read(*f, "timeout", w.timeout, [&](const Entry& e) { return d.c.whole(e, 0, 31); });
  d.c.read(*f, "retry_cnt", w.retry_cnt, [&](const Entry& e) { return d.c.whole(e, 0, 7); });
  d.c.read(*f, "rnr_retry", w.rnr_retry, [&](const Entry& e) { return d.c.whole(e, 0, 7); });
  d.c.read(*f, "min_rnr_timer", w.min_rnr_timer, [&](const Entry& e) { return d.c.whole(e, 0, 31); });
  d.c.read(*f, "post_recvs", w.post_recvs, [&](const Entry& e) { return d.c.boolean(e); });
  d.c.read(*f, "bad_rkey", w.bad_rkey, [&](const Entry& e) { return d.c.boolean(e); });
  d.c.read(*f, "inline_threshold", w.inline_threshold,
           [&](const Entry& e) { return d.c.whole(e, 0, 65536); });
  if (const Entry* e = f->find("bad_rkey");
      e && w.bad_rkey && (op == WorkloadKind::send || op == WorkloadKind::send_imm))
    d.c.error(e->value, e->path, "SEND uses no rkey; bad_rkey applies to RDMA and atomic operations");

  // Atomic operands.
  only("add", op == WorkloadKind::atomic_fadd, "add is only for atomic_fadd, not " + w.op);
  only("compare", op == WorkloadKind::atomic_cas, "compare is only for atomic_cas, not " + w.op);
  only("swap", op == WorkloadKind::atomic_cas, "swap is only for atomic_cas, not " + w.op);
  if (op == WorkloadKind::atomic_cas) w.compare_add = 0;
  d.c.read(*f, "add", w.compare_add, [&](const Entry& e) { return d.c.whole(e, 0, UINT64_MAX); });
  d.c.read(*f, "compare", w.compare_add, [&](const Entry& e) { return d.c.whole(e, 0, UINT64_MAX); });
  d.c.read(*f, "swap", w.swap, [&](const Entry& e) { return d.c.whole(e, 0, UINT64_MAX); });

  const Entry* qe = f->find("qp");
  if (qe) {
    auto q = d.c.choice<QpType>(*qe, "QP type");
    if (!q) return false;
    w.qp = *q;
  }
  const Entry& qp_at = qe ? *qe : *ke;
  payload(d, *f, w, op);
  // What the fabric's transport can carry (the IBA service types; RFC 5040 for iWARP).
  const Entry* sizes_at = w.kind == WorkloadKind::flows ? f->find("cdf") : se;
  const bool size_checked = fabric_of(d.x).check_workload(d, w, WorkloadSites{*ke, op_at, qp_at, sizes_at});
  if (!size_checked && w.size.count() > (uint64_t{1} << 31) && se) {
    d.c.error(se->value, se->path,
              "a message is at most 2GiB (2^31 bytes, the IBA limit), got " + to_string(w.size));
  }
  return true;
}

}  // namespace

void read_workloads(ExperimentDraft& d, const Entry& e) {
  const YAML::Node& v = e.value;
  const std::string& path = e.path;
  if (!v.IsSequence()) {
    d.c.error(v, path, "expected a list of workloads, got " + describe(v));
    return;
  }
  if (v.size() == 0) d.c.error(v, path, "at least one workload");
  std::unordered_map<std::string, int> names;  // name -> line
  for (size_t i = 0; i < v.size(); ++i) {
    WorkloadConfig w;
    w.name = "w" + std::to_string(i);
    const std::string wp = index_path(path, i);
    const size_t before = d.c.errors().size();
    if (!workload(d, v[i], wp, w)) continue;
    const int line = mark_of(v[i]).line + 1;
    if (auto [at, fresh] = names.emplace(w.name, line); !fresh) {
      const YAML::Node n = v[i].IsMap() && v[i]["name"] ? v[i]["name"] : v[i];
      d.c.error(
          n, wp + ".name",
          "duplicate workload name '" + w.name + "' (first at line " + std::to_string(at->second) + ")");
    }
    if (d.c.errors().size() == before) d.workloads_read.push_back({v[i], wp, d.x.workloads.size()});
    d.x.workloads.push_back(std::move(w));
  }
}

}  // namespace rdmasim
