"""Reads a report page as a browser draws it: headless Chromium runs a
script on the page that measures every figure's SVG text boxes, legends
and plot frames, and counts the lines (with their points), error bars and
bars the figure draws (report.py gives them ids: series-N, errorbar-N,
bar-N, legend)."""

import json
import os
import re
import subprocess

from e2e import check, write_text

# The page's own script, run by Chromium: every figure's text boxes as the
# browser lays them out, the pairs that intersect, legends over axes, and
# the lines (with their points), error bars and bars the figure draws.
PROBE = """<script>
const rect = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const meet = (a, b, slack) => a[0] + slack < b[2] && b[0] + slack < a[2] && a[1] + slack < b[3] && b[1] + slack < a[3];
const out = {};
for (const fig of document.querySelectorAll('figure')) {
  const svg = fig.querySelector('svg');
  const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim() !== '')
      .map(t => ({text: t.textContent.trim(), box: rect(t)}));
  const overlaps = [];
  for (let i = 0; i < texts.length; ++i)
    for (let j = i + 1; j < texts.length; ++j)
      if (meet(texts[i].box, texts[j].box, 0.5)) overlaps.push([texts[i].text, texts[j].text]);
  const frames = [...svg.querySelectorAll('g[id^="axes_"] > g[id^="patch_"]:first-child')].map(rect);
  const legends = [...svg.querySelectorAll('g[id="legend"]')].map(rect);
  const covered = legends.some(l => frames.some(f => meet(l, f, 0)));
  const series = [...svg.querySelectorAll('g[id^="series-"]')].map(g => g.querySelectorAll('use').length);
  out[fig.id] = {overlaps, covered, legends: legends.length, frames: frames.length, series,
                 errorbars: svg.querySelectorAll('g[id^="errorbar-"]').length,
                 bars: svg.querySelectorAll('g[id^="bar-"]').length,
                 points: svg.querySelectorAll('g[id^="point-"]').length,
                 texts: texts.map(t => t.text)};
}
const pre = document.createElement('pre');
pre.id = 'probe';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"""


def probe(page):
    """What Chromium measured on `page`: {figure id: {...}}."""
    with open(page) as f:
        html = f.read()
    probed = page.replace(".html", "-probe.html")
    write_text(probed, html.replace("</body>", PROBE + "</body>"))
    dom = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,900",
                          "--dump-dom", "file://" + os.path.abspath(probed)],
                         capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="probe">(.*?)</pre>', dom.stdout, re.S)
    if not check(dom.returncode == 0 and m, f"chromium ran the probe: {dom.stderr[-400:]}"):
        return {}
    return json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))

def check_readable(figs, what):
    for fid, f in figs.items():
        check(not f["overlaps"], f"{what} {fid}: no texts intersect: {f['overlaps'][:4]}")
        check(not f["covered"], f"{what} {fid}: no legend over a plot")


