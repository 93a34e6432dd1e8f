// Frames built with the wire views, written to pcap with libpcap and
// dissected by tshark (docs/captures.md): every frame must dissect as the
// expected protocol with no malformed frame and no error-level expert info
// (IP and UDP checksums are checked), and the fields must read back as
// emitted. Skips when tshark is not installed.
#include <doctest/doctest.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fabrics/ethernet/wire/arp.hpp"
#include "fabrics/ethernet/wire/ethernet.hpp"
#include "fabrics/ethernet/wire/pfc.hpp"
#include "fabrics/ethernet/wire/vlan.hpp"
#include "fabrics/ib/wire/lrh.hpp"
#include "fabrics/iba/icrc.hpp"
#include "fabrics/iba/opcodes.hpp"
#include "fabrics/iba/wire/aeth.hpp"
#include "fabrics/iba/wire/atomic_ack_eth.hpp"
#include "fabrics/iba/wire/atomic_eth.hpp"
#include "fabrics/iba/wire/bth.hpp"
#include "fabrics/iba/wire/deth.hpp"
#include "fabrics/iba/wire/grh.hpp"
#include "fabrics/iba/wire/ieth.hpp"
#include "fabrics/iba/wire/immdt.hpp"
#include "fabrics/iba/wire/reth.hpp"
#include "fabrics/ip/wire/ipv4.hpp"
#include "fabrics/ip/wire/ipv6.hpp"
#include "fabrics/ip/wire/udp.hpp"
#include "pcap/erf.hpp"
#include "tests/fixtures/tshark.hpp"

using namespace rdmasim;

