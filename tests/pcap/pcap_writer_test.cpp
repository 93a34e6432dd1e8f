#include "pcap/pcap_writer.hpp"

#include <doctest/doctest.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "core/bytes.hpp"
#include "pcap/erf.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

// A scratch directory removed at the end of a test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("rdmasim-pcap-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

std::vector<std::byte> bytes_of(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int x : v) out.push_back(std::byte(x));
  return out;
}

std::vector<std::byte> file_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) out[i] = std::byte(raw[i]);
  return out;
}

struct Record {
  int64_t sec, nsec;
  uint32_t len;
  std::vector<std::byte> data;
};

struct ReadBack {
  int linktype = -1;
  int snaplen = -1;
  int precision = -1;
  std::vector<Record> records;
};

ReadBack read_back(const std::filesystem::path& p) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* h = pcap_open_offline_with_tstamp_precision(p.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  REQUIRE_MESSAGE(h != nullptr, err);
  ReadBack r;
  r.linktype = pcap_datalink(h);
  r.snaplen = pcap_snapshot(h);
  r.precision = pcap_get_tstamp_precision(h);
  pcap_pkthdr* hdr;
  const u_char* data;
  while (pcap_next_ex(h, &hdr, &data) == 1) {
    Record rec{hdr->ts.tv_sec, hdr->ts.tv_usec, hdr->len, {}};
    for (uint32_t i = 0; i < hdr->caplen; ++i) rec.data.push_back(std::byte(data[i]));
    r.records.push_back(std::move(rec));
  }
  pcap_close(h);
  return r;
}

// A native IB local packet (IBA 7.7, 9.2): LRH, BTH of an RC SEND ONLY, 16
// bytes of payload, ICRC and VCRC. The CRC values are arbitrary: tshark only
// displays them.
std::vector<std::byte> ib_send_only(uint16_t dlid, uint32_t dest_qp, uint32_t psn) {
  std::vector<std::byte> f(8 + 12 + 16 + 4 + 2);
  std::span<std::byte> b(f);
  store_u8(b.subspan(0), 0x00);                     // VL 0, LVer 0
  store_u8(b.subspan(1), 0x02);                     // SL 0, LNH 2: IBA local, BTH follows
  store_be16(b.subspan(2), dlid);                   // DLID
  store_be16(b.subspan(4), (8 + 12 + 16 + 4) / 4);  // PktLen in 4-byte words, LRH to ICRC
  store_be16(b.subspan(6), 0x0001);                 // SLID
  store_u8(b.subspan(8), 0x04);                     // opcode: RC SEND ONLY
  store_u8(b.subspan(9), 0x00);                     // SE 0, M 0, PadCnt 0, TVer 0
  store_be16(b.subspan(10), 0xffff);                // P_Key
  store_u8(b.subspan(12), 0x00);                    // reserved
  store_be24(b.subspan(13), dest_qp);               // DestQP
  store_u8(b.subspan(16), 0x80);                    // AckReq
  store_be24(b.subspan(17), psn);                   // PSN
  for (size_t i = 0; i < 16; ++i) b[20 + i] = std::byte(0xa0 + i);
  store_le32(b.subspan(36), 0x12345678);  // ICRC
  store_be16(b.subspan(40), 0xabcd);      // VCRC
  return f;
}

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  ::pclose(p);
  return out;
}

const char* kTsharkQuiet =
    " --disable-heuristic rpcrdma_infiniband --disable-heuristic smb_direct_infiniband"
    " --disable-heuristic smcr_infiniband --disable-heuristic nvme_rdma --disable-heuristic lnet_ib"
    " --disable-heuristic iser_infiniband --disable-heuristic eth_over_ib"
    " --disable-heuristic mellanox_eoib --disable-heuristic sdp_infiniband"
    " --disable-heuristic fc_infiniband --disable-heuristic drbd_rdma 2>/dev/null";

}  // namespace

