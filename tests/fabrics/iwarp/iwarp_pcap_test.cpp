// One iWARP exchange captured as Ethernet + IPv4 + TCP frames and judged by
// tshark (docs/captures.md): MPA request and reply found, every FPDU
// dissected as DDP/RDMAP with the expected opcodes and a good CRC32, TCP
// and IP checksums valid, nothing malformed. Skipped when tshark is missing.
#include <doctest/doctest.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fabrics/ethernet/wire/ethernet.hpp"
#include "fabrics/ip/wire/ipv4.hpp"
#include "fabrics/iwarp/mpa_seal.hpp"
#include "tests/fabrics/iwarp/iwarp_testbed.hpp"
#include "tests/fixtures/tshark.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;
using namespace rdmasim::iwarp_test;

namespace {

// A host whose frames carry real Ethernet and IPv4 headers around its TCP segments.
class EthHost : public Node {
 public:
  EthHost(Simulator& sim, std::string name, uint32_t n)
      : Node(sim, std::move(name)), mac_(MacAddress::local(n)) {
    add_port();
  }
  Ipv4Address ip, peer_ip;
  MacAddress peer_mac;
  std::function<void(Packet, bool)> on_segment;

  void transmit(Packet p, bool ect) {
    Ipv4Header ih;
    ih.ecn = ect ? Ecn::Ect0 : Ecn::NotEct;
    ih.total_length = static_cast<uint16_t>(Ipv4Header::kLen + p.size());
    ih.identification = ip_id_++;
    ih.protocol = kIpProtoTcp;
    ih.src = ip;
    ih.dst = peer_ip;
    ih.emit(*Ipv4View::check(p.push_front(Ipv4Header::kLen)));
    EthernetHeader{peer_mac, mac_, ethertype::kIpv4}.emit(
        *EthernetView::check(p.push_front(EthernetHeader::kLen)));
    if (p.size() < EthernetView::kMinFrameLen) {  // the NIC pads short frames on the wire
      auto pad = p.push_back(EthernetView::kMinFrameLen - p.size());
      std::fill(pad.begin(), pad.end(), std::byte{0});
    }
    port(0).send(std::move(p));
  }
  void receive(Port& in, Packet p) override {
    in.release_ingress(0, p.size());
    p.pull_front(EthernetHeader::kLen);
    auto ip4 = *ConstIpv4View::check(std::as_const(p).bytes());
    const bool ce = ip4.ecn() == Ecn::Ce;
    const size_t hl = ip4.header_len(), total = ip4.total_length();
    p.pull_back(p.size() - total);
    p.pull_front(hl);
    if (on_segment) on_segment(std::move(p), ce);
  }
  const MacAddress& mac() const { return mac_; }

 private:
  MacAddress mac_;
  uint16_t ip_id_ = 1;
};

class Wire : public Node {  // a two-port switch
 public:
  explicit Wire(Simulator& sim) : Node(sim, "sw") {
    add_port();
    add_port();
  }
  void receive(Port& in, Packet p) override {
    in.release_ingress(0, p.size());
    port(1 - in.index()).send(std::move(p));
  }
};

// Seals a frame the first time it is observed, then writes it.
class Capture {
 public:
  Capture(const std::filesystem::path& path, const MpaStreamRegistry& streams) : streams_(streams) {
    dead_ = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
    dumper_ = pcap_dump_open(dead_, path.c_str());
  }
  ~Capture() { close(); }
  void close() {
    if (dumper_) pcap_dump_close(dumper_);
    if (dead_) pcap_close(dead_);
    dumper_ = nullptr;
    dead_ = nullptr;
  }
  void observe(Time t, Packet& p) {
    if (p.meta().crc_pending) {
      auto frame = p.bytes();
      auto ip4 = *ConstIpv4View::check(frame.subspan(EthernetHeader::kLen));
      auto seg =
          frame.subspan(EthernetHeader::kLen + ip4.header_len(), ip4.total_length() - ip4.header_len());
      streams_.seal(seg, TcpPseudoHeader::of(ip4));
      p.meta().crc_pending = false;
    }
    pcap_pkthdr h{};
    h.ts.tv_sec = t.count() / 1'000'000'000'000;
    h.ts.tv_usec =
        (t.count() % 1'000'000'000'000) / 1000;  // nanoseconds: the dumper was opened with nano precision
    h.caplen = h.len = static_cast<uint32_t>(p.size());
    pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, reinterpret_cast<const u_char*>(p.bytes().data()));
    ++frames;
  }
  uint64_t frames = 0;

 private:
  const MpaStreamRegistry& streams_;
  pcap_t* dead_ = nullptr;
  pcap_dumper_t* dumper_ = nullptr;
};