namespace {

const MacAddress kMacA = MacAddress::local(1), kMacB = MacAddress::local(2);
const Ipv4Address kIpA{{10, 0, 0, 1}}, kIpB{{10, 0, 0, 2}};
const Ipv6Address kIp6A = *Ipv6Address::parse("fd00::1"), kIp6B = *Ipv6Address::parse("fd00::2");

using Frame = std::vector<std::byte>;

// BTH, extension headers as emitted by `ext`, payload, pad: the IBA part
// without ICRC. The extension headers go at the offsets the opcode table gives.
template <class ExtFn>
Frame transport(const Bth& bth_in, size_t payload_len, ExtFn ext, bool zero_payload = false) {
  const IbaOpInfo& info = kIbaOps[bth_in.opcode];
  Bth bth = bth_in;
  bth.pad_count = iba_pad_count(payload_len);
  Frame b(info.header_len + payload_len + bth.pad_count);
  bth.emit(*BthView::check(b));
  ext(info, std::span<std::byte>(b));
  if (!zero_payload)
    for (size_t i = 0; i < payload_len; ++i) b[info.header_len + i] = std::byte(0xA0 + i);
  return b;
}
std::span<std::byte> at(const IbaOpInfo& info, std::span<std::byte> b, IbaHeader h) {
  return b.subspan(info.offset_of(h));
}

Frame roce_v2_ipv4(const Frame& iba, Ecn ecn = Ecn::Ect0, std::optional<VlanTag> vlan = {}) {
  const size_t l2 = EthernetHeader::kLen + (vlan ? VlanTag::kLen : 0);
  Frame f(l2 + Ipv4Header::kLen + UdpHeader::kLen + iba.size() + kIcrcLen);
  EthernetHeader{kMacB, kMacA, vlan ? ethertype::kVlan : ethertype::kIpv4}.emit(*EthernetView::check(f));
  if (vlan) vlan->emit(*VlanView::check(std::span<std::byte>(f).subspan(EthernetHeader::kLen)));
  auto ip_bytes = std::span<std::byte>(f).subspan(l2);
  Ipv4Header ip;
  ip.dscp = 26;
  ip.ecn = ecn;
  ip.total_length = static_cast<uint16_t>(ip_bytes.size());
  ip.identification = 0x1234;
  ip.protocol = kIpProtoUdp;
  ip.src = kIpA;
  ip.dst = kIpB;
  ip.emit(*Ipv4View::check(ip_bytes));
  auto udp_bytes = ip_bytes.subspan(Ipv4Header::kLen);
  UdpHeader{49152, kUdpPortRoceV2, static_cast<uint16_t>(udp_bytes.size()), 0}.emit(
      *UdpView::check(udp_bytes));
  std::copy(iba.begin(), iba.end(), udp_bytes.begin() + UdpHeader::kLen);
  fill_icrc_roce_v2_ipv4(ip_bytes);
  UdpView::check(udp_bytes)->fill_checksum(kIpA, kIpB);  // covers the ICRC: last
  return f;
}

Frame roce_v2_ipv6(const Frame& iba) {
  Frame f(EthernetHeader::kLen + Ipv6Header::kLen + UdpHeader::kLen + iba.size() + kIcrcLen);
  EthernetHeader{kMacB, kMacA, ethertype::kIpv6}.emit(*EthernetView::check(f));
  auto ip_bytes = std::span<std::byte>(f).subspan(EthernetHeader::kLen);
  Ipv6Header ip;
  ip.ecn = Ecn::Ect0;
  ip.flow_label = 0xBEEF;
  ip.payload_length = static_cast<uint16_t>(ip_bytes.size() - Ipv6Header::kLen);
  ip.next_header = kIpProtoUdp;
  ip.src = kIp6A;
  ip.dst = kIp6B;
  ip.emit(*Ipv6View::check(ip_bytes));
  auto udp_bytes = ip_bytes.subspan(Ipv6Header::kLen);
  UdpHeader{49153, kUdpPortRoceV2, ip.payload_length, 0}.emit(*UdpView::check(udp_bytes));
  std::copy(iba.begin(), iba.end(), udp_bytes.begin() + UdpHeader::kLen);
  fill_icrc_roce_v2_ipv6(ip_bytes);
  UdpView::check(udp_bytes)->fill_checksum(kIp6A, kIp6B);
  return f;
}

Frame roce_v1(const Frame& iba) {
  Frame f(EthernetHeader::kLen + Grh::kLen + iba.size() + kIcrcLen);
  EthernetHeader{kMacB, kMacA, ethertype::kRoce}.emit(*EthernetView::check(f));
  auto grh_bytes = std::span<std::byte>(f).subspan(EthernetHeader::kLen);
  Grh g;
  g.tclass = 3;
  g.pay_len = static_cast<uint16_t>(iba.size() + kIcrcLen);
  g.sgid = make_gid(kDefaultGidPrefix, 0x0200000000000001);
  g.dgid = make_gid(kDefaultGidPrefix, 0x0200000000000002);
  g.emit(*GrhView::check(grh_bytes));
  std::copy(iba.begin(), iba.end(), grh_bytes.begin() + Grh::kLen);
  fill_icrc_roce_v1(grh_bytes);
  return f;
}

// Native IB: LRH [GRH] transport ICRC VCRC.
Frame ib_frame(const Frame& iba, bool global) {
  const size_t l3 = global ? Grh::kLen : 0;
  Frame f(Lrh::kLen + l3 + iba.size() + kIcrcLen + kVcrcLen);
  Lrh l;
  l.vl = 0;
  l.sl = 2;
  l.lnh = global ? Lnh::IbaGlobal : Lnh::IbaLocal;
  l.dlid = 0x0002;
  l.slid = 0x0001;
  l.pkt_len = lrh_pkt_len(f.size() - kVcrcLen);
  l.emit(*LrhView::check(f));
  if (global) {
    Grh g;
    g.pay_len = static_cast<uint16_t>(iba.size() + kIcrcLen);
    g.sgid = make_gid(kDefaultGidPrefix, 1);
    g.dgid = make_gid(kDefaultGidPrefix, 2);
    g.emit(*GrhView::check(std::span<std::byte>(f).subspan(Lrh::kLen)));
  }
  std::copy(iba.begin(), iba.end(), f.begin() + Lrh::kLen + l3);
  fill_ib_crcs(f);
  return f;
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() / ("rdmasim-wire-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    if (!std::getenv("RDMASIM_KEEP_TEST_FILES")) std::filesystem::remove_all(path);
  }
};

void write_pcap(const std::filesystem::path& path, int linktype, const std::vector<Frame>& frames) {
  pcap_t* p = pcap_open_dead_with_tstamp_precision(linktype, 65535, PCAP_TSTAMP_PRECISION_NANO);
  REQUIRE(p);
  pcap_dumper_t* d = pcap_dump_open(p, path.c_str());
  REQUIRE(d);
  long ns = 0;
  for (const Frame& f : frames) {
    pcap_pkthdr h{};
    h.ts.tv_sec = 1;
    h.ts.tv_usec = ns += 1000;  // nanoseconds with PCAP_TSTAMP_PRECISION_NANO
    h.caplen = h.len = static_cast<bpf_u_int32>(f.size());
    pcap_dump(reinterpret_cast<u_char*>(d), &h, reinterpret_cast<const u_char*>(f.data()));
  }
  pcap_dump_close(d);
  pcap_close(p);
}

// ERF records of type INFINIBAND around each frame (linktype 197).
Frame erf_record(const Frame& frame, uint64_t ns) {
  Frame r(ErfHeader::kLen + frame.size());
  ErfHeader::infiniband(ns, static_cast<uint16_t>(frame.size())).emit(*ErfView::check(r));
  std::copy(frame.begin(), frame.end(), r.begin() + ErfHeader::kLen);
  return r;
}

using test::tshark;

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find('\n', start);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Bytes as tshark prints an FT_BYTES field: hex digits, no separators.
std::string plain_hex(std::span<const std::byte> b) {
  std::string s;
  char buf[3];
  for (std::byte x : b) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(x));
    s += buf;
  }
  return s;
}

