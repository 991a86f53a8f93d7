"""Checks a traced run's spans against its workload's own truth (issue 25).

  timeline_check.py SPANS.json WORKLOAD.json [PROFILED.json]
Prints one JSON line: submissions of the workload's process with GPU work, kernel counts
per step (against the profiled run's torch.profiler count when given), the sleep kernels'
execution span against the CUDA events' elapsed time, incomplete submissions and clock
rule violations.
"""
import json, statistics, sys

spans_path, wl_path = sys.argv[1], sys.argv[2]
wl = json.load(open(wl_path))
prof = json.load(open(sys.argv[3])) if len(sys.argv) > 3 else None

def attrs(s):
    out = {}
    for a in s.get("attributes", []):
        v = a["value"]
        out[a["key"]] = v.get("intValue", v.get("stringValue", v.get("boolValue", v.get("doubleValue"))))
    return out

spans = []
for line in open(spans_path):
    line = line.strip()
    if not line:
        continue
    for rs in json.loads(line).get("resourceSpans", []):
        pid = None
        for a in rs.get("resource", {}).get("attributes", []):
            if a["key"] == "process.pid":
                pid = int(a["value"].get("intValue"))
        for ss in rs.get("scopeSpans", []):
            for s in ss.get("spans", []):
                s["_pid"] = pid
                spans.append(s)
by_parent = {}
for s in spans:
    by_parent.setdefault(s.get("parentSpanId", ""), []).append(s)
subs = [s for s in spans if s["name"] == "cuda.submission" and (s["_pid"] in (None, wl["pid"]))]
subs.sort(key=lambda s: int(s["startTimeUnixNano"]))
res = {"mode": wl["mode"], "submissions": len(subs)}
fused = [s for s in subs if attrs(s).get("ghostdriver.cuda.gpu.timeline") == "on"]
res["fused"] = len(fused)
res["incomplete"] = sum(1 for s in fused if not attrs(s).get("ghostdriver.cuda.gpu.complete"))
res["clock_rule_violations"] = sum(int(attrs(s).get("ghostdriver.cuda.gpu.clock_rule_violations", 0)) for s in fused)
res["unmatched_launches"] = sum(int(attrs(s).get("ghostdriver.cuda.gpu.launches_unmatched", 0)) for s in fused)
kc = [int(attrs(s).get("ghostdriver.cuda.gpu.kernel_count", 0)) for s in fused]
res["kernels_traced"] = sum(kc)
if kc:
    res["kernels_per_submission_median"] = statistics.median(kc)
    res["kernels_per_submission_last"] = kc[-wl["iters"]:][:5]
if prof and prof.get("profiler_kernel_total"):
    res["profiler_kernels_per_step"] = prof["profiler_kernel_total"] / prof["iters"]
if wl["mode"] == "coexist":
    res["profiler_kernel_total_while_loaded"] = wl.get("profiler_kernel_total")
stage = {}
for s in fused:
    for c in by_parent.get(s["spanId"], []):
        if c["name"].startswith("cuda.gpu_"):
            d = int(c["endTimeUnixNano"]) - int(c["startTimeUnixNano"])
            stage.setdefault(c["name"], []).append(d)
res["stage_median_us"] = {k: statistics.median(v) / 1e3 for k, v in stage.items()}
if wl["mode"] == "sleep":
    ex = []
    for s in fused:
        for c in by_parent.get(s["spanId"], []):
            if c["name"] == "cuda.gpu_execution":
                names = [attrs(e).get("ghostdriver.cuda.kernel.name", "") for e in c.get("events", [])]
                ex.append((int(c["endTimeUnixNano"]) - int(c["startTimeUnixNano"]), names))
    recs = wl["records"]
    ex = ex[-len(recs):]
    # Two independent timings: the spin kernel runs `cycles` of the SM clock (clock64),
    # so its length is cycles / f_SM; and it runs between its two CUDA events, so it is
    # no longer than their elapsed time.
    khz = wl.get("sm_clock_khz") or 1980000
    errs, worst, ok, inside = [], 0, 0, 0
    for (d, names), r in zip(ex, recs):
        want = r["cycles"] / (khz * 1e3) * 1e9
        e = abs(d - want)
        errs.append(e)
        worst = max(worst, e)
        if e <= max(2000, 0.01 * want):
            ok += 1
        if d <= r["event_ms"] * 1e6:
            inside += 1
    res["sleep_compared"] = len(errs)
    res["sleep_within_1pct_or_2us_of_cycles"] = ok
    res["sleep_inside_its_events"] = inside
    res["sleep_abs_err_median_ns"] = statistics.median(errs) if errs else None
    res["sleep_abs_err_max_ns"] = worst
    res["event_minus_execution_median_ns"] = statistics.median(r["event_ms"] * 1e6 - d for (d, _), r in zip(ex, recs)) if recs else None
    res["sleep_kernel_names"] = sorted({n for _, ns in ex for n in ns})[:3]
print(json.dumps(res))
