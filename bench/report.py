#!/usr/bin/env python3
"""bench/report.py - bench/RESULTS.md and the SVG plots from a run of
bench/run-all.sh (which calls it; python3 standard library only).

    bench/report.py --work DIR --out DIR

DIR (work) holds what run-all.sh collected: machine (key TAB value), load
(epoch load1 load5 load15, every 10 s), meta (name TAB seconds TAB status
TAB command) and NAME.tsv, the figures of each script (bench/lib.sh
bench_fig: figure, tool, unit, runs, median, min, max, extra).
Writes OUT/RESULTS.md, OUT/plots/overhead-vs-rate.svg and
OUT/plots/thread-error.svg.
"""
import argparse
import math
import os
import re
import statistics

TITLES = {
    "accuracy": "Per-thread CPU-time accuracy (`tests/workloads/budget`)",
    "cost": "Overhead against sampling rate (`bench/peer-burn`)",
    "memory": "Memory added (`bench/many-threads`)",
    "stacks": "Exact call chains (`tests/workloads/stacks`)",
    "selfcost": "Sampler cost by component",
    "peers": "rec against peers at 1 kHz (`bench/peer-burn`)",
    "rec": "Format library and readers (synthetic recordings)",
    "unwind": "CFI stack walker: root reach, walk cost, tables (`bench/unwind.sh`)",
    "engine": "Engines: timer and perf_event against perf record (`bench/engine.sh`)",
    "exits": "Exits without exit(), SIGKILL, flush cost (`bench/sampler-exits.sh`)",
    "short": "Short, time-sliced threads (`bench/sampler-short.sh`)",
    "blocked": "Threads that block every signal (`bench/sampler-blocked.sh`)",
    "guest": "Host safety: hazard outcomes per engine, idle cost (`bench/sampler-guest.sh`)",
    "stream": "Live streaming: latency, follower cost, kills (`bench/stream.sh`)",
    "export": "Export formats (`bench/export.sh`)",
    "runtimes": "Stacks through Go, V8 and HotSpot code (`bench/runtimes.sh`)",
    "attach": "Attaching to a running process: `rec-start -p` beside `perf record -p` (`bench/attach.sh`)",
    "retention": "Recording size over time: idle and 100 Hz (`bench/retention.sh`)",
}


def read_kv(path):
    out = {}
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            k, _, v = line.rstrip("\n").partition("\t")
            out[k] = v
    return out


class Fig:
    def __init__(self, row):
        (self.figure, self.tool, self.unit, runs, med, lo, hi,
         self.extra) = (row + [""] * 8)[:8]
        self.runs, self.med, self.lo, self.hi = int(runs), float(med), float(lo), float(hi)
        if self.ex("n"):        # a fit: one value over n runs
            self.runs = int(self.ex("n"))
            self.extra = re.sub(r"(^|[ ;])n=[^ ;]+ ?", r"\1", self.extra)

    def ex(self, key):
        m = re.search(r"(?:^|[ ;])" + re.escape(key) + r"=([^ ;]+)", self.extra)
        return m.group(1) if m else None


def read_figs(path):
    figs = []
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            row = line.rstrip("\n").split("\t")
            if len(row) >= 7:
                figs.append(Fig(row))
    return figs


def num(v):
    """A figure, to 3 significant digits, without useless decimals."""
    if v == 0:
        return "0"
    if v == int(v) and abs(v) < 1e6:
        return ("%d" % v).replace("-", "−")
    a = abs(v)
    if a >= 100:
        s = "%.0f" % v
    elif a >= 10:
        s = "%.1f" % v
    elif a >= 1:
        s = "%.2f" % v
    else:
        s = "%.3g" % v
    return s.replace("-", "−")


def is_rec(tool):
    return tool.startswith("rec")


def ratio(f, ref):
    """|peer| / |rec| of the medians, or None."""
    if ref is None or f is ref or ref.med == 0:
        return None
    return abs(f.med) / abs(ref.med)


# ---- SVG -----------------------------------------------------------------

FONT = 'font-family="DejaVu Sans, Helvetica, Arial, sans-serif"'
COLORS = {"rec": "#1f5fbf", "perf -g": "#c0392b", "bare timers": "#7f7f7f",
          "perf -c 1ms": "#c0392b", "perf -F 1000": "#e67e22", "jfr": "#2e8b57"}


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def text(x, y, s, size=12, anchor="start", extra=""):
    return ('<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s" %s %s>%s</text>'
            % (x, y, size, anchor, FONT, extra, esc(s)))


