// kind: nvme: an fio-style job of NVMe over Fabrics I/O from an initiator
// host to a namespace of a `storage:` target (initiator.hpp, target.hpp),
// in fio's terms: its keys are fio's names, its results fio's numbers, and
// it writes fio.json (and nvme.csv with capture.timeseries); docs/storage.md.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "topologies/key_table.hpp"
#include "workloads/nvme/fio_json.hpp"
#include "workloads/nvme/initiator.hpp"
#include "workloads/nvme/storage_run.hpp"
#include "workloads/workload.hpp"
#include "workloads/workload_kind.hpp"
#include "workloads/workload_memory.hpp"
#include "workloads/workload_reader.hpp"

namespace rdmasim {

namespace {

// fio's rw values the model runs: `rw` is fio's other name for `readwrite`
// (fio's HOWTO, rw=). fio's trim patterns are refused: the target models
// no Dataset Management (Deallocate) command.
constexpr std::string_view kRwNames[] = {"read",   "write",     "randread", "randwrite",
                                         "randrw", "readwrite", "rw"};
constexpr std::string_view kTrimNames[] = {"trim", "randtrim", "trimwrite", "randtrimwrite"};

ValueType<NvmeRw> fio_rw() {
  return {
      keys::choices(kRwNames), "", "", [](YamlReader& c, const Entry& e) -> std::optional<NvmeRw> {
        const std::vector<std::string_view> names(std::begin(kRwNames), std::end(kRwNames));
        if (e.value.IsScalar() && std::ranges::find(kTrimNames, e.value.Scalar()) != std::end(kTrimNames)) {
          c.error(e.value, e.path,
                  "I/O pattern '" + e.value.Scalar() +
                      "' is fio's, but trims are not modelled (the target has no Dataset Management); "
                      "expected one of " +
                      join_names(names));
          return std::nullopt;
        }
        const auto s = c.one_of(e.value, e.path, "I/O pattern (fio's rw)", names);
        if (!s) return std::nullopt;
        return *s == "rw" ? NvmeRw::readwrite : from_string<NvmeRw>(*s);
      }};
}

// A time, or -1 (none), as nvme connect takes ctrl_loss_tmo and
// fast_io_fail_tmo (Linux's ints, where -1 is `what_off`); -1 is kept as a
// negative time.
ValueType<Time> time_or_off(std::string what_off) {
  return {"time or `-1`", "", "", [what_off](YamlReader& c, const Entry& e) -> std::optional<Time> {
            if (e.value.IsScalar() && e.value.Scalar() == "-1") return Time::ps(-1);
            if (e.value.IsScalar() && e.value.Scalar().starts_with("-")) {
              c.error(e.value, e.path, "expected a time, or -1 (" + what_off + "); got " + describe(e.value));
              return std::nullopt;
            }
            return c.time(e);
          }};
}

// nvme connect --keep-alive-tmo: whole seconds (Linux's option counts them).
ValueType<Time> keep_alive_timeout() {
  return keys::refusing<Time>(
      keys::time(), "0 or whole seconds", [](const Time& t) { return t.count() % Time::s(1).count() != 0; },
      [](const Entry& e) {
        return "kato is whole seconds (nvme connect --keep-alive-tmo counts them); got " + describe(e.value);
      });
}

// fio's bw_avg_time / iops_avg_time: whole milliseconds (fio counts them), at least one.
ValueType<Time> sample_interval(std::string key) {
  return keys::refusing<Time>(
      keys::time(), "whole milliseconds, at least 1ms",
      [](const Time& t) { return t < Time::ms(1) || t.count() % Time::ms(1).count() != 0; },
      [key](const Entry& e) {
        return key + " is whole milliseconds, at least 1ms (fio counts it in ms); got " + describe(e.value);
      });
}

// fio's sizes (its HOWTO, "Parameter types"; parse.c's get_mult_bytes):
// a whole number with k, m, g, t or p, and an optional b, in either case,
// counted in powers of 1024 (fio's default kb_base=1024): bs=4k is 4096.
// Nullopt for any other text, which is read as rdmasim's sizes (64KiB is
// 65536 there; fio's compatibility mode would read KiB as 1000).
std::optional<uint64_t> fio_size(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 19) return std::nullopt;
  std::string_view unit = text.substr(digits);
  if (unit.size() == 2 && (unit[1] == 'b' || unit[1] == 'B')) unit.remove_suffix(1);
  if (unit.size() != 1) return std::nullopt;
  const size_t power = std::string_view("kmgtp").find(static_cast<char>(unit[0] | 0x20));
  if (power == std::string_view::npos) return std::nullopt;
  unsigned __int128 v = std::stoull(std::string(text.substr(0, digits)));
  v <<= 10 * (power + 1);
  if (v > UINT64_MAX) return std::nullopt;
  return static_cast<uint64_t>(v);
}

// A job's size key: fio's forms (4k, 128K, 1m) or rdmasim's (4096, 4KiB).
std::optional<Bytes> job_size(YamlReader& c, const Entry& e, bool positive = true) {
  if (e.value.IsScalar())
    if (const std::optional<uint64_t> v = fio_size(e.value.Scalar())) {
      if (positive && *v == 0) {
        c.error(e.value, e.path, "must be at least 1 byte, got " + describe(e.value));
        return std::nullopt;
      }
      return Bytes(*v);
    }
  return c.bytes(e, positive);
}

// runtime and ramp_time: fio reads a number without a unit as seconds,
// rdmasim as picoseconds, so `runtime: 30` is refused rather than read as
// 30 ps (no I/O at all); 0 is the same in every unit.
ValueType<Time> job_time(ValueType<Time> base) {
  return {base.type, base.range, base.unit,
          [parse = base.parse](YamlReader& c, const Entry& e) -> std::optional<Time> {
            if (e.value.IsScalar() && !written_with_unit(e.value.Scalar()) && e.value.Scalar() != "0" &&
                parse_time(e.value.Scalar())) {
              c.error(
                  e.value, e.path,
                  e.path.substr(e.path.rfind('.') + 1) + " " + e.value.Scalar() +
                      " has no unit: fio would read seconds, rdmasim picoseconds; write the unit, such as " +
                      e.value.Scalar() + "s or " + e.value.Scalar() + "ms");
              return std::nullopt;
            }
            return parse(c, e);
          }};
}

// The job's keys; bs, offset and size, checked against the namespace's
// blocks and each other before they are kept, are read by `read`.
const KeyTable<NvmeJobConfig>& nvme_keys() {
  using namespace keys;
  using J = NvmeJobConfig;
  static const KeyTable<J> t{
      "workloads.nvme",
      "a workload",
      {
          declared<J>("initiator", "host name", "",
                      "the host that runs the job (the NVMe-oF host); required"),
          declared<J>("target", "host name", "", "the storage target's host (storage.targets); required"),
          key("nsid", &J::nsid, whole(1, 0xFFFFFFFE), "1", "the namespace it reads and writes"),
          key("rw", &J::rw, fio_rw(), "randread", "fio's I/O pattern (`rw`: `readwrite`)"),
          declared<J>("bs", "size (fio's 4k too)", "4KiB",
                      "bytes of each I/O, a multiple of the namespace's block size, at most 1MiB"),
          key("iodepth", &J::iodepth, whole(1, 1024), "1",
              "I/Os each job keeps outstanding, at most queue_size"),
          key("numjobs", &J::numjobs, whole(1, 1024), "1", "jobs, each with an I/O queue of its own"),
          key("group_reporting", &J::group_reporting, boolean(), "false",
              "fio.json: the numjobs jobs as one entry; false: an entry each, as fio"),
          key("rwmixread", &J::rwmixread, whole(0, 100), "50", "randrw and readwrite: percent of reads"),
          key("runtime", &J::runtime, job_time(positive_time()), "",
              "how long each job issues I/O; none: until size bytes are done"),
          declared<J>("size", "size (fio's 1g too)", "",
                      "bytes of the region and of I/O per job; none: the namespace from offset"),
          declared<J>("offset", "size (fio's 1m too)", "0", "where the region starts, on a block boundary"),
          key("ramp_time", &J::ramp_time, job_time(time()), "0", "I/O completed before this is not counted"),
          key("start", &J::start_time, time(), "0", "when the host connects to the target"),
          key("queue_size", &J::queue_size, whole(2, 1024), "128",
              "entries of each I/O queue (nvme connect -Q)"),
          key("hdgst", &J::hdgst, boolean(), "false", "NVMe/TCP: header digests (nvme connect --hdr-digest)"),
          key("ddgst", &J::ddgst, boolean(), "false", "NVMe/TCP: data digests (nvme connect --data-digest)"),
          key("io_timeout", &J::io_timeout, time_from(kShortestTimer, "nvme-core's command timer"), "30s",
              "an I/O queue's command not completed in this time: error recovery (while connecting: the "
              "connect fails) (nvme_core.io_timeout)"),
          key("admin_timeout", &J::admin_timeout, time_from(kShortestTimer, "nvme-core's command timer"),
              "60s", "the same for the admin queue's commands (nvme_core.admin_timeout)"),
          key("max_retries", &J::max_retries, whole(0, 1000), "5",
              "times a command cancelled by error recovery is sent again (nvme_core.max_retries)"),
          key("reconnect_delay", &J::reconnect_delay,
              time_from(Time::ms(1), "a reconnect every microsecond for ctrl_loss_tmo would never end"),
              "10s", "wait before each reconnect attempt (nvme connect --reconnect-delay)"),
          key("ctrl_loss_tmo", &J::ctrl_loss_tmo, time_or_off("reconnect for ever"), "600s",
              "reconnect attempts stop after ctrl_loss_tmo / reconnect_delay of them, rounded up, and the "
              "job fails; `-1`: reconnect for ever (nvme connect --ctrl-loss-tmo)"),
          key("fast_io_fail_tmo", &J::fast_io_fail_tmo, time_or_off("off"), "-1",
              "this long into error recovery, I/O waiting for the reconnect fails (Host Path Error) "
              "instead; `-1`: off (nvme connect --fast_io_fail_tmo)"),
          key("kato", &J::kato, keep_alive_timeout(), "5s",
              "keep-alive timeout, in the admin Connect; the host sends Keep Alive every kato/2 and the "
              "target drops a controller silent for it; `0`: off (nvme connect --keep-alive-tmo)"),
          key("bw_avg_time", &J::bw_avg_time, sample_interval("bw_avg_time"), "500ms",
              "fio.json: a bandwidth sample (bw_min ... bw_samples) each this much of the job's time "
              "after ramp_time"),
          key("iops_avg_time", &J::iops_avg_time, sample_interval("iops_avg_time"), "500ms",
              "fio.json: an IOPS sample (iops_min ... iops_samples) each this much of the job's time "
              "after ramp_time"),
      }};
  return t;
}

// What the reader keeps of the keys: the job's configuration.
struct NvmeSettings final : WorkloadSettings {
  NvmeJobConfig job;
};

class Run final : public WorkloadRun {
 public:
  Run(WorkloadEnv& env, const WorkloadConfig& w, uint64_t seed) : WorkloadRun(w), env_(env), seed_(seed) {}
  void start() override {
    const NvmeJobConfig& c = w_.settings_as<NvmeSettings>().job;
    nvme::StorageRun& st = nvme::storage_of(env_);
    Host* h = env_.host(c.initiator);
    if (!h) throw std::logic_error("workload names an unknown host");
    nvme::NvmeTarget& t = st.target(c.target);
    job_ = std::make_unique<nvme::NvmeJob>(env_, w_.name, c, *h, t, st.cm(), seed_);
    if (env_.cfg.capture.timeseries) job_->record_ios();  // nvme.csv
    job_->start();
  }
  bool finished() const override { return !job_ || job_->finished(); }
  FlowStats result() const override {
    if (!job_) return result_of({});
    const nvme::NvmeResult r = job_->result();
    FlowStats all;
    all.ops = r.read.ios + r.write.ios;
    all.bytes = r.read.bytes + r.write.bytes;
    all.start = r.measure_start;
    all.end = std::max(r.measure_start, r.measure_end);
    all.finished = r.finished;
    all.data_verified = r.data_verified;
    return all;
  }
  // fio's numbers (docs/storage.md).
  void add_results(nlohmann::json& j) const override {
    if (job_) j.update(nvme::nvme_results_json(job_->result(), w_.settings_as<NvmeSettings>().job));
  }
  // nvme.csv's rows of its I/Os.
  std::string io_rows() const {
    std::string out;
    if (job_)
      for (const auto& io : job_->records())
        out += fmt::format("{},{},{},{},{},{},{},{}\n", w_.name, io.job, io.write ? "write" : "read", io.lba,
                           io.blocks, io.submit_ps, io.complete_ps, io.status);
    return out;
  }

