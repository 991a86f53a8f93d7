"""Reads `ghostdriver cuda --output` (OTLP/JSON lines) and summarises the spans: counts by
name, submissions by scope/outcome, sync children per submission, launch counts, Xid events,
id uniqueness. VALIDATION.md ("CUDA spans through the CLI").

  spans_check.py SPANS.json [METRICS.json]
"""
import collections, json, sys

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
print(json.dumps(out, indent=1))
