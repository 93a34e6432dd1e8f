// `storage:`, the NVMe over Fabrics targets (docs/storage.md): on which
// host, their namespaces, the SSD behind them and how their CPU serves
// the queues.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

using namespace keys;

namespace {

const KeyTable<SsdConfig>& ssd_keys() {
  using S = SsdConfig;
  static const KeyTable<S> t{
      "storage.targets.ssd",
      "an SSD model",
      {
          key("read_latency", &S::read_latency, positive_time(), "82us", "mean service time of a read"),
          key("write_latency", &S::write_latency, positive_time(), "15us",
              "of a write (into the drive's power-protected cache)"),
          key("latency_spread", &S::latency_spread, number(0, 2), "0.2",
              "sigma of the lognormal service time (0: constant)"),
          key("channels", &S::channels, whole(1, 1024), "16", "parallel units: channels × dies"),
          key("dies", &S::dies, whole(1, 1024), "4", "dies per channel"),
          key("read_iops", &S::read_iops, whole(1, 1'000'000'000), "700000", "4 KiB random reads a second"),
          key("write_iops", &S::write_iops, whole(1, 1'000'000'000), "170000",
              "4 KiB random writes a second"),
          key("read_bandwidth", &S::read_bandwidth, rate(), "52Gbps", "sequential read rate"),
          key("write_bandwidth", &S::write_bandwidth, rate(), "27.2Gbps", "sequential write rate"),
      }};
  return t;
}

// NVMe SSDs' LBA formats.
ValueType<uint64_t> block_size() {
  return {"`512` or `4096`", "", "", [](YamlReader& c, const Entry& e) -> std::optional<uint64_t> {
            auto b = c.whole(e, 512, 4096);
            if (b && *b != 512 && *b != 4096) {
              c.error(e.value, e.path, "block_size is 512 or 4096 (the LBA formats of NVMe SSDs)");
              return std::nullopt;
            }
            return b;
          }};
}

const KeyTable<NamespaceConfig>& namespace_keys() {
  using N = NamespaceConfig;
  static const KeyTable<N> t{
      "storage.targets.namespaces",
      "a namespace",
      {
          key("nsid", &N::nsid, whole(1, 0xFFFFFFFE), "1", "the namespace's id, unique in its target"),
          required(
              declared<N>("size", "size", "", "its capacity, a whole number of blocks, at most 2^48 of them"),
              "the namespace's capacity, such as 1GiB"),
          key("block_size", &N::block_size, block_size(), "512", "bytes a block"),
          key("ram", &N::ram, boolean(), "false",
              "RAM-backed (null_blk-like): no SSD, a fixed `ram_latency`"),
          key("ram_latency", &N::ram_latency, time(), "500ns", "a RAM-backed namespace's service time"),
      }};
  return t;
}

void read_namespace(ExperimentDraft& d, const YAML::Node& v, const std::string& path,
                    StorageTargetConfig& t) {
  NamespaceConfig n;
  const auto f = namespace_keys().read(d.c, v, path, n);
  if (!f) return;
  const YAML::Mark m = mark_of(v);
  n.line = m.line + 1;
  n.column = m.column + 1;
  if (const Entry* e = f->find("nsid"))
    for (const NamespaceConfig& o : t.namespaces)
      if (o.nsid == n.nsid)
        d.c.error(e->value, e->path, "namespace " + std::to_string(n.nsid) + " is given twice");
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
  t.namespaces.push_back(n);
}

const KeyTable<StorageTargetConfig>& target_keys() {
  using T = StorageTargetConfig;
  static const KeyTable<T> t{
      "storage.targets",
      "a storage target",
      {
          required(declared<T>("host", "host name", "", "the host the target runs on (one target a host)"),
                   "the host the target runs on"),
          required(
              with_table(declared<T>("namespaces", "list of maps", "", "its namespaces"), namespace_keys()),
              "a list such as [{nsid: 1, size: 1GiB}]"),
          map_key("ssd", &T::ssd, ssd_keys(),
                  "the SSD behind the target's SSD-backed namespaces (one drive for all of them)"),
          key("cpu", &T::cpu, choice<TargetCpu>("target CPU mode"), "poll",
              "`poll`: SPDK-style pollers, one per core, spinning on their completion queues (the cores are "
              "busy all the time); `interrupt`: the kernel target, woken by an interrupt per completion "
              "event "
              "(`host.interrupt_cost`, moderation as `host.interrupt_coalescing`), its work counted as "
              "softirq time. On `tcp` both serve sockets with sleeping threads (the kernel's receive path "
              "wakes them); the mode sets `io_cost` and whether it counts as user or kernel time"),
          declared<T>(
              "cores", "whole number, 1 to `host.cores`", "1",
              "cores serving the queues; queues go to them in turn as they connect (SPDK's round robin); on "
              "`tcp` each queue's reader and writer threads run on its core"),
          key("io_cost", &T::io_cost, time(), "0",
              "CPU per command on its core; half as much again when the SSD completes it; `0`: the mode's, "
              "`1us` polling, `3us` interrupt"),
          key("inline_data_size", &T::inline_data_size, whole(0, 16384, "bytes"), "4096",
              "in-capsule data an I/O queue's command may carry (on RDMA the admin queue takes none; on "
              "NVMe/TCP it takes 8 KiB)"),
      }};
  return t;
}

// The target's host: a host of the topology with no other target.
void read_target_host(ExperimentDraft& d, const Entry& e, StorageTargetConfig& t) {
  auto n = d.c.name(e.value, e.path, "a host name");
  if (!n) return;
  if (d.graph && !d.graph->find(*n))
    d.c.error(e.value, e.path, "unknown host '" + *n + "'" + suggestion(*n, d.x.topology.hosts));
  else if (d.x.storage.target(*n))
    d.c.error(e.value, e.path, "host " + *n + " already has a storage target");
  else
    t.host = *n;
}

void read_target(ExperimentDraft& d, const YAML::Node& v, const std::string& path) {
  StorageTargetConfig t;
  const auto f = target_keys().read(d.c, v, path, t);
  if (!f) return;
  const YAML::Mark m = mark_of(v);
  t.line = m.line + 1;
  t.column = m.column + 1;
  if (const Entry* e = f->find("host")) read_target_host(d, *e, t);
  if (const Entry* e = f->find("namespaces")) {
    if (!e->value.IsSequence() || e->value.size() == 0)
      d.c.error(e->value, e->path, "namespaces is a list such as [{nsid: 1, size: 1GiB}]");
    else
      for (size_t i = 0; i < e->value.size(); ++i) read_namespace(d, e->value[i], index_path(e->path, i), t);
  }
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
  if (!t.host.empty()) d.x.storage.targets.push_back(std::move(t));
}

}  // namespace

const KeyTable<StorageConfig>& storage_keys() {
  static const KeyTable<StorageConfig> t{
      "storage",
      "storage settings",
      {
          required(with_table(declared<StorageConfig>("targets", "list of maps", "",
                                                      "the NVMe over Fabrics targets"),
                              target_keys()),
                   "a list such as [{host: t, namespaces: [{nsid: 1, size: 1GiB}]}]"),
      }};
  return t;
}

void read_storage(ExperimentDraft& d, const Entry& e) {
  const auto f = storage_keys().read(d.c, e.value, e.path, d.x.storage);
  const Entry* t = f ? f->find("targets") : nullptr;
  if (!t) return;
  if (!t->value.IsSequence()) {
    d.c.error(t->value, t->path,
              "targets is a list such as [{host: t, namespaces: [{nsid: 1, size: 1GiB}]}]");
    return;
  }
  for (size_t i = 0; i < t->value.size(); ++i) read_target(d, t->value[i], index_path(t->path, i));
}

}  // namespace rdmasim