 private:
  WorkloadEnv& env_;
  uint64_t seed_;
  std::unique_ptr<nvme::NvmeJob> job_;
};

// A split run numbers a `flows` workload's QPs, memory regions and buffers
// on every rank alike (Flow::make_side): each flow's objects as it arrives,
// on its rank, and on the others the numbers alone. An NVMe job makes its
// queues' objects while the run goes on, on its hosts' rank only, so a flow
// arriving after them on one of those hosts would be numbered differently
// on the two ranks (its peer would write to a wrong rkey). Refused before
// the run starts, until NVMe's objects take numbers of their own.
void refuse_beside_flows(const ExperimentConfig& x, const WorkloadConfig& w) {
  const NvmeJobConfig& j = w.settings_as<NvmeSettings>().job;
  for (const WorkloadConfig& f : x.workloads) {
    if (f.kind_name != "flows") continue;
    for (const std::string& h : {j.initiator, j.target}) {
      if (std::ranges::find(f.from, h) == f.from.end()) continue;
      throw InputError(fmt::format(
          "{}:{}:{}: workloads: nvme workload {} and flows workload {} share host {}: a run with both "
          "on one host cannot be split over ranks (the NVMe queues made during the run would number "
          "the flows' QPs and memory regions differently on the two ranks); run it without mpirun, "
          "or give the flows `hosts` without {} (docs/parallel.md)",
          x.file.string(), w.line, w.column, w.name, f.name, h, h));
    }
  }
}

class NvmeWorkload final : public Workload {
 public:
  std::vector<std::string_view> names() const override { return {"nvme"}; }
  const KeyTableBase& keys() const override { return nvme_keys(); }
  // RDMA against NVMe/TCP is the comparison a storage team makes.
  bool compared_on_every_fabric() const override { return true; }

