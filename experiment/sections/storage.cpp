// `storage:`, the NVMe over Fabrics targets (docs/storage.md): on which
// host, their namespaces, the SSD behind them and how their CPU serves
// the queues.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

namespace {

void read_ssd(ExperimentDraft& d, const Entry& e, SsdConfig& s) {
  auto f = d.c.fields(e.value, e.path, "an SSD model",
                      {"read_latency", "write_latency", "latency_spread", "channels", "dies", "read_iops",
                       "write_iops", "read_bandwidth", "write_bandwidth"});
  if (!f) return;
  d.c.read(*f, "read_latency", s.read_latency, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "write_latency", s.write_latency, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "latency_spread", s.latency_spread, [&](const Entry& v) { return d.c.number(v, 0, 2); });
  d.c.read(*f, "channels", s.channels, [&](const Entry& v) { return d.c.whole(v, 1, 1024); });
  d.c.read(*f, "dies", s.dies, [&](const Entry& v) { return d.c.whole(v, 1, 1024); });
  d.c.read(*f, "read_iops", s.read_iops, [&](const Entry& v) { return d.c.whole(v, 1, 1'000'000'000); });
  d.c.read(*f, "write_iops", s.write_iops, [&](const Entry& v) { return d.c.whole(v, 1, 1'000'000'000); });
  d.c.read(*f, "read_bandwidth", s.read_bandwidth, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "write_bandwidth", s.write_bandwidth, [&](const Entry& v) { return d.c.rate(v); });
}

void read_namespace(ExperimentDraft& d, const YAML::Node& v, const std::string& path,
                    StorageTargetConfig& t) {
  auto f = d.c.fields(v, path, "a namespace", {"nsid", "size", "block_size", "ram", "ram_latency"});
  if (!f) return;
  NamespaceConfig n;
  const YAML::Mark m = mark_of(v);
  n.line = m.line + 1;
  n.column = m.column + 1;
  d.c.read(*f, "nsid", n.nsid, [&](const Entry& e) { return d.c.whole(e, 1, 0xFFFFFFFE); });
  if (const Entry* e = f->find("nsid"))
    for (const NamespaceConfig& o : t.namespaces)
      if (o.nsid == n.nsid)
        d.c.error(e->value, e->path, "namespace " + std::to_string(n.nsid) + " is given twice");
  if (const Entry* e = f->find("block_size")) {
    if (auto b = d.c.whole(*e, 512, 4096)) {
      if (*b != 512 && *b != 4096)
        d.c.error(e->value, e->path, "block_size is 512 or 4096 (the LBA formats of NVMe SSDs)");
      else
        n.block_size = static_cast<uint32_t>(*b);
    }
  }
  if (!f->has("size")) d.c.missing(*f, "size", "the namespace's capacity, such as 1GiB");
  if (const Entry* e = f->find("size")) {
    if (auto b = d.c.bytes(*e)) {
      if (b->count() % n.block_size != 0)
        d.c.error(e->value, e->path,
                  "size " + to_string(*b) + " is not a whole number of " + std::to_string(n.block_size) +
                      "-byte blocks");
      else if (b->count() / n.block_size > (uint64_t{1} << 48))
        d.c.error(e->value, e->path, "size is at most 2^48 blocks");
      else
        n.size = b->count();
    }
  }
  d.c.read(*f, "ram", n.ram, [&](const Entry& e) { return d.c.boolean(e); });
  d.c.read(*f, "ram_latency", n.ram_latency, [&](const Entry& e) { return d.c.time(e); });
  t.namespaces.push_back(n);
}

void read_target(ExperimentDraft& d, const YAML::Node& v, const std::string& path) {
  auto f = d.c.fields(v, path, "a storage target",
                      {"host", "namespaces", "ssd", "cpu", "cores", "io_cost", "inline_data_size"});
  if (!f) return;
  StorageTargetConfig t;
  const YAML::Mark m = mark_of(v);
  t.line = m.line + 1;
  t.column = m.column + 1;
  if (const Entry* e = f->find("host")) {
    if (auto n = d.c.name(e->value, e->path, "a host name")) {
      if (d.graph && !d.graph->find(*n))
        d.c.error(e->value, e->path, "unknown host '" + *n + "'" + suggestion(*n, d.x.topology.hosts));
      else if (d.x.storage.target(*n))
        d.c.error(e->value, e->path, "host " + *n + " already has a storage target");
      else
        t.host = *n;
    }
  } else {
    d.c.missing(*f, "host", "the host the target runs on");
  }
  if (const Entry* e = f->find("namespaces")) {
    if (!e->value.IsSequence() || e->value.size() == 0)
      d.c.error(e->value, e->path, "namespaces is a list such as [{nsid: 1, size: 1GiB}]");
    else
      for (size_t i = 0; i < e->value.size(); ++i)
        read_namespace(d, e->value[i], e->path + "[" + std::to_string(i) + "]", t);
  } else {
    d.c.missing(*f, "namespaces", "a list such as [{nsid: 1, size: 1GiB}]");
  }
  if (const Entry* e = f->find("ssd")) read_ssd(d, *e, t.ssd);
  d.c.read(*f, "cpu", t.cpu, [&](const Entry& e) { return d.c.choice<TargetCpu>(e, "target CPU mode"); });
  if (const Entry* e = f->find("cores")) {
    if (auto c = d.c.whole(*e, 1, 1024)) {
      if (*c > d.x.host.cores)
        d.c.error(e->value, e->path,
                  "the target's " + std::to_string(*c) + " cores are more than its host has (host.cores: " +
                      std::to_string(d.x.host.cores) + ")");
      else
        t.cores = static_cast<uint32_t>(*c);
    }
  }
  d.c.read(*f, "io_cost", t.io_cost, [&](const Entry& e) { return d.c.time(e); });
  d.c.read(*f, "inline_data_size", t.inline_data_size,
           [&](const Entry& e) { return d.c.whole(e, 0, 16384); });
  if (!t.host.empty()) d.x.storage.targets.push_back(std::move(t));
}

}  // namespace

void read_storage(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "storage settings", {"targets"});
  if (!f) return;
  const Entry* t = f->find("targets");
  if (!t) {
    d.c.missing(*f, "targets", "a list such as [{host: t, namespaces: [{nsid: 1, size: 1GiB}]}]");
    return;
  }
  if (!t->value.IsSequence()) {
    d.c.error(t->value, t->path,
              "targets is a list such as [{host: t, namespaces: [{nsid: 1, size: 1GiB}]}]");
    return;
  }
  for (size_t i = 0; i < t->value.size(); ++i)
    read_target(d, t->value[i], t->path + "[" + std::to_string(i) + "]");
}

}  // namespace rdmasim
