// Native IB frames with and without a GRH, written as a capture (ERF and
// linktype 247) and, when tshark is installed, dissected by it: the e2e
// tests cannot make GRH frames from YAML (the workloads' address handles are
// local), so the GRH's dissection is checked here.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "fabrics/ib/ib_fabric.hpp"
#include "fabrics/ib/subnet_manager.hpp"
#include "nodes/host/host.hpp"
#include "pcap/pcap_writer.hpp"
#include "tests/fabrics/ib/ib_test_util.hpp"

using namespace rdmasim;

namespace {

std::string run(const std::string& cmd) {
  std::string out;
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  pclose(f);
  return out;
}

bool have_tshark() { return run("command -v tshark").find("tshark") != std::string::npos; }

// Frames a host with LID 2 sends to LID 1: UD SEND with a GRH, RC WRITE
// ONLY and an atomic, both local, all sealed.
std::vector<std::vector<std::byte>> frames() {
  Simulator sim;
  PacketPool pool;
  Host host(sim, pool, "h", NicConfig{}, HostConfig{});
  auto f = std::make_unique<IbFabric>(host.nic(), SlToVl::modulo(2));
  IbFabric& fab = *f;
  host.nic().set_fabric(std::move(f));
  host.nic().set_lid(2);
  host.nic().set_gid(ib_gid(ib_port_guid(1)));
  std::vector<std::vector<std::byte>> out;
  for (uint8_t op : {UD_SEND_ONLY, RC_RDMA_WRITE_ONLY, RC_FETCH_ADD}) {
    Packet p = pool.make(fab.headroom() + 64);
    const size_t len = op == RC_FETCH_ADD ? 0 : 333;
    std::memset(p.push_back(len).data(), 0x5A, len);
    IbaHeaders h;
    h.opcode = op;
    h.dest_qp = 0x99;
    h.psn = 42;
    h.qkey = 0x11111111;
    h.src_qp = 0x55;
    h.va = 0x7f0000001000;
    h.rkey = 0x1234;
    h.dma_len = static_cast<uint32_t>(len ? len : 8);
    h.swap_add = 1;
    REQUIRE(iba_emit(p, h));
    ibv_ah_attr ah{};
    ah.dlid = 1;
    ah.sl = 1;
    ah.is_global = op == UD_SEND_ONLY;
    ah.grh.dgid = ib_gid(ib_port_guid(0));
    ah.grh.hop_limit = 1;
    fab.encap(p, ah, 0x55, 0x99);
    seal_ib(p);
    REQUIRE(test::ib_crcs_ok(p.bytes()));
    out.emplace_back(p.bytes().begin(), p.bytes().end());
  }
  return out;
}

}  // namespace

TEST_CASE("ib capture: tshark shows LRH, GRH where present, BTH and extension headers") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("rdmasim-ib-capture-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto erf = dir / "grh.pcap";
  const auto raw = dir / "grh247.pcap";
  const auto fs = frames();
  {
    PcapWriter w(erf, Linktype::Erf);
    PcapWriter r(raw, Linktype::Infiniband);
    for (size_t i = 0; i < fs.size(); ++i) {
      w.write(Time::us(static_cast<int64_t>(i + 1)), fs[i]);
      r.write(Time::us(static_cast<int64_t>(i + 1)), fs[i]);
    }
    w.close();
    r.close();
  }
  CHECK(std::filesystem::file_size(raw) == 24 + 3 * 16 + fs[0].size() + fs[1].size() + fs[2].size());
  if (!have_tshark()) {
    MESSAGE("tshark is not installed: dissection not checked");
    std::filesystem::remove_all(dir);
    return;
  }
  const std::string fields =
      run("tshark -n -r " + erf.string() +
          " -T fields -E separator=, -e infiniband.lrh.lnh -e infiniband.lrh.vl -e infiniband.lrh.sl"
          " -e infiniband.grh.paylen -e infiniband.grh.nxthdr -e infiniband.grh.sgid -e infiniband.grh.dgid"
          " -e infiniband.bth.opcode -e infiniband.deth.srcqp -e infiniband.reth.dmalen -e "
          "infiniband.atomiceth.swapdt"
          " -e _ws.malformed -e _ws.expert.severity 2>/dev/null");
  const std::string want =
      // LNH 3 (global), VL 1, SL 1, PayLen = BTH..ICRC, NxtHdr 27, SGID, DGID, UD SEND ONLY, SrcQP
      "0x03,0x01,1," + std::to_string(fs[0].size() - 8 - 40 - 2) +
      ",27,fe80::200:0:0:2,fe80::200:0:0:1,100,0x00000055,,,,\n"
      // LNH 2 (local), RC RDMA WRITE ONLY with its RETH's DMA length
      "0x02,0x01,1,,,,,10,,333,,,\n"
      // RC FETCH_ADD with its AtomicETH; nothing malformed, no expert info
      "0x02,0x01,1,,,,,20,,,1,,\n";
  CHECK(fields == want);
  std::filesystem::remove_all(dir);
}