  bool read(ExperimentDraft& d, const Fields& f, WorkloadConfig& w, const Entry&) const override {
    auto settings = std::make_shared<NvmeSettings>();
    NvmeJobConfig& j = settings->job;
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
    const KeyFields k = nvme_keys().read(d.c, f, j);
    w.start = j.start_time;
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
    if (const Entry* e = k.read_ok("iodepth"); e && j.iodepth > j.queue_size)
      d.c.error(e->value, e->path,
                "iodepth " + std::to_string(j.iodepth) + " is more than the I/O queue's " +
                    std::to_string(j.queue_size) + " entries (queue_size)");
    const uint32_t block = ns ? ns->block_size : 512;
    if (const Entry* e = f.find("bs")) {
      if (auto b = job_size(d.c, *e)) {
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
      if (auto b = job_size(d.c, *e, false)) {
        if (b->count() % block != 0)
          d.c.error(e->value, e->path, "offset " + to_string(*b) + " is not on a block boundary");
        else
          j.offset = b->count();
      }
    }
    if (const Entry* e = f.find("size")) {
      if (auto b = job_size(d.c, *e)) {
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
    w.settings = std::move(settings);
    return true;
  }
  // An I/O queue a job and the admin queue; each job's I/O buffers at both ends.
  WorkloadMemory memory(const ExperimentConfig&, const WorkloadConfig& w) const override {
    const NvmeJobConfig& j = w.settings_as<NvmeSettings>().job;
    // Each job's I/O buffers twice (initiator and target), and its state
    // beyond them: latency samples, the target's SSD model and block
    // generations, the connection manager (nvmeof_compare.yaml peaks
    // 1.6 MiB above the buffers alone).
    constexpr uint64_t kJobStateBytes = 1 << 20;
    const uint64_t buffers = sat_mul(2, sat_mul(j.numjobs, sat_mul(j.iodepth, j.bs)));
    WorkloadMemory m{uint64_t{j.numjobs} + 1, buffers + sat_mul(j.numjobs, kJobStateBytes),
                     "of " + to_string(Bytes(j.bs)) + " I/Os and the jobs' state"};
    m.sending = j.numjobs;
    return m;
  }
  // spans_ranks: no (the default): a job shares its target's state
  // (namespaces, the data check) with the target, so both stay on one rank.
  std::unique_ptr<WorkloadRun> attach(WorkloadEnv& env, const WorkloadConfig& w,
                                      uint64_t seed) const override {
    if (env.sim.split()) refuse_beside_flows(env.cfg, w);
    return std::make_unique<Run>(env, w, seed);
  }
  // The run adds fio's numbers (Run::add_results): they need the job's samples.
  void results(const ExperimentConfig&, const WorkloadConfig&, const FlowStats&,
               nlohmann::json&) const override {}
  // fio.json from the merged results.json entries (a run split over ranks
  // has them all on rank 0 only after the merge); nvme.csv: every I/O.
  std::map<std::string, std::string> outputs(const ExperimentConfig& x, const nlohmann::json& workloads,
                                             const std::vector<const WorkloadRun*>& runs,
                                             Time end) const override {
    nlohmann::json jobs = nlohmann::json::array();
    for (const nlohmann::json& e : workloads)
      if (e.value("kind", "") == "nvme")
        for (nlohmann::json& job : nvme::fio_jobs_json(e)) jobs.push_back(std::move(job));
    std::map<std::string, std::string> out;
    if (jobs.empty()) return out;
    if (x.capture.timeseries) {
      std::string rows = "workload,job,op,lba,blocks,submit_ps,complete_ps,status\n";
      for (const WorkloadRun* r : runs) rows += static_cast<const Run*>(r)->io_rows();
      out["nvme.csv"] = std::move(rows);
    }
    out["fio.json"] = nvme::fio_document(std::move(jobs), x.seed, end).dump(2) + "\n";
    return out;
  }
};

}  // namespace

const Workload& nvme_workload() {
  static const NvmeWorkload k;
  return k;
}

}  // namespace rdmasim
