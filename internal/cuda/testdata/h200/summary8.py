"""Summary of run8.sh: per condition, medians over rounds of the measured loop's wall time,
the launch phase per launch (host clock and thread CPU clock), the main thread's run-queue
wait, the tracer's own CPU per launch, and the median over rounds of each run's ratio to
the same round's bare run; the launch phase normalised by the CPU-speed gauge (workload.py
--ref) the same way; then the counts that must stay exact.

  summary8.py RUNS.tsv DIR [DIR...]

Several DIRs (runs of the same script on different machines of the kind) are pooled; a
run's paired ratio is to the bare run of its own DIR and round. A run whose launch phase
per launch is more than twice the median of all runs is left out of every figure and
listed (one such run was seen: 29 us per launch, a whole process three times slower).

Launches per iteration come from the profiler's own kernel count (CUPTI: an independent
reading) of the measured loop, profiler_kernel_total / iters; a traced process must then
count (iters + 9 warm-up) x that + 2 (the two randn of the set-up) top-level launches.
"""
import glob, json, os, re, statistics, sys

TSV, DIRS = sys.argv[1], sys.argv[2:]
NAMES = {
    "b": "no tracer",
    "p": "torch.profiler (CUPTI), the peer",
    "t": "both layers, entry+return (default)",
    "m": "both layers, uprobe_multi",
    "d": "driver only, entry+return",
    "e": "driver only, launches at entry",
    "x": "driver, at entry, uprobe_multi",
    "f": "floor: x's hooks, program only counts",
    "s": "x with BPF run-time stats on",
    "g": "ghostdriver cuda (collector graph), defaults",
    "G": "ghostdriver cuda, levers of x",
}


def load(p):
    try:
        return json.load(open(p))
    except (OSError, ValueError):
        return None


def med(v):
    return statistics.median(v) if v else float("nan")


runs = {}  # (cond, (dir, round)) -> row
for p in sorted(q for W in DIRS for q in glob.glob(f"{W}/*_*.json")):
    W = os.path.dirname(p)
    m = re.match(r"([A-Za-z])_(\d+)\.json$", os.path.basename(p))
    if not m:
        continue
    c, r = m.group(1), int(m.group(2))
    j = load(p)
    if not j or "launch_ns" not in j:
        continue
    lpi = None
    row = {"cond": c, "round": r, "iters": j["iters"], "k": j["k"], "wall_ms": j["measure_wall_ns"] / 1e6,
           "launch_us": med(j["launch_ns"]) / 1e3, "launch_cpu_us": med(j["launch_cpu_ns"]) / 1e3,
           "sync_us": med(j["sync_ns"]) / 1e3, "thread_cpu_ms": j["loop_thread_cpu_ns"] / 1e6,
           "proc_cpu_ms": j["loop_process_cpu_ns"] / 1e6, "run_delay_ms": j["loop_run_delay_ns"] / 1e6,
           "nivcsw": j["loop_nivcsw"], "load1": float(j["loadavg"][0]),
           "profiler_kernels": j.get("profiler_kernel_total")}
    if j.get("ref_ns"):
        # each iteration's launch phase over the CPU-speed gauge that followed it
        row["norm"] = med([a / b for a, b in zip(j["launch_ns"], j["ref_ns"]) if b > 0])
        row["ref_us"] = med(j["ref_ns"]) / 1e3
    t = load(f"{W}/{c}_{r}.trace.json")
    if t:
        st = t["stats"]
        row.update({"top": t["top_level_counts"]["launch"], "nested": t["nested_counts"]["launch"],
                    "syncs": t["top_level_counts"]["sync"], "lost": st["Lost"], "stale": st["StaleFrames"],
                    "no_frame": st["ReturnsWithoutFrame"], "tracer_cpu_ms": t.get("tracer_cpu_ns", 0) / 1e6,
                    "floor_hits": t.get("floor_hits", 0)})
        for e in t.get("report") or []:
            if e["stage"] == "uprobe_multi" and e["status"] != "attached":
                row["multi_refused"] = e["reason"]
        for ps in t.get("program_stats") or []:
            if ps["Runs"]:
                row[f"ns_per_run_{ps['Program']}"] = ps["RunTimeNs"] / ps["Runs"]
                row[f"runs_{ps['Program']}"] = ps["Runs"]
    sm = f"{W}/{c}_{r}.summary"
    if os.path.exists(sm):
        txt = open(sm).read()
        g = re.search(r"top-level launch calls (\d+), nested (\d+)", txt)
        if g:
            row["top"], row["nested"] = int(g.group(1)), int(g.group(2))
        g = re.search(r"syncs: (\d+)", txt)
        if g:
            row["syncs"] = int(g.group(1))
        g = re.search(r"(\d+) records lost, (\d+) malformed, (\d+) returns missed, (\d+) returns without a frame", txt)
        if g:
            row["lost"], row["stale"], row["no_frame"] = int(g.group(1)), int(g.group(3)), int(g.group(4))
    row["dir"] = os.path.basename(W)
    runs[(c, (row["dir"], r))] = row