def nice_ticks(lo, hi, n=6):
    span = hi - lo or 1
    step = 10 ** math.floor(math.log10(span / n))
    for m in (1, 2, 2.5, 5, 10):
        if span / (step * m) <= n:
            step *= m
            break
    k0, k1 = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    return [round(k * step, 10) for k in range(k0, k1 + 1)]


def plot_overhead(figs, path, runs):
    pts = {}
    for f in figs:
        if f.figure.startswith("overhead, period") and f.ex("hz"):
            pts.setdefault(f.tool, []).append((float(f.ex("hz")), f))
    if not pts:
        return False
    W, H, L, R, T, B = 720, 440, 70, 170, 50, 70
    xs = [hz for s in pts.values() for hz, _ in s]
    ys = [v for s in pts.values() for _, f in s for v in (f.lo, f.hi)] + [0]
    x0, x1 = math.log10(min(xs) / 1.3), math.log10(max(xs) * 1.3)
    yt = nice_ticks(min(ys), max(ys))
    y0, y1 = yt[0], yt[-1]

    def X(hz):
        return L + (math.log10(hz) - x0) / (x1 - x0) * (W - L - R)

    def Y(v):
        return T + (y1 - v) / (y1 - y0) * (H - T - B)
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">' % (W, H, W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         text(W / 2, 24, "CPU overhead against sampling rate (peer-burn, 2 threads)", 15, "middle", 'font-weight="bold"')]
    for v in yt:
        o.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>'
                 % (L, W - R, Y(v), Y(v), "#888" if v == 0 else "#e3e3e3"))
        o.append(text(L - 6, Y(v) + 4, num(v), 11, "end"))
    for hz in (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000):
        if x0 <= math.log10(hz) <= x1:
            o.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#e3e3e3"/>' % (X(hz), X(hz), T, H - B))
            o.append(text(X(hz), H - B + 16, "%g" % hz, 11, "middle"))
    o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>' % (L, T, W - L - R, H - T - B))
    o.append(text((L + W - R) / 2, H - B + 36, "sampling rate, Hz (1 / period; log scale)", 12, "middle"))
    o.append(text(18, (T + H - B) / 2, "process CPU time vs unprofiled, %", 12, "middle",
                  'transform="rotate(-90 18 %.1f)"' % ((T + H - B) / 2)))
    o.append(text(L, H - 12, "median of %s runs, bars: min–max; HZ=250 caps timer signals at 250/s per thread"
                  % runs, 10, "start", 'fill="#555"'))
    for i, (tool, s) in enumerate(sorted(pts.items(), key=lambda kv: not is_rec(kv[0]))):
        c = COLORS.get(tool, "#333")
        s.sort(key=lambda p: p[0])
        o.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                 % (c, " ".join("%.1f,%.1f" % (X(hz), Y(f.med)) for hz, f in s)))
        for hz, f in s:
            dx = -3 if is_rec(tool) else 3
            o.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"/>'
                     % (X(hz) + dx, X(hz) + dx, Y(f.lo), Y(f.hi), c))
            o.append('<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>' % (X(hz) + dx, Y(f.med), c))
        ly = T + 20 + 22 * i
        o.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/>' % (W - R + 15, W - R + 40, ly, ly, c))
        o.append('<circle cx="%d" cy="%d" r="4" fill="%s"/>' % (W - R + 27, ly, c))
        o.append(text(W - R + 46, ly + 4, "rec-start" if is_rec(tool) else "perf record -g", 12))
        if not is_rec(tool):
            o.append(text(W - R + 46, ly + 17, "(workload only; perf's", 10, "start", 'fill="#555"'))
            o.append(text(W - R + 46, ly + 29, "own process: see table)", 10, "start", 'fill="#555"'))
    o.append("</svg>")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(o) + "\n")
    return True


