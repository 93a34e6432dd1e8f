#!/usr/bin/env bash
# Makes docs/images/iwarp_quickstart_*.png: the quickstart on iwarp opened in
# the Wireshark GUI under a virtual X server, a SEND's DDP/RDMAP headers
# expanded, then Analyze > Expert Information (docs/captures.md).
# Needs: wireshark-qt xvfb xdotool imagemagick (not in setup.sh: no test
# uses them). Usage: scripts/wireshark_screenshot.sh [build/rdmasim]
set -euo pipefail
cd "$(dirname "$0")/.."
rdmasim=${1:-build/rdmasim}
tmp=$(mktemp -d)
trap 'kill "$ws" "$xvfb" 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$rdmasim" run examples/quickstart.yaml --fabric iwarp --out "$tmp/q" --quiet >/dev/null
pcap=$tmp/q/pcap/a-0.pcap
# The first SEND (b's 2 KiB to a).
frame=$(tshark -n -r "$pcap" -Y 'iwarp_rdma.opcode == 3' -T fields -e frame.number 2>/dev/null | head -1)
export DISPLAY=:97
Xvfb "$DISPLAY" -screen 0 1400x900x24 >/dev/null 2>&1 &
xvfb=$!
sleep 2
wireshark -r "$pcap" -g "$frame" >/dev/null 2>&1 &
ws=$!
sleep 12
win=$(xdotool search --name "a-0.pcap" | head -1)
xdotool windowmove "$win" 0 0 windowsize "$win" 1400 900
sleep 2
# The packet details pane: select the DDP/RDMAP line, expand it all.
xdotool mousemove 200 568 click 1
sleep 0.5
xdotool key shift+Right
sleep 1
import -window root -strip PNG8:docs/images/iwarp_quickstart_send.png
# Analyze > Expert Information.
xdotool mousemove 255 10 click 1
sleep 1
xdotool mousemove 315 367 click 1
sleep 6
import -window root -crop 820x880+275+0 -strip PNG8:docs/images/iwarp_quickstart_expert.png
echo "docs/images/iwarp_quickstart_send.png docs/images/iwarp_quickstart_expert.png"
