"""Compares cudatrace's view of a workload run with the workload's own numbers.

  compare.py TRACE.json WORKLOAD.json [PROFILE.json]
Both clocks are CLOCK_MONOTONIC (bpf_ktime_get_ns, Python's perf_counter_ns), so every
workload sync [t0, t1] is matched to the traced sync call inside it.
"""
import json, statistics, sys

tr = json.load(open(sys.argv[1]))
wl = json.load(open(sys.argv[2]))
pf = json.load(open(sys.argv[3])) if len(sys.argv) > 3 else None
pid = wl["pid"]
subs = sorted([s for s in tr["submissions"] if s["pid"] == pid and s.get("sync")], key=lambda s: s["sync"]["start"])
matched, diffs, rel, launches, waits_vs_gpu = 0, [], [], 0, []
apis = {}
j = 0
for w in wl["syncs"]:
    while j < len(subs) and subs[j]["sync"]["start"] < w["t0_mono_ns"]:
        j += 1
    if j < len(subs) and subs[j]["sync"]["end"] <= w["t1_mono_ns"]:
        s = subs[j]
        matched += 1
        d = s["sync"]["end"] - s["sync"]["start"]
        diffs.append(w["host_sync_ns"] - d)
        rel.append(d / w["host_sync_ns"])
        launches += s["launches"]
        apis[s["sync"]["api"]] = apis.get(s["sync"]["api"], 0) + 1
        waits_vs_gpu.append((d / 1e6, w["gpu_batch_ms"]))
        j += 1
res = {
    "workload_syncs": len(wl["syncs"]), "traced_syncs_matched": matched, "sync_apis": apis,
    "launches_in_matched_submissions": launches,
    "host_minus_traced_sync_ns": {"median": statistics.median(diffs) if diffs else None,
                                   "p99": sorted(diffs)[int(0.99 * (len(diffs) - 1))] if diffs else None,
                                   "min": min(diffs) if diffs else None, "max": max(diffs) if diffs else None},
    "traced_over_host_sync_median": statistics.median(rel) if rel else None,
    "traced_wait_ms_median": statistics.median([a for a, _ in waits_vs_gpu]) if waits_vs_gpu else None,
    "gpu_batch_ms_median": statistics.median([b for _, b in waits_vs_gpu]) if waits_vs_gpu else None,
    "measure_wall_ms": wl["measure_wall_ns"] / 1e6,
}
if pf:
    res["profiler_kernel_total"] = pf["profiler_kernel_total"]
    res["profiler_kernels"] = pf["profiler_kernels"]
    res["profiler_runtime_calls"] = pf["profiler_runtime_calls"]
print(json.dumps(res, indent=1))