if not runs:
    print("no run finished")
    sys.exit(1)

prof = [row["profiler_kernels"] / row["iters"] for row in runs.values() if row.get("profiler_kernels")]
lpi = statistics.median(prof) if prof else None
if lpi and (abs(lpi - round(lpi)) > 1e-9 or min(prof) != max(prof)):
    print(f"WARNING: the profiler's kernels per iteration vary or are not whole: {sorted(set(prof))}")
any_row = next(iter(runs.values()))
iters, k = any_row["iters"], any_row["k"]
per_iter = lpi if lpi else k + 2
want_top = round((iters + 9) * per_iter + 2)
for row in runs.values():
    row["launch_ns_per_launch"] = row["launch_us"] * 1e3 / per_iter
all_l = med([row["launch_ns_per_launch"] for row in runs.values()])
out = {k: row for k, row in runs.items() if row["launch_ns_per_launch"] > 2 * all_l}
for row in runs.values():
    row["launch_cpu_ns_per_launch"] = row["launch_cpu_us"] * 1e3 / per_iter
    if "tracer_cpu_ms" in row:
        row["tracer_ns_per_launch"] = row["tracer_cpu_ms"] * 1e6 / (iters * per_iter)

cols = sorted({k for row in runs.values() for k in row})
with open(TSV, "w") as f:
    f.write("\t".join(cols) + "\n")
    for key in sorted(runs):
        f.write("\t".join(str(runs[key].get(c, "")) for c in cols) + "\n")
for k in out:
    del runs[k]

conds = [c for c in NAMES if any(k[0] == c for k in runs)]
base = {r: row for (c, r), row in runs.items() if c == "b"}


def stat(c, key):
    v = [row[key] for (cc, r), row in runs.items() if cc == c and key in row]
    return v


def paired(c, key):
    v = [row[key] / base[r][key] for (cc, r), row in runs.items() if cc == c and r in base]
    return v


print(f"launches per iteration: {per_iter:g} ({'profiler kernel count / iters' if lpi else 'K+2, no profiler run'}); "
      f"iterations {iters}; a traced process must count {want_top} top-level launches")
loads = [row["load1"] for row in runs.values()]
for (c, (d, r)), row in sorted(out.items()):
    print(f"left out: {d} {c} round {r}: {row['launch_ns_per_launch']:.0f} ns per launch, more than twice the median of all runs "
          f"({all_l:.0f}); gauge {row.get('ref_us', 0):.0f} us")
print(f"load average (1 min) at the runs' starts: median {med(loads):.2f}, {min(loads):.2f}-{max(loads):.2f}; "
      f"runs {len(runs)} in {len(DIRS)} call(s), rounds {len({r for _, r in runs if _ == 'b'})} with a bare run")
print()
print(f"{'condition':44} {'n':>2} {'wall ms':>8} {'x bare':>6} {'paired':>6} {'(min-max)':>13}  "
      f"{'ns/launch':>9} {'x bare':>6} {'paired':>6} {'+ns':>5} {'cpu ns/l':>8} {'+ns':>5}  {'runq ms':>7} {'tracer ns/l':>11}")
b_wall, b_l, b_lc = med(stat("b", "wall_ms")), med(stat("b", "launch_ns_per_launch")), med(stat("b", "launch_cpu_ns_per_launch"))
for c in conds:
    w, l, lc = stat(c, "wall_ms"), stat(c, "launch_ns_per_launch"), stat(c, "launch_cpu_ns_per_launch")
    pw, pl = paired(c, "wall_ms"), paired(c, "launch_ns_per_launch")
    tr = stat(c, "tracer_ns_per_launch")
    print(f"{NAMES[c]:44} {len(w):2d} {med(w):8.1f} {med(w) / b_wall:6.3f} {med(pw):6.3f} "
          f"{'(' + format(min(pw), '.2f') + '-' + format(max(pw), '.2f') + ')':>13}  "
          f"{med(l):9.0f} {med(l) / b_l:6.3f} {med(pl):6.3f} {med(l) - b_l:5.0f} {med(lc):8.0f} {med(lc) - b_lc:5.0f}  "
          f"{med(stat(c, 'run_delay_ms')):7.1f} {(format(med(tr), '11.0f') if tr else ''):>11}")
secs = {}
for W in DIRS:
    if os.path.exists(f"{W}/order.tsv"):
        for line in open(f"{W}/order.tsv").read().splitlines()[1:]:
            f = line.split("\t")
            if float(f[3]) > 0:
                secs.setdefault(f[1], []).append(float(f[3]))
print()
print("seconds per run, start to exit (process start, CUDA init, attach, loop, detach), median:",
      ", ".join(f"{c} {med(secs[c]):.1f}" for c in conds if c in secs))