size_t count(const std::string& hay, const std::string& needle) {
  size_t c = 0;
  for (size_t i = hay.find(needle); i != std::string::npos; i = hay.find(needle, i + 1)) ++c;
  return c;
}

size_t lines(const std::string& s) {
  size_t c = 0;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) ++c;
  return c;
}

// tshark as the e2e tests run it, with the MPA heuristic tried first.
std::string tshark(const std::filesystem::path& file, const std::string& args) {
  return test::tshark(file, args, " -o tcp.try_heuristic_first:TRUE");
}

struct Exchange {
  Simulator sim;
  PacketPool pool;
  EthHost ha{sim, "a", 1}, hb{sim, "b", 2};
  Wire sw{sim};
  MpaStreamRegistry streams;
  std::unique_ptr<TcpConnection> ta, tb;
  TestMemory ma, mb;
  Recorder ea, eb;
  std::unique_ptr<IwarpEndpoint> a, b;

  explicit Exchange(bool markers) {
    LinkParams l;
    l.rate = DataRate(10'000'000'000);
    l.delay = 1_us;
    Port::connect(ha.port(0), sw.port(0), l, 1);
    Port::connect(sw.port(1), hb.port(0), l, 1);
    ha.ip = Ipv4Address::from_u32(0x0A000001);
    hb.ip = Ipv4Address::from_u32(0x0A000002);
    ha.peer_ip = hb.ip;
    hb.peer_ip = ha.ip;
    ha.peer_mac = hb.mac();
    hb.peer_mac = ha.mac();
    const TcpFlow fa{TcpPseudoHeader::v4(ha.ip, hb.ip), 49200, 18515};
    ta = std::make_unique<TcpConnection>(sim, pool, TcpEndpointConfig{}, fa, 0x6A3B0000u);
    tb = std::make_unique<TcpConnection>(sim, pool, TcpEndpointConfig{}, fa.reversed(), 0x1C2D0000u);
    ta->set_output([this](Packet p, bool ect) { ha.transmit(std::move(p), ect); });
    tb->set_output([this](Packet p, bool ect) { hb.transmit(std::move(p), ect); });
    ha.on_segment = [this](Packet p, bool ce) { ta->receive(std::move(p), ce); };
    hb.on_segment = [this](Packet p, bool ce) { tb->receive(std::move(p), ce); };
    IwarpConfig c;
    c.crc = true;
    c.markers = markers;
    c.streams = &streams;
    c.private_data = {std::byte{'r'}, std::byte{'d'}, std::byte{'m'}, std::byte{'a'}};
    a = std::make_unique<IwarpEndpoint>(*ta, ma, c, IwarpEndpoint::Role::initiator, &ea);
    b = std::make_unique<IwarpEndpoint>(*tb, mb, c, IwarpEndpoint::Role::responder, &eb);
  }
};

// Runs the exchange, writes the capture taken at host a, and checks it with tshark.
void capture_and_check(bool markers) {
  if (!test::have_tshark()) {
    MESSAGE("tshark not found: capture check skipped");
    return;
  }
  const auto path = std::filesystem::temp_directory_path() /
                    ("rdmasim_iwarp_" + std::to_string(getpid()) + (markers ? "_m" : "") + ".pcap");
  struct Cleanup {
    std::filesystem::path p;
    ~Cleanup() { std::filesystem::remove(p); }
  } cleanup{path};
  Exchange x(markers);
  Capture cap(path, x.streams);
  x.ha.port(0).on_tx([&](Time t, Packet& p) { cap.observe(t, p); });
  x.ha.port(0).on_rx([&](Time t, Packet& p) { cap.observe(t, p); });

  x.mb.add(0x200, 0x10000, 8192, true, true);
  x.mb.regions[0x200].bytes = pattern_bytes(8192, 4);
  x.ma.add(0x100, 0x0, 8192, false, false);
  std::vector<std::byte> r1(4096), r2(4096);
  x.b->post_recv(1, r1);
  x.b->post_recv(2, r2);
  const auto s1 = pattern_bytes(2000, 1), w = pattern_bytes(4000, 2), s2 = pattern_bytes(64, 3);
  x.tb->listen();
  x.ta->connect();
  x.a->post_send(10, s1);                                       // 2 FPDUs: Send
  x.a->post_write(11, w, 0x200, 0x10000);                       // 3 FPDUs: Write
  x.a->post_read(12, 0x100, 0x0, 3000, 0x200, 0x10000 + 4096);  // Read Request; 3 Read Responses
  x.a->post_send(13, s2, true);                                 // Send with Solicited Event
  x.sim.run(2_ms);
  REQUIRE(x.ea.reads_done.size() == 1);
  REQUIRE(x.eb.recvs.size() == 2);
  x.a->post_write(14, s2, 0xBAD, 0);  // an invalid STag: b answers with a Terminate
  x.sim.run(50_ms);
  REQUIRE(x.eb.terms.size() == 1);
  CHECK(x.eb.terms[0].error == term::kDdpTaggedInvalidStag);
  CHECK(x.ta->state() == TcpState::closed);
  CHECK(x.tb->state() == TcpState::closed);
  cap.close();
  const uint64_t fpdus = x.a->stats().fpdus_sent + x.b->stats().fpdus_sent;
  CHECK(fpdus == 2 + 3 + 1 + 3 + 1 + 1 + 1);

  // Nothing malformed, no error-level expert info (bad checksums are errors).
  CHECK(tshark(path, "-Y '_ws.malformed || _ws.short || _ws.expert.severity >= 8388608'") == "");
  CHECK(tshark(path, "-Y 'tcp.checksum.status != 1 || ip.checksum.status != 1'") == "");
  // The MPA request and reply, once each.
  CHECK(lines(tshark(path, "-Y iwarp_mpa.req")) == 1);
  CHECK(lines(tshark(path, "-Y iwarp_mpa.rep")) == 1);
  // Every other segment with payload is DDP/RDMAP.
  CHECK(tshark(path, "-Y 'tcp.len > 0 && !iwarp_mpa.req && !iwarp_mpa.rep && !iwarp_rdma'") == "");
  // The opcodes, one per FPDU.
  const std::string ops =
      tshark(path, "-Y iwarp_rdma -T fields -E occurrence=a -E aggregator=, -e iwarp_rdma.opcode");
  std::map<std::string, int> seen;
  {
    std::string tok;
    for (char ch : ops) {
      if (ch == ',' || ch == '\n') {
        if (!tok.empty()) ++seen[tok];
        tok.clear();
      } else {
        tok += ch;
      }
    }
  }
  CHECK(seen["0x00"] == 4);  // Write: 3 + the one to the bad STag
  CHECK(seen["0x01"] == 1);  // Read Request
  CHECK(seen["0x02"] == 3);  // Read Response
  CHECK(seen["0x03"] == 2);  // Send
  CHECK(seen["0x05"] == 1);  // Send with Solicited Event
  CHECK(seen["0x07"] == 1);  // Terminate
  // DDP fields tell the same story. Without markers the Read Request and the
  // Send with SE share a segment; tshark lists both PDUs' fields.
  {
    const std::string f = tshark(path,
                                 " -Y 'iwarp_rdma.opcode == 0x05' -T fields -E occurrence=a -E aggregator=, "
                                 "-e iwarp_ddp.qn -e iwarp_ddp.msn");
    const auto tab = f.find('\t');
    REQUIRE(tab != std::string::npos);
    auto split = [](const std::string& s) {
      std::vector<std::string> v;
      std::string tok;
      for (char ch : s + ",") {
        if (ch == ',' || ch == '\n') {
          if (!tok.empty()) v.push_back(tok);
          tok.clear();
        } else {
          tok += ch;
        }
      }
      return v;
    };
    const auto qn = split(f.substr(0, tab)), msn = split(f.substr(tab + 1));
    REQUIRE(qn.size() == msn.size());
    bool found = false;
    for (size_t i = 0; i < qn.size(); ++i)
      found |= qn[i] == "0" && msn[i] == "2";  // the second Send on queue 0
    CHECK(found);
  }
  CHECK(tshark(path,
               "-Y 'iwarp_rdma.opcode == 0x01' -T fields -e iwarp_rdma.rdmardsz -e iwarp_rdma.srcstag "
               "-e iwarp_rdma.sinkstag") == "3000\t0x00000200\t0x00000100\n");
  CHECK(tshark(path,
               "-Y 'iwarp_rdma.opcode == 0x07' -T fields -e iwarp_rdma.term_layer "
               "-e iwarp_rdma.term_errcode_ddp_tagged") == "0x01\t0x00\n");
  // Every FPDU's CRC32c checks out.
  const std::string verbose = tshark(path, "-V");
  CHECK(count(verbose, "Good CRC32") == fpdus);
  CHECK(count(verbose, "Bad CRC32") == 0);
  if (markers) CHECK(count(verbose, "FPDU back pointer") > 0);
}

}  // namespace

TEST_CASE("iwarp pcap: tshark dissects MPA, DDP and RDMAP with good CRCs and checksums") {
  capture_and_check(false);
}

TEST_CASE("iwarp pcap: the same with MPA markers") { capture_and_check(true); }
