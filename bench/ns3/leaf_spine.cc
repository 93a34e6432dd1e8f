// The 128-host leaf-spine of docs/performance.md's ns-3 comparison, written
// for Debian's ns-3 (libns3-dev): 4 spines x 8 leaves x 16 hosts,
// point-to-point links of 25 Gb/s from a host to its leaf and 100 Gb/s
// between leaves and spines, 1 us delay each; host i sends 100 messages of
// 1 MiB to host i + 64 (modulo 128) as 1,024-byte UDP datagrams at its link
// rate from time 0 (ns-3 has no RDMA transport of its own: this is the data
// stream of an RDMA WRITE without its ACKs, the cheapest traffic ns-3 can
// carry over the same wires); global routing with per-packet ECMP over the
// spines; 2 ms simulated; no traces but a count of the packets each host's
// device receives. Prints the packets delivered, the events run and the
// wall seconds of the whole process.
//
//   g++ -O2 -o ns3_leaf_spine leaf_spine.cc $(pkg-config --cflags --libs ns3-applications ns3-internet ns3-point-to-point)
//   ./ns3_leaf_spine [--time=2ms] [--hostRate=25Gbps] [--fabricRate=100Gbps]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

using namespace ns3;

namespace {
uint64_t g_delivered = 0;
void on_rx(Ptr<const Packet>) { ++g_delivered; }
}  // namespace

int main(int argc, char** argv) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string stop = "2ms", host_rate = "25Gbps", fabric_rate = "100Gbps";
  uint32_t spines = 4, leaves = 8, per_leaf = 16, size = 1024;
  uint64_t message = 1 << 20, count = 100;
  CommandLine cmd;
  cmd.AddValue("time", "simulated time", stop);
  cmd.AddValue("hostRate", "host link rate", host_rate);
  cmd.AddValue("fabricRate", "leaf-spine link rate", fabric_rate);
  cmd.AddValue("spines", "spines", spines);
  cmd.AddValue("leaves", "leaves", leaves);
  cmd.AddValue("hostsPerLeaf", "hosts per leaf", per_leaf);
  cmd.Parse(argc, argv);
  const uint32_t hosts_n = leaves * per_leaf;

  Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(true));
  NodeContainer hosts, leaf, spine;
  hosts.Create(hosts_n);
  leaf.Create(leaves);
  spine.Create(spines);
  InternetStackHelper stack;
  stack.Install(hosts);
  stack.Install(leaf);
  stack.Install(spine);

  PointToPointHelper host_link, fabric_link;
  host_link.SetDeviceAttribute("DataRate", StringValue(host_rate));
  host_link.SetChannelAttribute("Delay", StringValue("1us"));
  host_link.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1000p"));
  fabric_link.SetDeviceAttribute("DataRate", StringValue(fabric_rate));
  fabric_link.SetChannelAttribute("Delay", StringValue("1us"));
  fabric_link.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1000p"));

  Ipv4AddressHelper addr;
  std::vector<Ipv4Address> host_addr(hosts_n);
  uint32_t subnet = 0;
  auto next_subnet = [&] {
    char base[32];
    std::snprintf(base, sizeof base, "10.%u.%u.0", (subnet >> 8) & 255, subnet & 255);
    ++subnet;
    addr.SetBase(base, "255.255.255.252");
  };
  for (uint32_t h = 0; h < hosts_n; ++h) {
    NetDeviceContainer d = host_link.Install(hosts.Get(h), leaf.Get(h / per_leaf));
    next_subnet();
    host_addr[h] = addr.Assign(d).GetAddress(0);
    d.Get(0)->TraceConnectWithoutContext("MacRx", MakeCallback(&on_rx));
  }
  for (uint32_t l = 0; l < leaves; ++l)
    for (uint32_t s = 0; s < spines; ++s) {
      next_subnet();
      addr.Assign(fabric_link.Install(leaf.Get(l), spine.Get(s)));
    }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  const uint16_t port = 4791;
  PacketSinkHelper sink("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
  sink.Install(hosts).Start(Seconds(0));
  for (uint32_t h = 0; h < hosts_n; ++h) {
    OnOffHelper src("ns3::UdpSocketFactory", InetSocketAddress(host_addr[(h + hosts_n / 2) % hosts_n], port));
    src.SetConstantRate(DataRate(host_rate), size);
    src.SetAttribute("MaxBytes", UintegerValue(message * count));
    src.Install(hosts.Get(h)).Start(Seconds(0));
  }

  Simulator::Stop(Time(stop));
  Simulator::Run();
  const uint64_t events = Simulator::GetEventCount();
  Simulator::Destroy();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("ns3 hosts=%u simulated=%s wall_s=%.2f events=%llu packets_delivered=%llu packets_per_s=%.0f\n",
              hosts_n, stop.c_str(), wall, static_cast<unsigned long long>(events),
              static_cast<unsigned long long>(g_delivered), static_cast<double>(g_delivered) / wall);
  return 0;
}