// The fields of every frame from one tshark run: get(frame, field) is the
// field's first occurrence in that frame (1-based frame numbers).
class Fields {
  std::vector<std::string> names_;
  std::vector<std::vector<std::string>> rows_;

 public:
  Fields(const std::filesystem::path& file, std::vector<std::string> names) : names_(std::move(names)) {
    std::string args = "-T fields -E separator='|' -E occurrence=f";
    for (const auto& n : names_) args += " -e " + n;
    for (const std::string& line : lines(tshark(file, args))) {
      std::vector<std::string> row;
      size_t start = 0;
      for (;;) {
        const size_t bar = line.find('|', start);
        row.push_back(line.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
        if (bar == std::string::npos) break;
        start = bar + 1;
      }
      rows_.push_back(std::move(row));
    }
  }
  size_t frames() const { return rows_.size(); }
  std::string get(size_t frame, const std::string& name) const {
    for (size_t i = 0; i < names_.size(); ++i)
      if (names_[i] == name)
        return frame - 1 < rows_.size() && i < rows_[frame - 1].size() ? rows_[frame - 1][i] : "?";
    return "no such field requested: " + name;
  }
  std::string join(size_t frame, std::initializer_list<std::string> names) const {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : " ") + get(frame, n);
    return s;
  }
};

}  // namespace

