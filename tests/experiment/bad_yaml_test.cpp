// Every bad experiment file in tests/experiment/bad/, loaded in-process as
// `rdmasim validate` and `run` load it: refused (no config), with a located
// `file:line:column: message` naming the key. tests/e2e/test_bad_yaml.py
// runs a few of them through the binary for the exit code and stderr.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>

#include "experiment/loader.hpp"

using namespace rdmasim;

namespace {

// The folder beside this file (CMakeLists.txt defines RDMASIM_TEST_DATA).
std::filesystem::path bad_dir() { return std::filesystem::path(RDMASIM_TEST_DATA) / "bad"; }

struct BadFile {
  std::string_view name;
  int line, column;        // where the error is
  std::string_view key;    // the key path the message starts with
  std::string_view words;  // what the message must say
};

// Messages are checked on their stable parts: the location, the key path
// and the words that name what is wrong.
constexpr BadFile kBad[] = {
    {"unknown_key.yaml", 8, 40, "workloads[0].sise", "did you mean 'size'"},
    {"bad_unit.yaml", 4, 14, "link.bandwidth", "100 parsecs"},
    {"unknown_node.yaml", 6, 24, "topology.links[1][1]", "unknown node 's2'"},
    {"self_link.yaml", 6, 29, "topology.links[2]", "to itself"},
    {"disconnected_host.yaml", 4, 17, "topology.hosts[2]", "host 'c' has no link"},
    {"ud_too_big.yaml", 9, 48, "workloads[0].size", "1024 bytes"},
    {"ud_flows_too_big.yaml", 7, 11, "workloads[0].cdf",
     "4096 bytes), but the cdf hadoop draws flows of up to 10000000 bytes"},
    {"syntax.yaml", 4, 1, "YAML syntax", ""},
    {"two_documents.yaml", 6, 1, "YAML", "a second document begins here"},
    {"wrong_type.yaml", 3, 7, "seed", "got a list"},
    {"unknown_fabric.yaml", 2, 9, "fabric", "ethernet_magic"},
    {"fabric_prefix.yaml", 2, 9, "fabric", "unknown fabric 'roce' (did you mean 'roce_v2'?)"},
    {"iwarp_atomic.yaml", 9, 12, "workloads[0].kind", "atomic"},
    {"ib_mtu.yaml", 3, 13, "link.mtu", "9000"},
    {"bad_fault.yaml", 8, 21, "faults[0].link", "no link between 'a' and 'b'"},
    {"old_dcqcn_section.yaml", 3, 1, "dcqcn", "congestion_control"},
    {"cc_wrong_fabric.yaml", 3, 33, "congestion_control.algorithm", "roce_v2"},
    {"cc_hpcc_ipv6.yaml", 4, 33, "congestion_control.algorithm", "ipv4"},
    {"cc_unknown_algorithm.yaml", 3, 33, "congestion_control.algorithm", "dcqnc"},
    {"cc_bad_param.yaml", 3, 51, "congestion_control.hpcc.eta", "1.5"},
    {"irn_wrong_fabric.yaml", 3, 16, "loss_recovery", "roce_v2"},
    {"irn_ipv6.yaml", 4, 16, "loss_recovery", "ipv4"},
    {"irn_bad_rto.yaml", 4, 16, "irn.rto_low", "rto_high"},
    // Checks a run once made only after it had started: the loader makes them.
    {"ib_buffer.yaml", 4, 3, "topology.generate", "too small for ib"},
    {"host_two_links.yaml", 6, 29, "topology.links[2]", "more than one link"},
    {"flows_payload.yaml", 8, 14, "workloads[0].payload", "pattern"},
    {"payload_pattern_send.yaml", 8, 53, "workloads[0].payload", "rdma_write"},
    {"timeseries_unknown_port.yaml", 9, 47, "capture.timeseries.ports[0]", "no port 7"},
    {"timeseries_unknown_workload.yaml", 10, 37, "capture.timeseries.qps[0]", "unknown workload 'blk'"},
    // Accepted before, and the run did nothing it was asked to: no flow
    // arrived in no time; no port was captured.
    {"flows_zero_duration.yaml", 8, 15, "workloads[0].duration", "above 0"},
    {"empty_pcap_list.yaml", 8, 9, "capture.pcap", "`pcap: none`"},
};

// The error at line:column whose message names `key` and says `words`.
const LoadError* located(const LoadResult& r, const BadFile& b) {
  for (const LoadError& e : r.errors)
    if (e.line == b.line && e.column == b.column && e.message.starts_with(std::string(b.key) + ":") &&
        e.message.find(b.words) != std::string::npos)
      return &e;
  return nullptr;
}

std::string all_errors(const LoadResult& r) {
  std::string s;
  for (const LoadError& e : r.errors) s += e.format() + "\n";
  return s;
}

}  // namespace

TEST_CASE("bad yaml: every bad file is refused at its key, file:line:column: message") {
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(bad_dir())) {
    INFO(entry.path().filename().string());
    CHECK(std::ranges::any_of(kBad, [&](const BadFile& b) { return entry.path().filename() == b.name; }));
    ++files;
  }
  CHECK(files == std::size(kBad));  // every file is checked below, and every case has its file
  for (const BadFile& b : kBad) {
    const std::filesystem::path file = bad_dir() / b.name;
    const LoadResult r = load_experiment(file);
    INFO(b.name, "\n", all_errors(r));
    CHECK_FALSE(r.config);
    const LoadError* e = located(r, b);
    CHECK(e);
    if (!e) continue;
    CHECK(e->file == file.string());
    const std::string where =
        file.string() + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) + ": ";
    CHECK(e->format() == where + e->message);
  }
}

TEST_CASE("bad yaml: a link to an unknown node is the file's one error, not its consequences") {
  // "host 'b' has no link" (line 4) and "a cannot reach b" used to surround it.
  const LoadResult r = load_experiment(bad_dir() / "unknown_node.yaml");
  INFO(all_errors(r));
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].line == 6);
}
