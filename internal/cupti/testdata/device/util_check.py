"""The utilization paradox on the device (issue 25): over a workload's measured loop, the
GPU timeline's kernel coverage and SM-weighted coverage against nvidia-smi's utilization.gpu
sampled in the same run.

  util_check.py SPANS.json WORKLOAD.json SMI.csv
SMI.csv is `nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv,noheader,nounits
-lms 100` (local time: run with TZ=UTC). Coverage = Σ ghostdriver.cuda.gpu.busy_ns of the
cuda.gpu_execution spans that start inside the loop ÷ the loop's wall time (the process's
submissions do not overlap: one thread, synced each step); SM-weighted likewise with
ghostdriver.cuda.gpu.sm_weighted_busy_ns. Prints one JSON line.
"""
import datetime, json, sys

spans_path, wl_path, smi_path = sys.argv[1:4]
wl = json.load(open(wl_path))
lo, hi = wl["loop_start_unix_ns"], wl["loop_end_unix_ns"]

def attrs(s):
    out = {}
    for a in s.get("attributes", []):
        v = a["value"]
        out[a["key"]] = v.get("intValue", v.get("stringValue", v.get("boolValue", v.get("doubleValue"))))
    return out

busy = sm = n = 0
sm_known = True
for line in open(spans_path):
    line = line.strip()
    if not line:
        continue
    for rs in json.loads(line).get("resourceSpans", []):
        pid = next((int(a["value"]["intValue"]) for a in rs.get("resource", {}).get("attributes", []) if a["key"] == "process.pid"), None)
        if pid not in (None, wl["pid"]):
            continue
        for ss in rs.get("scopeSpans", []):
            for s in ss.get("spans", []):
                if s["name"] != "cuda.gpu_execution" or not lo <= int(s["startTimeUnixNano"]) < hi:
                    continue
                a = attrs(s)
                n += 1
                busy += int(a.get("ghostdriver.cuda.gpu.busy_ns", 0))
                if "ghostdriver.cuda.gpu.sm_weighted_busy_ns" in a:
                    sm += int(a["ghostdriver.cuda.gpu.sm_weighted_busy_ns"])
                else:
                    sm_known = False
samples = []
for line in open(smi_path):
    parts = [p.strip() for p in line.split(",")]
    if len(parts) < 3 or not parts[2].isdigit():
        continue
    t = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
    ns = int(t.timestamp() * 1e9)
    if lo <= ns < hi and parts[1] == "0":
        samples.append(int(parts[2]))
wall = hi - lo
print(json.dumps({"mode": wl["mode"], "loop_s": round(wall / 1e9, 3), "executions": n,
                  "kernel_coverage": round(busy / wall, 4),
                  "sm_weighted_coverage": round(sm / wall, 4) if sm_known and n else None,
                  "smi_samples": len(samples),
                  "smi_utilization_mean": round(sum(samples) / len(samples) / 100, 4) if samples else None}))
