#include "apps/report.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

using namespace rdmasim;
using nlohmann::json;

namespace {

json results(const char* fabric, double gbps, int p50_ns, uint64_t drops) {
  return {
      {"experiment", "quickstart"},
      {"fabric", fabric},
      {"seed", 1},
      {"end_time_ps", 60'000'000},
      {"workloads",
       {{{"name", "w0"},
         {"kind", "rdma_write"},
         {"from", "a"},
         {"to", "b"},
         {"qp", "rc"},
         {"ops", 100},
         {"bytes", 6553600},
         {"completions", {{"IBV_WC_SUCCESS", 98}, {"IBV_WC_RETRY_EXC_ERR", 2}}},
         {"throughput_gbps", gbps},
         {"latency_ns", {{"min", 1000}, {"p50", p50_ns}, {"p99", 2500}, {"p999", 2900}, {"max", 3000}}},
         {"data_verified", true}}}},
      {"ports", {{{"node", "a"}, {"port", 0}, {"drops", drops}}, {{"node", "b"}, {"port", 0}, {"drops", 1}}}},
      {"hosts", {{{"name", "a"}, {"cpu_busy_ps", 2'000'000}}, {{"name", "b"}, {"cpu_busy_ps", 500'000}}}}};
}

}  // namespace

TEST_CASE("the run summary names each workload's numbers, the end time, drops and the output") {
  const std::string s = format_run_summary(results("roce_v2", 87.4, 1234, 3), "out/quickstart");
  CHECK(s ==
        "quickstart on roce_v2, seed 1\n"
        "  workload  kind        from -> to  ops  completions                   Gb/s  p50 us  p99 us  data "
        "verified\n"
        "  w0        rdma_write  a -> b      100  SUCCESS 98, RETRY_EXC_ERR 2  87.40   1.234   2.500  yes\n"
        "end time 60.000 us, drops 4 (host NIC queues 4)\n"
        "output: out/quickstart (results.json)\n");
}

TEST_CASE("the run summary gives a compute workload's host, work done and end") {
  json r = results("roce_v2", 87.4, 1234, 0);
  r["workloads"].push_back({{"name", "calc"},
                            {"kind", "compute"},
                            {"on", "a"},
                            {"work_ps", 300'000'000},
                            {"work_done_ps", 300'000'000},
                            {"end_ps", 424'500'000},
                            {"finished", true}});
  const std::string s = format_run_summary(r, "out/x");
  CHECK(s.find("  calc      compute     on a          -  300.000 us of CPU, ends 424.500 us      -       -   "
               "    -  n/a\n") != std::string::npos);
  CHECK(s.find("  n/a: calc moves no data (a compute process)\n") != std::string::npos);
}

TEST_CASE("the data-verified cell: a run cut off by stop is not a corrupted one") {
  auto cell = [](json verified, json mismatch, json finished) {
    json r = results("roce_v2", 87.4, 1234, 0);
    json& w = r["workloads"][0];
    w["data_verified"] = verified;
    if (!mismatch.is_null()) w["data_mismatch"] = mismatch;
    if (!finished.is_null()) w["finished"] = finished;
    const std::string s = format_run_summary(r, "d");
    const size_t eol = s.find('\n', s.find("  w0 "));
    return s.substr(s.rfind("  ", eol) + 2, eol - s.rfind("  ", eol) - 2);
  };
  CHECK(cell(true, false, true) == "yes");
  CHECK(cell(true, false, false) == "cut off");   // what was delivered was intact
  CHECK(cell(false, false, false) == "cut off");  // nothing could be compared yet
  CHECK(cell(false, true, false) == "MISMATCH");  // a wrong byte, cut off or not
  CHECK(cell(false, true, true) == "MISMATCH");
  CHECK(cell(false, false, true) == "not all delivered");  // it failed first
  CHECK(cell(false, nullptr, nullptr) == "MISMATCH");
  CHECK(cell(true, nullptr, nullptr) == "yes");
}

TEST_CASE("a run of programs only prints no empty workloads table") {
  json r = results("roce_v2", 87.4, 1234, 0);
  r["workloads"] = json::array();
  const std::string s = format_run_summary(r, "out/x");
  CHECK(s.find("workload") == std::string::npos);
  CHECK(s ==
        "quickstart on roce_v2, seed 1\nend time 60.000 us, drops 1 (host NIC queues 1)\noutput: out/x "
        "(results.json)\n");
}

TEST_CASE("the run summary survives missing keys") {
  const std::string s = format_run_summary(json::object(), "x");
  CHECK(s.find("- on -, seed -") == 0);
  CHECK(s.find("end time -, drops 0") != std::string::npos);
}

TEST_CASE("compare entries keep what the table shows; the table puts fabrics side by side") {
  json cmp = {{"experiment", "quickstart"},
              {"seed", 1},
              {"fabrics",
               {compare_entry("ib", results("ib", 95.5, 900, 0), "ib"),
                compare_entry("roce_v2", results("roce_v2", 87.4, 1234, 3), "roce_v2"),
                compare_skipped("iwarp", "x.yaml:7:5: iwarp has no UD")}}};
  const json& ib = cmp["fabrics"][0];
  CHECK(ib["status"] == "ok");
  CHECK(ib["drops"] == 1);
  CHECK(ib["cpu_busy_ps"] == 2'500'000);
  CHECK(ib["workloads"][0]["latency_ns"]["p50"] == 900);
  CHECK(ib["workloads"][0]["latency_ns"]["p999"] == 2900);
  CHECK(cmp["fabrics"][2]["reason"] == "x.yaml:7:5: iwarp has no UD");

  CHECK(format_compare_table(cmp) ==
        "quickstart, seed 1\n"
        "                               ib  roce_v2\n"
        "  w0 throughput Gb/s        95.50    87.40\n"
        "  w0 latency p50 us         0.900    1.234\n"
        "  w0 latency p99 us         2.500    2.500\n"
        "  w0 latency p99.9 us       2.900    2.900\n"
        "  w0 data verified            yes      yes\n"
        "  cpu busy us (all hosts)   2.500    2.500\n"
        "  cpu ms per GB, working    0.381    0.381\n"
        "  cpu ms per GB, spinning   0.000    0.000\n"
        "  drops                         1        4\n"
        "    at host NIC queues          1        4\n"
        "  end time us              60.000   60.000\n"
        "skipped iwarp: x.yaml:7:5: iwarp has no UD\n");
}

TEST_CASE("compare entries divide the CPU per GB moved into working and spinning") {
  json r = results("roce_v2", 87.4, 1234, 0);
  // a: 2us busy of which 1.5us polling an empty CQ; b: 0.5us of work.
  r["hosts"][0]["cores"] = {{{"user_ps", 500'000}, {"poll_ps", 1'500'000}, {"idle_ps", 58'000'000}}};
  r["hosts"][1]["cores"] = {{{"syscall_ps", 500'000}, {"poll_ps", 0}, {"idle_ps", 59'500'000}}};
  r["workloads"][0]["bytes"] = 1'000'000;  // 1 MB: per GB is 1000 times the totals
  const json e = compare_entry("roce_v2", r, "x");
  CHECK(e["bytes"] == 1'000'000);
  CHECK(e["cpu_work_ms_per_gb"].get<double>() == doctest::Approx(1.0));  // 1us of work
  CHECK(e["cpu_spin_ms_per_gb"].get<double>() == doctest::Approx(1.5));  // 1.5us spinning
  r["workloads"][0]["bytes"] = 0;
  CHECK(compare_entry("roce_v2", r, "x")["cpu_work_ms_per_gb"].is_null());  // nothing moved: no ratio
}

TEST_CASE("a workload missing on one fabric shows as a dash there") {
  json other = results("ib", 1, 1, 0);
  other["workloads"][0]["name"] = "w1";
  json cmp = {{"experiment", "e"},
              {"seed", 2},
              {"fabrics", {compare_entry("a", results("a", 2, 2, 0), "a"), compare_entry("b", other, "b")}}};
  const std::string t = format_compare_table(cmp);
  CHECK(t.find("  w0 throughput Gb/s         2.00       -\n") != std::string::npos);
  CHECK(t.find("  w1 throughput Gb/s            -    1.00\n") != std::string::npos);
}

TEST_CASE("the run summary prints the end time in a unit that fits") {
  json r = results("ib", 1, 1, 0);
  r["end_time_ps"] = 10'000'000'000;
  CHECK(format_run_summary(r, "d").find("end time 10.000 ms,") != std::string::npos);
  r["end_time_ps"] = 999;
  CHECK(format_run_summary(r, "d").find("end time 999 ps,") != std::string::npos);
}

TEST_CASE("compare's cost rows are the BOM's sums, per delivered Gb/s and Mop/s") {
  json r = results("roce_v2", 87.4, 1234, 0);
  r["workloads"][0]["start_ps"] = 0;
  r["workloads"][0]["end_ps"] = 1'000'000'000;  // 6553600 B and 100 ops in 1 ms
  r["cost"] = {{"currency", "USD"},
               {"capex", 1500.0},
               {"power_w", 30.0},
               {"opex", 200.0},
               {"total", 1800.0},
               {"cpu", {{"cores", 1.0}, {"cost", 100.0}}},
               {"assumptions", {{"years", 5}, {"switches", "ethernet"}}},
               {"per_unit", {{{"unit", "GB"}, {"total", 0.5}}, {{"unit", "Mop"}, {"total", 3.0}}}},
               {"bom",
                {{{"item", "nic"}, {"count", 2}, {"unit_price", 500.0}, {"price", 1000.0}},
                 {{"item", "switch"}, {"count", 1}, {"unit_price", 500.0}, {"price", 500.0}}}}};
  const json e = compare_entry("roce_v2", r, "roce_v2");
  double bom = 0;
  for (const auto& l : e["cost"]["bom"]) bom += l["price"].get<double>();
  CHECK(e["cost"]["capex"].get<double>() == bom);
  CHECK(e["cost"]["delivered_gbps"].get<double>() == doctest::Approx(6553600 * 8 / 1e-3 / 1e9));
  CHECK(e["cost"]["per_gbps"].get<double>() == doctest::Approx(1800 / (6553600 * 8 / 1e-3 / 1e9)));
  CHECK(e["cost"]["per_mops"].get<double>() == doctest::Approx(1800 / 0.1));

  json cheaper = r;
  cheaper["fabric"] = "iwarp";
  cheaper["cost"]["total"] = 900.0;
  cheaper["cost"]["per_unit"][0]["total"] = 0.25;
  const json cmp = {
      {"experiment", "e"}, {"seed", 1}, {"fabrics", {e, compare_entry("iwarp", cheaper, "iwarp")}}};
  const std::string t = format_compare_table(cmp);
  CHECK(t.find("  capex USD                       1500      1500\n") != std::string::npos);
  CHECK(t.find("  total cost USD                  1800       900\n") != std::string::npos);
  CHECK(t.find("  switches priced             ethernet  ethernet\n") != std::string::npos);
  CHECK(t.find("  USD per GB moved                 0.5      0.25\n") != std::string::npos);
  CHECK(t.find("  USD per million operations      3.00      3.00\n") != std::string::npos);
  CHECK(t.find("cheapest per GB moved: iwarp (0.25 USD), then roce_v2 (+100%)\n") != std::string::npos);
  CHECK(t.find("cheapest per million operations: iwarp (3.00 USD), then roce_v2 (+0%)\n") !=
        std::string::npos);
}

TEST_CASE("drops are counted at every place a frame or datagram is lost, each named") {
  // A UDP flood into a kernel host: most datagrams die in the host, none on the wire.
  json r = {
      {"ports",
       {{{"node", "a"}, {"port", 0}, {"drops", 5}, {"link_drops", 2}},
        {{"node", "s"}, {"port", 1}, {"drops", 7}, {"link_drops", 0}}}},
      {"switches", {{{"node", "s"}, {"no_route", 4}, {"ttl_expired", 6}}}},
      {"hosts",
       {{{"name", "a"}},
        {{"name", "b"}, {"kernel_rx", {{"ring_drops", 9000}, {"backlog_drops", 300}, {"discarded", 1}}}}}},
      {"workloads",
       {{{"name", "flood"},
         {"kind", "udp"},
         {"datagrams",
          {{"dropped", 9315}, {"dropped_at", {{"ring", 9000}, {"backlog", 300}, {"socket", 15}}}}}}}}};
  const json d = drops_json(r);
  CHECK(d["total"] == 2 + 3 + 7 + 4 + 6 + 9000 + 300 + 15 + 1);
  CHECK(d["at"] == json{{"link", 2},
                        {"switch_queue", 7},
                        {"no_route", 4},
                        {"ttl_expired", 6},
                        {"nic_queue", 3},
                        {"nic_ring", 9000},
                        {"backlog", 300},
                        {"socket", 15},
                        {"no_socket", 1}});
  r["end_time_ps"] = 1000;
  CHECK(format_run_summary(r, "d").find(
            "drops 9,338 (links 2, switch queues 7, no route 4, TTL expired 6, host "
            "NIC queues 3, NIC ring 9,000, backlog 300, socket buffers 15, no "
            "socket 1)\n") != std::string::npos);
  // A DPDK host's ring counts too.
  r["hosts"][1] = {{"name", "b"}, {"dpdk_rx", {{"ring_drops", 40}}}};
  CHECK(drops_json(r)["at"]["nic_ring"] == 40);
}

TEST_CASE("rows with no data to check say n/a, and why; the host stack is named") {
  json r = results("tcp", 1, 1, 0);
  r["workloads"].push_back({{"name", "flood"},
                            {"kind", "udp"},
                            {"from", "a"},
                            {"to", "b"},
                            {"ops", 3},
                            {"datagrams", {{"offered", 10}, {"delivered", 3}}}});
  r["hosts"][0]["stack"] = "dpdk";
  r["hosts"][1]["stack"] = "dpdk";
  const std::string s = format_run_summary(r, "d");
  CHECK(s.find("quickstart on tcp (DPDK stack), seed 1\n") == 0);
  CHECK(s.find("delivered 3 of 10") != std::string::npos);
  CHECK(s.find("  n/a\n") != std::string::npos);
  CHECK(s.find("  n/a: flood's datagrams are counted, not compared") != std::string::npos);
  CHECK(s.find("NO") == std::string::npos);
}