TEST_CASE("wire: tshark dissects RoCE v2, RoCE v1, PFC and ARP frames as emitted") {
  if (!test::have_tshark()) {
    MESSAGE("tshark not installed: skipped");
    return;
  }
  std::vector<Frame> frames;
  // 1: RoCE v2 IPv4 RDMA WRITE ONLY, 13 bytes (pad 3).
  frames.push_back(roce_v2_ipv4(
      transport({RC_RDMA_WRITE_ONLY, false, false, 0, 0, 0xFFFF, false, false, 0x10a, true, 0xa788bc}, 13,
                [](const IbaOpInfo& i, std::span<std::byte> b) {
                  Reth{0x7f0012345000, 0x47b3, 13}.emit(*RethView::check(at(i, b, IbaHeader::RETH)));
                })));
  // 2: RoCE v2 IPv4 ACK, NAK remote access error, MSN 7.
  frames.push_back(roce_v2_ipv4(
      transport({RC_ACKNOWLEDGE, false, false, 0, 0, 0xFFFF, false, false, 0x11, false, 0xa788bc}, 0,
                [](const IbaOpInfo& i, std::span<std::byte> b) {
                  Aeth::nak(7, NakCode::RemoteAccessError).emit(*AethView::check(at(i, b, IbaHeader::AETH)));
                })));
  // 3: RoCE v2 IPv6 SEND ONLY with immediate, solicited, 64 bytes.
  frames.push_back(
      roce_v2_ipv6(transport({RC_SEND_ONLY_IMM, true, false, 0, 0, 0xFFFF, false, false, 0x22, true, 5}, 64,
                             [](const IbaOpInfo& i, std::span<std::byte> b) {
                               ImmDt{0xdeadbeef}.emit(*ImmDtView::check(at(i, b, IbaHeader::ImmDt)));
                             })));
  // 4: RoCE v2 UD SEND ONLY with DETH.
  frames.push_back(
      roce_v2_ipv4(transport({UD_SEND_ONLY, false, false, 0, 0, 0xFFFF, false, false, 0x33, false, 9}, 32,
                             [](const IbaOpInfo& i, std::span<std::byte> b) {
                               Deth{0x11111111, 0x44}.emit(*DethView::check(at(i, b, IbaHeader::DETH)));
                             })));
  // 5: RoCE v2 FETCH ADD and 6: its ATOMIC ACKNOWLEDGE.
  frames.push_back(roce_v2_ipv4(transport(
      {RC_FETCH_ADD, false, false, 0, 0, 0xFFFF, false, false, 0x10a, true, 10}, 0,
      [](const IbaOpInfo& i, std::span<std::byte> b) {
        AtomicEth{0x7f0000001000, 0x99, 5, 0}.emit(*AtomicEthView::check(at(i, b, IbaHeader::AtomicETH)));
      })));
  frames.push_back(roce_v2_ipv4(
      transport({RC_ATOMIC_ACKNOWLEDGE, false, false, 0, 0, 0xFFFF, false, false, 0x11, false, 10}, 0,
                [](const IbaOpInfo& i, std::span<std::byte> b) {
                  Aeth::ack(8).emit(*AethView::check(at(i, b, IbaHeader::AETH)));
                  AtomicAckEth{41}.emit(*AtomicAckEthView::check(at(i, b, IbaHeader::AtomicAckETH)));
                })));
  // 7: CNP (BECN, 16 reserved bytes), ECN CE on the IP header.
  frames.push_back(roce_v2_ipv4(transport(
                                    {CNP, false, false, 0, 0, 0xFFFF, false, true, 0x10a, false, 0},
                                    kCnpReservedLen, [](const IbaOpInfo&, std::span<std::byte>) {}, true),
                                Ecn::Ce));
  // 8: VLAN-tagged RoCE v2 READ REQUEST, PCP 3, VID 100.
  frames.push_back(roce_v2_ipv4(
      transport({RC_RDMA_READ_REQUEST, false, false, 0, 0, 0xFFFF, false, false, 0x10a, true, 11}, 0,
                [](const IbaOpInfo& i, std::span<std::byte> b) {
                  Reth{0x1000, 0x55, 4096}.emit(*RethView::check(at(i, b, IbaHeader::RETH)));
                }),
      Ecn::Ect0, VlanTag{3, false, 100, ethertype::kIpv4}));
  // 9: RoCE v1 SEND LAST with invalidate.
  frames.push_back(
      roce_v1(transport({RC_SEND_LAST_INV, false, false, 0, 0, 0xFFFF, false, false, 0x10a, true, 12}, 7,
                        [](const IbaOpInfo& i, std::span<std::byte> b) {
                          Ieth{0xabcd}.emit(*IethView::check(at(i, b, IbaHeader::IETH)));
                        })));
  // 10: PFC pausing class 3.
  Frame pfc(kPfcFrameLen);
  PfcFrame{1 << 3, {0, 0, 0, 0xffff, 0, 0, 0, 0}}.emit_frame(pfc, kMacA);
  frames.push_back(pfc);
  // 11: ARP request, padded to 60 bytes.
  Frame arp(60);
  EthernetHeader{MacAddress::broadcast(), kMacA, ethertype::kArp}.emit(*EthernetView::check(arp));
  ArpPacket{ArpOperation::Request, kMacA, kIpA, {}, kIpB}.emit(
      *ArpView::check(std::span<std::byte>(arp).subspan(14)));
  frames.push_back(arp);

  TempDir dir;
  const auto file = dir.path / "eth.pcap";
  write_pcap(file, DLT_EN10MB, frames);

  // Nothing malformed, no error-level expert info (bad IP/UDP checksums would be).
  CHECK(tshark(file, "-Y '_ws.malformed || _ws.short || _ws.expert.severity >= 8388608'") == "");
  // Every RoCE frame has a BTH and an ICRC field, and no unknown opcode, but
  // the CNP: tshark 4.0 does not know opcode 0x81 and shows the 16 reserved
  // bytes and the ICRC as "Unknown/Vendor Specific Data".
  CHECK(tshark(file,
               "-Y '(udp.dstport == 4791 || eth.type == 0x8915) && !(infiniband.bth && "
               "infiniband.invariant.crc && !infiniband.vendor)' -T fields -e frame.number") == "7\n");
  CHECK(tshark(file,
               "-Y 'infiniband.bth.opcode == 129' -T fields -E separator=, -E occurrence=l "
               "-e frame.number -e infiniband.vendor") ==
        "7,00000000000000000000000000000000" + plain_hex(std::span(frames[6]).last(4)) + "\n");

  // One dissection, the fields of every frame: field(frame, name).
  const Fields fld(file, {"frame.protocols",
                          "infiniband.bth.opcode",
                          "infiniband.bth.se",
                          "infiniband.bth.padcnt",
                          "infiniband.bth.destqp",
                          "infiniband.bth.a",
                          "infiniband.bth.psn",
                          "infiniband.bth.p_key",
                          "infiniband.reth.va",
                          "infiniband.reth.r_key",
                          "infiniband.reth.dmalen",
                          "infiniband.aeth.syndrome",
                          "infiniband.aeth.msn",
                          "infiniband.immdt",
                          "infiniband.deth.q_key",
                          "infiniband.deth.srcqp",
                          "infiniband.ieth",
                          "infiniband.atomiceth.swapdt",
                          "infiniband.atomiceth.cmpdt",
                          "infiniband.atomicacketh.origremdt",
                          "infiniband.invariant.crc",
                          "data.len",
                          "ip.dsfield.ecn",
                          "ip.checksum.status",
                          "udp.checksum.status",
                          "vlan.priority",
                          "vlan.id",
                          "ipv6.flow",
                          "ipv6.src",
                          "infiniband.grh.tclass",
                          "infiniband.grh.paylen",
                          "infiniband.grh.nxthdr",
                          "infiniband.grh.sgid",
                          "macc.opcode",
                          "macc.cbfc.enbv",
                          "macc.cbfc.pause_time.c3",
                          "arp.opcode",
                          "arp.src.proto_ipv4",
                          "arp.dst.proto_ipv4"});
  REQUIRE(fld.frames() == frames.size());
  // BTH of frames 1..9: opcode (decimal), SE, PadCnt, DestQP, A, PSN, P_Key.
  const char* const bth[9] = {
      "10 0 3 0x00010a 1 10979516 65535", "17 0 0 0x000011 0 10979516 65535", "5 1 0 0x000022 1 5 65535",
      "100 0 0 0x000033 0 9 65535",       "20 0 0 0x00010a 1 10 65535",       "18 0 0 0x000011 0 10 65535",
      "129 0 0 0x00010a 0 0 65535",       "12 0 0 0x00010a 1 11 65535",       "22 0 1 0x00010a 1 12 65535"};
  for (int i = 0; i < 9; ++i) {
    CAPTURE(i + 1);
    CHECK(fld.join(i + 1, {"infiniband.bth.opcode", "infiniband.bth.se", "infiniband.bth.padcnt",
                           "infiniband.bth.destqp", "infiniband.bth.a", "infiniband.bth.psn",
                           "infiniband.bth.p_key"}) == bth[i]);
  }
  CHECK(fld.join(1, {"infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen"}) ==
        "0x00007f0012345000 0x000047b3 13");
  CHECK(fld.join(8, {"infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen"}) ==
        "0x0000000000001000 0x00000055 4096");
  CHECK(fld.join(2, {"infiniband.aeth.syndrome", "infiniband.aeth.msn"}) == "98 7");  // NAK remote access
  CHECK(fld.join(6, {"infiniband.aeth.syndrome", "infiniband.aeth.msn"}) == "31 8");  // ACK, credits invalid
  CHECK(fld.get(3, "infiniband.immdt") == "deadbeef");
  CHECK(fld.join(4, {"infiniband.deth.q_key", "infiniband.deth.srcqp"}) == "0x0000000011111111 0x00000044");
  CHECK(fld.get(9, "infiniband.ieth") == "0000abcd");
  // The AtomicETH's VA and R_Key are shown with the RETH's field names.
  CHECK(fld.join(5, {"infiniband.reth.va", "infiniband.reth.r_key", "infiniband.atomiceth.swapdt",
                     "infiniband.atomiceth.cmpdt"}) == "0x00007f0000001000 0x00000099 5 0");
  CHECK(fld.get(6, "infiniband.atomicacketh.origremdt") == "41");
  CHECK(fld.get(1, "data.len") == "16");  // payload + pad (docs/captures.md)
  // The ICRC as tshark displays it: the four wire bytes read big-endian.
  CHECK(fld.get(1, "infiniband.invariant.crc") == "0x" + plain_hex(std::span(frames[0]).last(4)));
  for (int i = 1; i <= 8; ++i) {
    CAPTURE(i);
    if (i == 3) continue;  // IPv6
    // Checksums verified and good (status 1) on every IPv4 header and UDP datagram.
    CHECK(fld.join(i, {"ip.checksum.status", "udp.checksum.status"}) == "1 1");
    CHECK(fld.get(i, "ip.dsfield.ecn") == (i == 7 ? "3" : "2"));
  }
  CHECK(fld.join(3, {"ipv6.flow", "ipv6.src", "udp.checksum.status"}) == "0x00beef fd00::1 1");
  CHECK(fld.join(8, {"vlan.priority", "vlan.id"}) == "3 100");
  CHECK(fld.join(9, {"infiniband.grh.tclass", "infiniband.grh.paylen", "infiniband.grh.nxthdr",
                     "infiniband.grh.sgid"}) == "3 28 27 fe80::200:0:0:1");
  CHECK(fld.join(10, {"macc.opcode", "macc.cbfc.enbv", "macc.cbfc.pause_time.c3"}) == "0x0101 0x0008 65535");
  CHECK(fld.join(11, {"arp.opcode", "arp.src.proto_ipv4", "arp.dst.proto_ipv4"}) == "1 10.0.0.1 10.0.0.2");
  CHECK(fld.get(1, "frame.protocols") == "eth:ethertype:ip:udp:infiniband:data");
  CHECK(fld.get(9, "frame.protocols") == "eth:ethertype:infiniband:data");
}