def plot_thread_error(figs, path, runs):
    order = ["budget-2000", "budget-1000", "budget-500", "budget-250", "bursty"]
    tools = ["rec", "bare timers", "perf -c 1ms", "perf -F 1000", "jfr"]
    panels = {}
    for f in figs:
        m = re.match(r"per-thread error, (\S+), (\d+) ms$", f.figure)
        if m and m.group(1) in order:
            panels.setdefault(int(m.group(2)), {})[(m.group(1), f.tool)] = f
    if not panels:
        return False
    periods = sorted(panels, reverse=True)
    present = [t for t in tools if any(k[1] == t for p in panels.values() for k in p)]
    PW, PH, L, T, B, G = 430, 330, 60, 60, 95, 40
    W = L + len(periods) * (PW + G)
    H = T + PH + B
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">' % (W, H, W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         text(W / 2, 24, "Per-thread CPU-time error against the kernel's figure (budget workload)", 15,
              "middle", 'font-weight="bold"')]
    for pi, per in enumerate(periods):
        p = panels[per]
        px = L + pi * (PW + G)
        bounds = [float(f.ex("bound")) for f in p.values() if f.ex("bound")]
        # the scale follows the bound; far-off medians are drawn at the edge
        lim = 2.5 * max(bounds) if bounds else max(abs(v) for f in p.values() for v in (f.lo, f.hi))
        yt = nice_ticks(-lim, lim)
        y0, y1 = yt[0], yt[-1]

        def Y(v):
            return T + (y1 - v) / (y1 - y0) * PH
        o.append(text(px + PW / 2, T - 12, "period %d ms" % per, 13, "middle", 'font-weight="bold"'))
        for v in yt:
            o.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>'
                     % (px, px + PW, Y(v), Y(v), "#888" if v == 0 else "#eee"))
            o.append(text(px - 5, Y(v) + 4, num(v), 10, "end"))
        cw = PW / len(order)
        for ti, th in enumerate(order):
            cx = px + cw * (ti + 0.5)
            b = [float(f.ex("bound")) for (t, _), f in p.items() if t == th and f.ex("bound")]
            if b:
                bb = max(b)
                o.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#dff0d8" stroke="#8fbc8f" '
                         'stroke-dasharray="4 3"/>' % (cx - cw / 2 + 4, Y(min(bb, y1)), cw - 8,
                                                       Y(max(-bb, y0)) - Y(min(bb, y1))))
            o.append(text(cx, T + PH + 16, th, 11, "middle"))
            n = len(present)
            for k, tool in enumerate(present):
                f = p.get((th, tool))
                if not f:
                    continue
                x = cx + (k - (n - 1) / 2) * (cw - 16) / max(n, 1)
                c = COLORS.get(tool, "#333")
                lo, hi = max(f.lo, y0), min(f.hi, y1)
                if lo <= hi:
                    o.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"/>'
                             % (x, x, Y(lo), Y(hi), c))
                if y0 <= f.med <= y1:
                    o.append('<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>' % (x, Y(f.med), c))
                else:
                    yy = Y(y0) - 2 if f.med < y0 else Y(y1) + 2
                    d = -7 if f.med < y0 else 7
                    o.append('<path d="M%.1f %.1f l-4 %d l8 0 z" fill="%s"/>' % (x, yy, -d, c))
                    o.append(text(x, yy + (12 if f.med < y0 else -6) * (1 if f.med < y0 else 1),
                                  num(f.med), 9, "middle", 'fill="%s"' % c))
        o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>' % (px, T, PW, PH))
    o.append(text(16, T + PH / 2, "sampled + lost − kernel CPU time, ms", 12, "middle",
                  'transform="rotate(-90 16 %.1f)"' % (T + PH / 2)))
    lx = L
    ly = T + PH + 44
    for tool in present:
        c = COLORS.get(tool, "#333")
        o.append('<circle cx="%d" cy="%d" r="4" fill="%s"/>' % (lx + 5, ly - 4, c))
        label = {"rec": "rec-start", "jfr": "JFR CPUTimeSample (Java port)"}.get(tool, tool)
        o.append(text(lx + 14, ly, label, 11))
        lx += 30 + 7 * len(label)
    o.append('<rect x="%d" y="%d" width="14" height="10" fill="#dff0d8" stroke="#8fbc8f" stroke-dasharray="4 3"/>'
             % (lx, ly - 9))
    o.append(text(lx + 20, ly, "bound ±max(period + 4 ms, 1%)", 11))
    o.append(text(L, H - 14, "median of %s runs (dots), min–max (bars); a triangle marks a median beyond the "
                  "scale, with its value" % runs, 10, "start", 'fill="#555"'))
    o.append("</svg>")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(o) + "\n")
    return True


# ---- RESULTS.md ----------------------------------------------------------

