#include "pcap/capture_set.hpp"

#include <doctest/doctest.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "core/packet.hpp"
#include "nodes/node.hpp"
#include "nodes/port.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

class Sink : public Node {
 public:
  using Node::Node;
  int received = 0;
  void receive(Port& in, Packet p) override {
    ++received;
    in.release_ingress(p.meta().priority, p.size());
  }
};

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static int n = 0;
    path = std::filesystem::temp_directory_path() /
           ("rdmasim-capture-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    std::filesystem::remove_all(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

struct Frame {
  int64_t ns;
  std::vector<uint8_t> data;
};

std::vector<Frame> frames_in(const std::filesystem::path& p) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* h = pcap_open_offline_with_tstamp_precision(p.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  REQUIRE_MESSAGE(h != nullptr, err);
  std::vector<Frame> out;
  pcap_pkthdr* hdr;
  const u_char* data;
  while (pcap_next_ex(h, &hdr, &data) == 1)
    out.push_back({hdr->ts.tv_sec * 1'000'000'000 + hdr->ts.tv_usec, {data, data + hdr->caplen}});
  pcap_close(h);
  return out;
}

// Two nodes joined by a 10 Gb/s link with a 1 us delay.
struct Net {
  Simulator sim;
  PacketPool pool;
  Sink a{sim, "a"}, b{sim, "b"};
  Net() {
    LinkParams lp;
    lp.rate = 10_Gbps;
    lp.delay = 1_us;
    Port::connect(a.add_port(), b.add_port(), lp, 1);
  }
  // A 100-byte frame whose last byte is a CRC placeholder (0) the sealer fills with `tag`.
  Packet frame(uint8_t tag, bool crc_pending = true) {
    Packet p = pool.make();
    auto b = p.push_back(100);
    for (auto& x : b) x = std::byte{tag};
    b[99] = std::byte{0};
    p.meta().crc_pending = crc_pending;
    return p;
  }
};

}  // namespace

TEST_CASE("a captured port's file holds what it sends and receives, sealed once") {
  TempDir dir;
  Net net;
  int sealed = 0;
  std::optional<CaptureSet> caps;
  caps.emplace(dir.path, Linktype::Ethernet, [&](Packet& p) {
    ++sealed;
    p.bytes()[99] = std::byte{0xcc};
    p.meta().crc_pending = false;
  });
  caps->capture(net.a);  // a-0
  caps->capture(net.b.port(0));
  caps->capture(net.b.port(0));  // twice: still one file
  CHECK(caps->size() == 2);

  net.sim.at(10_ns, [&] { net.a.port(0).send(net.frame(1)); });
  net.sim.at(20_ns, [&] { net.b.port(0).send(net.frame(2, false)); });
  net.sim.run();
  caps.reset();  // destruction closes the files

  CHECK(net.a.received == 1);
  CHECK(net.b.received == 1);
  CHECK(sealed == 1);  // frame 1 on leaving a; frame 2 needed no sealing; nothing sealed twice

  const auto fa = frames_in(dir.path / "pcap" / "a-0.pcap");
  const auto fb = frames_in(dir.path / "pcap" / "b-0.pcap");
  REQUIRE(fa.size() == 2);
  REQUIRE(fb.size() == 2);
  // a: tx of frame 1 at 10 ns; rx of frame 2 after 80 ns on the wire and 1 us of delay.
  CHECK(fa[0].ns == 10);
  CHECK(fa[0].data[0] == 1);
  CHECK(fa[0].data[99] == 0xcc);
  CHECK(fa[1].ns == 20 + 80 + 1000);
  CHECK(fa[1].data[0] == 2);
  CHECK(fa[1].data[99] == 0);
  // b: tx of frame 2 at 20 ns, rx of frame 1 (already sealed) at 10 + 80 + 1000 ns.
  CHECK(fb[0].ns == 20);
  CHECK(fb[1].ns == 1090);
  CHECK(fb[1].data == fa[0].data);
}

TEST_CASE("frames on ports nobody captures are never sealed") {
  TempDir dir;
  Net net;
  int sealed = 0;
  CaptureSet caps(dir.path, Linktype::Ethernet, [&](Packet& p) {
    ++sealed;
    p.meta().crc_pending = false;
  });
  net.a.port(0).send(net.frame(1));
  net.sim.run();
  CHECK(sealed == 0);
  CHECK(caps.size() == 0);
  CHECK_FALSE(std::filesystem::exists(dir.path / "pcap"));
}

TEST_CASE("a run stopped early or unwound by an exception leaves complete captures") {
  TempDir dir;
  Net net;
  try {
    CaptureSet caps(dir.path, Linktype::Ethernet);
    caps.capture(net.a);
    for (int i = 0; i < 5; ++i)
      net.sim.at(Time::us(i), [&net, i] { net.a.port(0).send(net.frame(uint8_t(i), false)); });
    net.sim.run(2500_ns);  // stop time: frames 0, 1 and 2 have started
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  const auto fa = frames_in(dir.path / "pcap" / "a-0.pcap");
  REQUIRE(fa.size() == 3);
  CHECK(fa[2].ns == 2000);

  // The ports outlive the set: later frames must not reach a freed writer.
  net.sim.run();
  CHECK(frames_in(dir.path / "pcap" / "a-0.pcap").size() == 3);
}

TEST_CASE("after close() nothing more is written, and files() names every capture") {
  TempDir dir;
  Net net;
  CaptureSet caps(dir.path, Linktype::Ethernet);
  caps.capture(net.a);
  caps.capture(net.b);
  CHECK(caps.files() ==
        std::vector<std::filesystem::path>{dir.path / "pcap" / "a-0.pcap", dir.path / "pcap" / "b-0.pcap"});
  net.a.port(0).send(net.frame(7, false));
  net.sim.run(50_ns);
  caps.close();
  net.sim.run();
  CHECK(frames_in(dir.path / "pcap" / "a-0.pcap").size() == 1);
  CHECK(frames_in(dir.path / "pcap" / "b-0.pcap").empty());
}
