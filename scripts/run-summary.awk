# `make run`'s "where the time went": reads a Prometheus scrape of the ghostdriver receiver's
# metrics (the prometheus exporter's text format) and prints, per ring, the jobs by outcome,
# the busy ratio, and each stage's share of the ring's job time (sum of the stage's
# durations ÷ sum of the job durations), with how many of the stage spans were measured
# rather than inferred. ioctl and bo_validation overlap the queued-to-finished stages, so
# the shares need not add up to 100 %.

# label returns the value of label k in a series' label set s, "" when absent.
function label(s, k,    i, rest) {
	i = index(s, k "=\"")
	if (i == 0) return ""
	rest = substr(s, i + length(k) + 2)
	return substr(rest, 1, index(rest, "\"") - 1)
}

# ringof names a series' ring: driver/ring, and the device when the series has one.
function ringof(s,    r, d) {
	r = label(s, "ghostdriver_driver") "/" label(s, "ghostdriver_ring")
	d = label(s, "ghostdriver_device")
	if (d != "") r = r " on " d
	return r
}

BEGIN {
	nstages = split("ioctl bo_validation fence_dependency scheduler_queue ring_emission dma_scheduling execution fence_signal", order, " ")
	for (i = 1; i <= nstages; i++) known[order[i]] = 1
}

/^#/ || NF < 2 { next }

{
	name = $1
	labels = ""
	if ((b = index($1, "{")) > 0) {
		name = substr($1, 1, b - 1)
		labels = substr($0, b)
	}
	v = $NF + 0
}

name == "ghostdriver_stage_duration_seconds_sum" || name == "ghostdriver_stage_duration_seconds_count" {
	r = ringof(labels); st = label(labels, "ghostdriver_stage_name")
	rings[r] = 1
	if (!(st in known) && !(st in extra)) { extra[st] = 1; order[++nstages] = st }
	if (name ~ /_sum$/) stagesum[r, st] += v
	else {
		stagecnt[r, st] += v
		if (label(labels, "ghostdriver_stage_source") == "measured") measured[r, st] += v
	}
}
name == "ghostdriver_job_duration_seconds_sum" { r = ringof(labels); rings[r] = 1; jobsum[r] += v }
name == "ghostdriver_jobs_total" {
	r = ringof(labels); rings[r] = 1
	o = label(labels, "ghostdriver_job_outcome")
	jobs[r] += v; outcome[r, o] += v
}
name == "ghostdriver_ring_busy_ratio" { r = ringof(labels); rings[r] = 1; busy[r] = v; hasbusy[r] = 1 }

END {
	n = 0
	for (r in rings) sorted[++n] = r
	# insertion sort: a handful of rings
	for (i = 2; i <= n; i++) for (j = i; j > 1 && sorted[j] < sorted[j - 1]; j--) { t = sorted[j]; sorted[j] = sorted[j - 1]; sorted[j - 1] = t }
	if (n == 0) { print "no ghostdriver series in the scrape"; exit 1 }
	for (i = 1; i <= n; i++) {
		r = sorted[i]
		line = sprintf("%s: %d jobs (%d completed, %d incomplete, %d evicted)", r, jobs[r], outcome[r, "completed"], outcome[r, "incomplete"], outcome[r, "evicted"])
		if (hasbusy[r]) line = line sprintf(", busy ratio %.2f", busy[r])
		print line
		if (outcome[r, "completed"] == 0) { print "   no completed job: no breakdown"; continue }
		printf "   %-18s %14s %12s %9s\n", "stage", "share of job", "total", "measured"
		for (k = 1; k <= nstages; k++) {
			st = order[k]
			if (!((r, st) in stagecnt)) continue
			m = 0
			if (stagecnt[r, st] > 0) m = 100 * measured[r, st] / stagecnt[r, st]
			printf "   %-18s %13.1f%% %11.3fs %8.0f%%\n", st, 100 * stagesum[r, st] / jobsum[r], stagesum[r, st], m
		}
		printf "   %-18s %14s %11.3fs\n", "(job span)", "100.0%", jobsum[r]
	}
}