if any("norm" in row for row in runs.values()):
    print()
    print("launch phase normalised by the CPU-speed gauge (median over iterations of launch ns / gauge ns):")
    print(f"{'condition':44} {'n':>2} {'norm':>7} {'x bare':>6} {'paired':>6} {'(min-max)':>13} {'+ns/launch':>10} {'gauge us':>8}")
    b_n = med(stat("b", "norm"))
    for c in conds:
        v, pv = stat(c, "norm"), paired(c, "norm")
        if not v:
            continue
        print(f"{NAMES[c]:44} {len(v):2d} {med(v):7.3f} {med(v) / b_n:6.3f} {med(pv):6.3f} "
              f"{'(' + format(min(pv), '.2f') + '-' + format(max(pv), '.2f') + ')':>13} {(med(v) / b_n - 1) * b_l:10.0f} "
              f"{med(stat(c, 'ref_us')):8.1f}")
    print("spread of the bare runs, normalised:", [round(x, 3) for x in sorted(stat("b", "norm"))],
          "gauge us:", [round(x, 1) for x in sorted(stat("b", "ref_us"))])
# The gauge moves between processes in two states (about 85 and about 150 us on the H200
# for 3000 additions) and each run's launch cost moves with it; a per-run ratio to the gauge
# over-corrects (the launch phase is not all interpreter work). So: one common slope of
# ns/launch on the run's median gauge, fitted within conditions (analysis of covariance),
# and each condition's cost over bare read at the bare runs' median gauge, with its
# standard error from the residuals. The gauge is pure Python: no hook and no profiler
# sees it.
gx = {c: [(row["ref_us"], row["launch_ns_per_launch"]) for (cc, r), row in runs.items() if cc == c and "ref_us" in row]
      for c in conds}
gx = {c: v for c, v in gx.items() if v}
if "b" in gx and sum(len(v) for v in gx.values()) > len(gx) + 1:
    sxy = sxx = 0.0
    for v in gx.values():
        mx, my = statistics.fmean(x for x, _ in v), statistics.fmean(y for _, y in v)
        sxy += sum((x - mx) * (y - my) for x, y in v)
        sxx += sum((x - mx) ** 2 for x, _ in v)
    beta = sxy / sxx
    a = {c: statistics.fmean(y for _, y in v) - beta * statistics.fmean(x for x, _ in v) for c, v in gx.items()}
    dof = sum(len(v) for v in gx.values()) - len(gx) - 1
    res2 = sum((y - a[c] - beta * x) ** 2 for c, v in gx.items() for x, y in v)
    sigma = (res2 / dof) ** 0.5 if dof > 0 else float("nan")
    g0 = med([x for x, _ in gx["b"]])
    b0 = a["b"] + beta * g0
    print()
    print(f"adjusted for the gauge: ns/launch = condition + {beta:.1f} ns per gauge us (common slope, "
          f"{sum(len(v) for v in gx.values())} runs, residual sd {sigma:.0f} ns); read at the bare runs' median gauge "
          f"{g0:.1f} us, where bare is {b0:.0f} ns/launch")
    print(f"{'condition':44} {'n':>2} {'gauge us (runs)':>28} {'+ns/launch':>10} {'+-se':>5} {'x bare':>6}")
    for c in conds:
        if c not in gx:
            continue
        n, nb = len(gx[c]), len(gx["b"])
        mc, mb = statistics.fmean(x for x, _ in gx[c]), statistics.fmean(x for x, _ in gx["b"])
        se = sigma * (1 / n + 1 / nb + (mc - mb) ** 2 / sxx) ** 0.5 if c != "b" else 0
        d = a[c] - a["b"]
        print(f"{NAMES[c]:44} {n:2d} {str(sorted(round(x) for x, _ in gx[c])):>28} {d:10.0f} {se:5.0f} {(b0 + d) / b0:6.3f}")
print()
print("spread of the bare runs: wall", [round(x) for x in sorted(stat("b", "wall_ms"))],
      "ns/launch", [round(x) for x in sorted(stat("b", "launch_ns_per_launch"))])
print()
print("counts (each traced run; must be exact):")
for c in conds:
    for (cc, r), row in sorted(runs.items()):
        if cc != c or "top" not in row and "floor_hits" not in row:
            continue
        if c == "f":
            ok = row.get("floor_hits") == want_top and row.get("top") == 0
            what = f"floor hits {row.get('floor_hits')}, launches recorded {row.get('top')}"
        else:
            ok = row["top"] == want_top and row.get("lost") == 0 and row.get("stale") == 0 and row.get("no_frame") == 0
            what = (f"launches top {row['top']} nested {row['nested']}, syncs {row.get('syncs')}, lost {row.get('lost')}, "
                    f"stale {row.get('stale')}, no_frame {row.get('no_frame')}")
        extra = "".join(f", {k[11:]} {row[k]:.0f} ns/run" for k in sorted(row) if k.startswith("ns_per_run_"))
        if row.get("multi_refused"):
            extra += f"; uprobe_multi refused: {row['multi_refused']}"
        print(f"  {c} {r[0]} round {r[1]}: {what}{extra} {'EXACT' if ok else 'NOT EXACT'}")
