"""PIO versus DMA for data: an inline send costs the CPU a programmed-I/O
copy that grows with the size (and holds the core); without inline the NIC
reads the WQE and the payload by DMA, two PCIe round trips. A write_lat
sweep finds inline faster for small messages and slower for large ones."""
import os

from e2e import SOURCE, check, finish, run, tmpdir, workload

EXAMPLE = os.path.join(SOURCE, "examples/host_inline_sweep.yaml")


def p50(size, inline):
    out = os.path.join(tmpdir(), f"inline-{size}-{inline}")
    sets = ["--set", f"workloads.0.size={size}"]
    if not inline:
        sets += ["--set", "workloads.0.inline_threshold=0"]
    _, _, _, res = run(EXAMPLE, out, *sets)
    w = workload(res, "lat")
    check(w["completions"] == {"IBV_WC_SUCCESS": 50} and w["data_verified"], f"{size} inline={inline}: all verified")
    a = next(h for h in res["hosts"] if h["name"] == "a")
    return w["latency_ns"]["p50"], a["cores"][0]["user_ps"]


gain = {}
for size in (64, 1024, 4096, 8192, 16384):
    (li, ui), (ld, ud) = p50(size, True), p50(size, False)
    gain[size] = ld - li
    print(f"size {size}: inline p50 {li} ns, DMA p50 {ld} ns; a's user CPU {ui} vs {ud} ps")
    # The copy by PIO is CPU time: 50 messages of `size` at 32 Gb/s.
    check(ui - ud == 50 * size * 8 * 1000 // 32, f"{size}: inline costs the CPU the PIO copy ({ui - ud} ps)")

check(gain[64] > 1000, f"64 B: inline saves the two DMA round trips ({gain[64]} ns)")
check(gain[64] > gain[1024] > gain[4096] > 0, f"the saving shrinks with size and lasts to 4 KiB ({gain})")
check(gain[8192] < 0 and gain[16384] < gain[8192], f"8 KiB and up: inline costs more than it saves ({gain})")
finish()
