"""Reads `ghostdriver cuda --output` (OTLP/JSON lines) and summarises the spans: counts by
name, submissions by scope/outcome, sync children per submission, launch counts, Xid events,
id uniqueness. VALIDATION.md ("CUDA spans through the CLI").

  spans_check.py SPANS.json [METRICS.json] [--workload WL.json] [--traceparent SPAN_HEX]

--workload (workload.py's OUT, run with --ctx): per measured iteration, the submissions
parented to the span the thread published in that iteration, their trace id, context tier,
launch count, and their cuda.sync duration against the workload's host-timed sync.
--traceparent: submissions parented to the TRACEPARENT span the process was started with.
"""
import collections, json, statistics, sys

def flag(name):
    if name not in sys.argv:
        return None
    i = sys.argv.index(name)
    v = sys.argv[i + 1]
    del sys.argv[i:i + 2]
    return v

workload_path, traceparent_span = flag("--workload"), flag("--traceparent")

def attrs(kvs):
    out = {}
    for kv in kvs or []:
        v = kv["value"]
        out[kv["key"]] = v.get("intValue", v.get("stringValue", v.get("boolValue", v.get("doubleValue"))))
    return out

spans = []
for line in open(sys.argv[1]):
    for rs in json.loads(line).get("resourceSpans", []):
        res = attrs(rs["resource"].get("attributes"))
        for ss in rs.get("scopeSpans", []):
            for s in ss.get("spans", []):
                s["_a"] = attrs(s.get("attributes"))
                s["_res"] = res
                spans.append(s)

by_name = collections.Counter(s["name"] for s in spans)
ids = collections.Counter(s["spanId"] for s in spans)
subs = {s["spanId"]: s for s in spans if s["name"] == "cuda.submission"}
sync_children = collections.Counter(s["parentSpanId"] for s in spans if s["name"] == "cuda.sync")
orphans = sum(1 for s in spans if s["name"] != "cuda.submission" and s.get("parentSpanId") not in subs)
scope_outcome = collections.Counter((s["_a"].get("ghostdriver.cuda.sync.scope"), s["_a"].get("ghostdriver.cuda.submission.outcome")) for s in subs.values())
bad_sync = sum(1 for sid, s in subs.items()
               if sync_children[sid] != (1 if s["_a"].get("ghostdriver.cuda.submission.outcome") == "synchronized" else 0))
launch_count = sum(int(s["_a"].get("ghostdriver.cuda.launch_count", 0)) for s in subs.values())
sync_apis = collections.Counter(s["_a"].get("ghostdriver.cuda.api") for s in spans if s["name"] == "cuda.sync")
launch_apis = collections.Counter((s["_a"].get("ghostdriver.cuda.api"), s["_a"].get("ghostdriver.cuda.inner_api")) for s in spans if s["name"] == "cuda.launch")
xid_events = [(e["name"], attrs(e.get("attributes"))) for s in subs.values() for e in s.get("events", [])]
errors = collections.Counter((s["name"], s.get("status", {}).get("message")) for s in spans if s.get("status", {}).get("code") == 2)
resources = collections.Counter(tuple(sorted((k, str(v)) for k, v in s["_res"].items() if k in ("process.pid", "process.executable.name", "service.name"))) for s in subs.values())
out = {
    "spans": len(spans), "by_name": dict(by_name), "duplicate_span_ids": sum(1 for c in ids.values() if c > 1),
    "orphans": orphans, "submissions_by_scope_outcome": {f"{k[0]}/{k[1]}": v for k, v in scope_outcome.items()},
    "submissions_with_wrong_sync_children": bad_sync, "sum_launch_count": launch_count,
    "sync_apis": dict(sync_apis), "launch_apis": {f"{k[0]}>{k[1]}": v for k, v in launch_apis.items()},
    "xid_events": xid_events[:5], "xid_event_count": len(xid_events),
    "error_spans": {f"{k[0]}: {k[1]}": v for k, v in errors.most_common(5)},
    "resources": [dict(r) for r in resources],
}
if len(sys.argv) > 2:
    last = None
    for line in open(sys.argv[2]):
        last = json.loads(line)
    m = {}
    for rm in (last or {}).get("resourceMetrics", []):
        for sm in rm.get("scopeMetrics", []):
            for metric in sm.get("metrics", []):
                if "sum" in metric:
                    m[metric["name"]] = [(attrs(dp.get("attributes")), dp.get("asInt")) for dp in metric["sum"]["dataPoints"]]
                elif "histogram" in metric:
                    m[metric["name"]] = [(attrs(dp.get("attributes")), dp.get("count")) for dp in metric["histogram"]["dataPoints"]]
    out["final_metrics"] = m
tiers = collections.Counter(s["_a"].get("ghostdriver.context.tier", "none") for s in subs.values())
out["submissions_by_context_tier"] = dict(tiers)
if traceparent_span:
    under = [s for s in subs.values() if s.get("parentSpanId") == traceparent_span]
    out["traceparent"] = {"submissions_parented": len(under),
                          "tiers": dict(collections.Counter(s["_a"].get("ghostdriver.context.tier") for s in under))}
if workload_path:
    wl = json.load(open(workload_path))
    by_parent = collections.defaultdict(list)
    for s in subs.values():
        by_parent[s.get("parentSpanId")].append(s)
    sync_of = {s["parentSpanId"]: s for s in spans if s["name"] == "cuda.sync"}
    one, trace_ok, tier_ok, launches, ratios, diffs = 0, 0, 0, collections.Counter(), [], []
    for it in wl["syncs"]:
        got = by_parent.get(it["span_id"], [])
        if len(got) != 1:
            continue
        one += 1
        sub = got[0]
        trace_ok += sub["traceId"] == wl["trace_id"]
        tier_ok += sub["_a"].get("ghostdriver.context.tier") == "otep4947"
        launches[int(sub["_a"].get("ghostdriver.cuda.launch_count", 0))] += 1
        sy = sync_of.get(sub["spanId"])
        if sy:
            traced = int(sy["endTimeUnixNano"]) - int(sy["startTimeUnixNano"])
            ratios.append(traced / it["host_sync_ns"])
            diffs.append((it["host_sync_ns"] - traced) / 1e3)
    diffs.sort()
    out["linking"] = {
        "iterations": len(wl["syncs"]), "iterations_with_exactly_one_submission": one,
        "with_the_workload_trace_id": trace_ok, "tier_otep4947": tier_ok,
        "launches_per_iteration": dict(launches), "sum_launches_matched": sum(k * v for k, v in launches.items()),
        "submissions_under_warmup_spans": sum(len(v) for k, v in by_parent.items() if k and k.startswith("ff")),
        "submissions_without_parent": len(by_parent.get("", [])) + len(by_parent.get(None, [])),
        "sync_traced_over_host_median": statistics.median(ratios) if ratios else None,
        "host_minus_traced_us_median_p99_min": [statistics.median(diffs), diffs[int(len(diffs) * 0.99) - 1], diffs[0]] if diffs else None,
    }
print(json.dumps(out, indent=1))