TEST_CASE("ERF timestamps are 32.32 fixed point seconds that round-trip to the nanosecond") {
  CHECK(erf_timestamp_from_ns(0) == 0);
  CHECK(erf_timestamp_from_ns(1'000'000'000) == uint64_t{1} << 32);
  CHECK(erf_timestamp_from_ns(1'500'000'000) == (uint64_t{1} << 32 | 0x80000000u));
  CHECK(erf_timestamp_from_ns(2'999'999'999) == (uint64_t{2} << 32 | 0xfffffffc));
  for (uint64_t ns : {1ull, 7ull, 999ull, 123'456'789ull, 999'999'999ull, 5'000'000'001ull}) {
    // The conversion Wireshark applies when it reads an ERF record (wiretap/pcap-common.c).
    const uint64_t ts = erf_timestamp_from_ns(ns);
    uint64_t frac = (ts & 0xffffffff) * 1'000'000'000;
    frac += (frac & 0x80000000) << 1;
    uint64_t secs = ts >> 32, nsec = frac >> 32;
    if (nsec >= 1'000'000'000) nsec -= 1'000'000'000, ++secs;
    CHECK(secs * 1'000'000'000 + nsec == ns);
  }
}

TEST_CASE("an Ethernet capture is classic pcap with nanosecond timestamps and the frames as given") {
  TempDir dir;
  const auto path = dir.path / "eth.pcap";
  const auto f1 = bytes_of({0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00, 0x45});
  const auto f2 = bytes_of({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 5, 6, 0x08, 0x06});
  {
    PcapWriter w(path, Linktype::Ethernet);
    w.write(1_us + 234_ps, f1);                     // sub-nanosecond part is truncated
    w.write(Time::s(3) + 5_ns, f2, Direction::Rx);  // direction is not recorded in classic pcap
    CHECK(w.frames() == 2);
  }  // the destructor closes the file

  const auto raw = file_bytes(path);
  REQUIRE(raw.size() == 24 + 2 * 16 + f1.size() + f2.size());
  CHECK(load_le32(raw) == 0xa1b23c4d);  // nanosecond-resolution magic, host (little-endian) order
  CHECK(load_le32(std::span(raw).subspan(20)) == 1);

  const auto r = read_back(path);
  CHECK(r.linktype == DLT_EN10MB);
  CHECK(r.snaplen == 65535);
  CHECK(r.precision == PCAP_TSTAMP_PRECISION_NANO);
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[0].sec == 0);
  CHECK(r.records[0].nsec == 1000);
  CHECK(r.records[0].len == f1.size());
  CHECK(r.records[0].data == f1);
  CHECK(r.records[1].sec == 3);
  CHECK(r.records[1].nsec == 5);
  CHECK(r.records[1].data == f2);
}

TEST_CASE("frames longer than the snap length are cut, keeping their length") {
  TempDir dir;
  const auto path = dir.path / "snap.pcap";
  std::vector<std::byte> f(100, std::byte{0x5a});
  PcapWriter w(path, Linktype::Ethernet, 64);
  w.write(0_ns, f);
  w.close();
  CHECK_FALSE(w.is_open());
  w.close();  // idempotent
  const auto r = read_back(path);
  CHECK(r.snaplen == 64);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].len == 100);
  CHECK(r.records[0].data.size() == 64);
}

TEST_CASE("writing to a closed capture and opening an impossible path are errors") {
  TempDir dir;
  PcapWriter w(dir.path / "x.pcap", Linktype::Ethernet);
  w.close();
  CHECK_THROWS_AS(w.write(0_ns, bytes_of({1, 2, 3})), std::logic_error);
  CHECK_THROWS_AS(PcapWriter(dir.path / "no" / "such" / "dir.pcap", Linktype::Ethernet), std::runtime_error);
}

// A capture held its file open: 2,000 hosts' ports passed ulimit -n's
// 1,024 descriptors and the run failed at set-up (exit 3). A writer now
// opens its file only to write its buffer out.
TEST_CASE("captures hold no file descriptor between writes") {
  TempDir dir;
  auto open_fds = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                         std::filesystem::directory_iterator{});
  };
  const auto before = open_fds();
  std::vector<std::unique_ptr<PcapWriter>> writers;
  const auto frame = bytes_of({0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00});
  for (int i = 0; i < 100; ++i) {
    writers.push_back(
        std::make_unique<PcapWriter>(dir.path / (std::to_string(i) + ".pcap"), Linktype::Ethernet));
    writers.back()->write(Time::ns(i), frame);
  }
  CHECK(open_fds() == before);
  std::vector<std::byte> big(60000, std::byte{0x33});  // past the 64 KiB buffer: written out
  writers[7]->write(1_us, big);
  writers[7]->write(2_us, big);
  CHECK(open_fds() == before);
  for (auto& w : writers) w->close();
  for (int i : {0, 7, 99}) {
    const auto r = read_back(dir.path / (std::to_string(i) + ".pcap"));
    REQUIRE(r.records.size() == (i == 7 ? 3u : 1u));
    CHECK(r.records[0].data == frame);
    if (i == 7) CHECK(r.records[2].data == big);
  }
}

TEST_CASE("ib frames in ERF records: 16-byte header of type INFINIBAND, then the frame") {
  TempDir dir;
  const auto path = dir.path / "ib.pcap";
  const auto f = ib_send_only(0x0002, 0x000011, 0x000100);
  {
    PcapWriter w(path, Linktype::Erf);
    w.write(Time::s(2) + 250_ns, f, Direction::Tx);
    w.write(Time::s(2) + 1_us, f, Direction::Rx);
  }
  const auto r = read_back(path);
  CHECK(r.linktype == DLT_ERF);
  REQUIRE(r.records.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const Record& rec = r.records[i];
    REQUIRE(rec.data.size() == ErfHeader::kLen + f.size());
    CHECK(rec.len == ErfHeader::kLen + f.size());
    auto copy = rec.data;
    auto h = *ErfView::check(copy);
    CHECK(h.type() == kErfTypeInfiniband);
    CHECK(h.flags() == (kErfFlagVaryingLength | i));  // interface 0 sent, 1 received
    CHECK(h.rlen() == ErfHeader::kLen + f.size());
    CHECK(h.lctr() == 0);
    CHECK(h.wlen() == f.size());
    CHECK(std::equal(f.begin(), f.end(), rec.data.begin() + ErfHeader::kLen));
  }
  auto copy = r.records[0].data;
  CHECK(ErfView::check(copy)->timestamp() == (uint64_t{2} << 32 | erf_timestamp_from_ns(250)));
  CHECK(r.records[0].sec == 2);
  CHECK(r.records[0].nsec == 250);
  CHECK(r.records[1].nsec == 1000);
  // Byte-literal check of the header of the first record.
  CHECK(std::vector<std::byte>(r.records[0].data.begin(), r.records[0].data.begin() + 16) ==
        bytes_of({0x32, 0x04, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,  // ts: 2 s + 1074 / 2^32 s, little-endian
                  21, 0x04, 0x00, 58, 0x00, 0x00, 0x00, 42}));     // type, flags, rlen, lctr, wlen
}

TEST_CASE("an ERF record keeps its whole header when the snap length cuts the frame") {
  TempDir dir;
  const auto path = dir.path / "ibsnap.pcap";
  const auto f = ib_send_only(2, 3, 4);
  {
    PcapWriter w(path, Linktype::Erf, 36);
    w.write(0_ns, f);
  }
  const auto r = read_back(path);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].data.size() == 36);
  CHECK(r.records[0].len == 16 + f.size());
  auto copy = r.records[0].data;
  CHECK(ErfView::check(copy)->rlen() == 36);
  CHECK(ErfView::check(copy)->wlen() == f.size());
}

TEST_CASE("linktype 247 holds the raw ib frame") {
  TempDir dir;
  const auto path = dir.path / "raw.pcap";
  const auto f = ib_send_only(2, 3, 4);
  {
    PcapWriter w(path, Linktype::Infiniband);
    w.write(10_ns, f);
  }
  const auto r = read_back(path);
  CHECK(r.linktype == 247);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].data == f);
}