HEADLINES = [
    # (what, figure, unit note)
    ("process total CPU-time error, 1 ms", "process total error, 1 ms"),
    ("process total CPU-time error, 10 ms", "process total error, 10 ms"),
    ("per-thread error, budget-2000 thread, 1 ms (ms)", "per-thread error, budget-2000, 1 ms"),
    ("lost samples per run, 1 ms", "lost samples per run, 1 ms"),
    ("exact call chain, frameless leaf (stk-leaf)", "exact call chain, stk-leaf"),
    ("CPU overhead, 10 ms period", "overhead, period 10 ms"),
    ("CPU overhead, 1 ms period", "overhead, period 1 ms"),
    ("CPU per sample in the workload's threads (fit)", "CPU per sample, in the workload's threads (fit)"),
    ("rec's signal handler, per signal", "rec's signal handler itself, per signal (microbenchmark)"),
    ("RSS added, 1 thread, 1 ms", "RSS added at 1 thread(s), 1 ms"),
    ("file bytes per sample, 1 kHz", "file bytes per sample at 1 kHz, peer-burn"),
    ("writer, M events per CPU second", "writer, M events per CPU second"),
    ("summary tool, CPU s per M events", "summary tool, CPU s per million events"),
    ("JSON dump, CPU s per M events", "JSON dump, CPU s per million events"),
    ("`rec-cpu` per-thread table, CPU s per M events", "per-thread CPU table, CPU s per million events"),
    ("reader max RSS on a big recording", "reader max RSS on a "),
]


def cell(f, unit=True):
    u = (" " + f.unit) if unit and f.unit not in ("", "samples") else ""
    if f.lo == f.hi:
        return "%s%s" % (num(f.med), u)
    return "%s%s (%s … %s)" % (num(f.med), u, num(f.lo), num(f.hi))


