#include <doctest/doctest.h>
#include <cstdio>
#include <set>
#include "tests/fabrics/ip/tcp/tcp_testbed.hpp"
using namespace rdmasim; using namespace rdmasim::literals; using namespace rdmasim::test;
TEST_CASE("scratch") {
  for (auto k : {CongestionControlKind::cubic}) {
    TcpConfig c; c.congestion_control = k;
    Testbed t(c, c, link(40, 2_us), link(10, 2_us, 256 << 10));
    Source src; Sink sink; src.c=t.a.get(); src.total=20'000'000; sink.c=t.b.get(); t.a->set_upper(&src); t.b->set_upper(&sink);
    std::set<uint32_t> seen; 
    t.ha.port(0).on_tx([&](Time now, Packet& p){ auto v = ConstTcpView::check(std::as_const(p).bytes().subspan(1)); if (v->payload().size()) { bool re = !seen.insert(v->seq()).second; if (re) printf("%.1fus rtx seq=%u cwnd=%lu pipe=%lu to=%lu\n", now.to_us(), v->seq()-0x10000001u, t.a->cwnd(), t.a->bytes_in_flight(), t.a->stats().timeouts);} });
    t.sw.port(1).on_drop([&](Time now, Packet& p){ auto v = ConstTcpView::check(std::as_const(p).bytes().subspan(1)); static int n=0; if (n++ < 5 || seen.count(v->seq()) && v->seq()) printf("%.1fus drop seq=%u\n", now.to_us(), v->seq()-0x10000001u); });
    t.open();
    while (sink.received < src.total && t.sim.now() < 2_s) { t.sim.run(t.sim.now()+10_us); }
    printf("to=%lu fr=%lu rtx=%lu\n", t.a->stats().timeouts, t.a->stats().fast_retransmits, t.a->stats().retransmits);
  }
}