TEST_CASE("tshark dissects ib frames in ERF records as InfiniBand, with no error") {
  if (std::system("command -v tshark >/dev/null 2>&1") != 0) FAIL("tshark is not installed");
  TempDir dir;
  const auto path = dir.path / "ib.pcap";
  {
    PcapWriter w(path, Linktype::Erf);
    w.write(1_us, ib_send_only(0x0002, 0x000011, 0x000100), Direction::Tx);
    w.write(3_us, ib_send_only(0x0003, 0x0000ab, 0xfffffe), Direction::Rx);
  }
  const std::string base = "tshark -n -r " + path.string() + " ";
  CHECK(run(base +
            "-T fields -E separator=, -e infiniband.lrh.dlid -e infiniband.bth.opcode "
            "-e infiniband.bth.destqp -e infiniband.bth.psn -e frame.time_epoch" +
            kTsharkQuiet) ==
        "2,4,0x000011,256,0.000001000\n"
        "3,4,0x0000ab,16777214,0.000003000\n");
  CHECK(run(base +
            "-Y '!(infiniband.bth && infiniband.invariant.crc && infiniband.variant.crc && "
            "!infiniband.vendor)'" +
            kTsharkQuiet) == "");
  CHECK(run(base + "-Y '_ws.malformed || _ws.short || _ws.expert.severity >= 8388608'" + kTsharkQuiet) == "");
}