def headline(allfigs):
    rows = ["| what | rec: median (min … max) | peers, same run: median (× rec) |", "|---|---|---|"]
    for per in (1, 10):
        within = {}
        for f in allfigs:
            m = re.match(r"per-thread error, (\S+), (\d+) ms$", f.figure)
            w = f.ex("within")
            if m and int(m.group(2)) == per and w and m.group(1) != "budget":
                k, n = (int(x) for x in w.split("/"))
                a = within.setdefault(f.tool, [0, 0])
                a[0] += k
                a[1] += n
        if "rec" in within:
            rows.append("| thread-runs within max(period + 4 ms, 1%%), %d ms | %d/%d | %s |"
                        % (per, within["rec"][0], within["rec"][1],
                           "; ".join("%s %d/%d" % (t, k, n) for t, (k, n) in within.items() if t != "rec") or "—"))
    for what, name in HEADLINES:
        fs = [f for f in allfigs if f.figure == name or (name.endswith(" ") and f.figure.startswith(name))]
        recs = [f for f in fs if is_rec(f.tool)]
        if not recs:
            continue
        ref = recs[0]
        peers = []
        for f in fs:
            if is_rec(f.tool):
                continue
            r = ratio(f, ref)
            peers.append("%s %s%s" % (f.tool, cell(f), " (×%s)" % num(r) if r is not None else ""))
        mine = cell(ref) if len(recs) == 1 else "; ".join("%s %s" % (f.tool, cell(f)) for f in recs)
        rows.append("| %s | %s | %s |" % (what, mine, "; ".join(peers) or "—"))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    mach = read_kv(os.path.join(a.work, "machine"))
    meta = []
    for line in open(os.path.join(a.work, "meta"), encoding="utf-8"):
        name, secs, st, cmd = line.rstrip("\n").split("\t", 3)
        meta.append((name, int(secs), int(st), cmd, read_figs(os.path.join(a.work, name + ".tsv"))))
    loads = []
    lp = os.path.join(a.work, "load")
    if os.path.exists(lp):
        loads = [float(line.split()[1]) for line in open(lp) if len(line.split()) >= 2]
    allfigs = [f for m in meta for f in m[4]]
    runs = mach.get("runs", "5")
    plots = os.path.join(a.out, "plots")
    os.makedirs(plots, exist_ok=True)
    have_ovh = plot_overhead(allfigs, os.path.join(plots, "overhead-vs-rate.svg"), runs)
    have_thr = plot_thread_error(allfigs, os.path.join(plots, "thread-error.svg"), runs)

    o = ["# Benchmark results", "",
         "Generated by `%s` (do not edit: run it again). The scripts are described in "
         "[README.md](README.md); every figure below comes from the run described here." % mach.get("command"), "",
         "## Machine and run", "", "| | |", "|---|---|"]
    lo = ("%.2f / %.2f / %.2f (min / median / max of %d samples, every 10 s)"
          % (min(loads), statistics.median(loads), max(loads), len(loads))) if loads else "not sampled"
    for k, label in (("started", "started (UTC)"), ("finished", "finished (UTC)"), ("mode", "mode"),
                     ("runs", "runs per figure"), ("commit", "tree"), ("cpu", "CPU"), ("cores", "cores"),
                     ("memory", "memory"), ("kernel", "kernel"), ("hz", "kernel HZ (CONFIG_HZ)")):
        o.append("| %s | %s |" % (label, mach.get(k, "?")))
    o.append("| load average, 1 min, during the run | %s |" % lo)
    o.append("| peers | %s; gperftools: %s; %s |" % (mach.get("perf", "?"), mach.get("gperftools") or "not installed",
                                                     mach.get("jdk", "?")))
    o += ["", "The machine has %s cores and may be shared: the load average above says how busy it was. "
          "Figures are CPU-time based wherever they can be (process and thread CPU clocks, GNU time's user + sys), "
          "which a busy machine mostly turns into wider ranges, not biased medians; wall-clock figures are not "
          "reported." % mach.get("cores", "?"), "",
          "How to read: *median* over *runs* runs, *range* the smallest and largest run. "
          "*× rec* is |peer median| / |rec median| for the same figure measured in the same run "
          "(for errors and costs, below 1 means the peer does better; when rec's error is near 0 the ratio is "
          "large by construction: read the medians). Fits (cost per sample, RSS per thread) "
          "are one value over all runs; their range is ± one standard error where given.", "",
          "## Headline figures", ""]
    o += headline(allfigs)
    o += ["", "## Plots", ""]
    if have_ovh:
        o += ["![CPU overhead against sampling rate](plots/overhead-vs-rate.svg)", "",
              "`plots/overhead-vs-rate.svg`: process CPU time of `bench/peer-burn` under `rec-start --throttle P` "
              "and `perf record -e cpu-clock -c P -g`, against the same without profiler. With CONFIG_HZ=250 a "
              "thread's CPU timer fires at most once per 4 ms tick, so rec's signal rate stops growing past "
              "250 Hz (each signal carries its overrun count).", ""]
    if have_thr:
        o += ["![per-thread error](plots/thread-error.svg)", "",
              "`plots/thread-error.svg`: for each thread of `budget`, CPU time accounted by the samples (plus "
              "lost time) minus the kernel's figure for the thread, against the bound max(period + 4 ms, 1%).", ""]
    for name, secs, st, cmd, figs in meta:
        o += ["## %s" % TITLES.get(name, name), "",
              "Command: `%s` (%d s%s)." % (cmd, secs, "" if st == 0 else ", **failed with status %d**" % st), ""]
        if not figs:
            # Scripts without BENCH_TSV figures: their own tables, as printed.
            log = os.path.join(a.work, "logs", name + ".log")
            text = open(log, encoding="utf-8", errors="replace").read().rstrip() if os.path.exists(log) else ""
            o += (["```", text, "```", ""] if text else ["No figures (see the script's output).", ""])
            continue
        o += ["| figure | tool | median | range | runs | × rec | notes |", "|---|---|---|---|---|---|---|"]
        names = []
        for f in figs:
            if f.figure not in names:
                names.append(f.figure)
        for n in names:
            fs = [f for f in allfigs if f.figure == n]
            mine = [f for f in figs if f.figure == n]
            ref = next((f for f in fs if is_rec(f.tool)), None)
            for f in mine:
                r = None if is_rec(f.tool) else ratio(f, ref)
                rng = "—" if f.lo == f.hi else "%s … %s" % (num(f.lo), num(f.hi))
                o.append("| %s | %s | %s %s | %s | %d | %s | %s |"
                         % (n, f.tool, num(f.med), f.unit, rng, f.runs,
                            "×%s" % num(r) if r is not None else ("1" if f is ref else "—"),
                            re.sub(r"(\w)=", r"\1 ", f.extra).replace("|", "/")))
        o.append("")
    with open(os.path.join(a.out, "RESULTS.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(o))


if __name__ == "__main__":
    main()