TEST_CASE("wire: tshark dissects native IB frames in ERF records") {
  if (!test::have_tshark()) {
    MESSAGE("tshark not installed: skipped");
    return;
  }
  const Frame write =
      transport({RC_RDMA_WRITE_ONLY, false, false, 0, 0, 0xFFFF, false, false, 0x10a, true, 77}, 13,
                [](const IbaOpInfo& i, std::span<std::byte> b) {
                  Reth{0x2000, 0x47b3, 13}.emit(*RethView::check(at(i, b, IbaHeader::RETH)));
                });
  const Frame local = ib_frame(write, false);
  const Frame global = ib_frame(write, true);
  TempDir dir;
  const auto file = dir.path / "ib.pcap";
  write_pcap(file, DLT_ERF, {erf_record(local, 1'000'001'000), erf_record(global, 1'000'002'000)});

  CHECK(tshark(file, "-Y '_ws.malformed || _ws.short || _ws.expert.severity >= 8388608'") == "");
  CHECK(tshark(file,
               "-Y '!(infiniband.bth && infiniband.invariant.crc && infiniband.variant.crc && "
               "!infiniband.vendor)' "
               "-T fields -e frame.number") == "");
  CHECK(tshark(
            file,
            "-T fields -E separator=, -e infiniband.lrh.vl -e infiniband.lrh.sl -e infiniband.lrh.lnh "
            "-e infiniband.lrh.dlid -e infiniband.lrh.pktlen -e infiniband.lrh.slid -e infiniband.bth.opcode "
            "-e infiniband.bth.psn -e infiniband.reth.dmalen") ==
        "0x00,2,0x02,2," + std::to_string((local.size() - 2) / 4) +
            ",1,10,77,13\n"
            "0x00,2,0x03,2," +
            std::to_string((global.size() - 2) / 4) + ",1,10,77,13\n");
}
