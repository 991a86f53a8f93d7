#!/usr/bin/env bash
# The export path end to end (BENCHMARKS.md, step 6): `ghostdriver replay` of a generated
# 6.17-style capture with no output, to an OTLP/JSON file and to an OTLP protobuf file,
# interleaved round by round; then the collector distribution (source: replay → file
# exporter, json and proto) on the same capture. Per run: wall, user and system CPU, peak
# RSS (/usr/bin/time), and the file's content counted by bench/otlpcount and, for JSON,
# by grep (independently of ghostdriver's counters). Not part of `make test`.
#
#   scripts/bench-export.sh                 1 000 000 jobs, 3 rounds
#   EXPORT_JOBS=200000 EXPORT_ROUNDS=1 …    smaller
#   EXPORT_COLLECTOR=0 …                    CLI only (the collector needs `make dist`)
#   EXPORT_COLLECTOR_ROUNDS=N               collector rounds (default: EXPORT_ROUNDS)
#
# Results: $BENCH_OUT (default bench/results/<date>-export/): export.tsv, collector.tsv,
# events.txt, summary.md (medians).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
JOBS=${EXPORT_JOBS:-1000000}
ROUNDS=${EXPORT_ROUNDS:-3}
COLLECTOR=${EXPORT_COLLECTOR:-1}
DIST=${DIST:-build/otelcol-ghostdriver/otelcol-ghostdriver}
CROUNDS=${EXPORT_COLLECTOR_ROUNDS:-$ROUNDS}
BUILD=${BENCH_BUILD:-/tmp/ghostdriver-bench}
OUT=${BENCH_OUT:-bench/results/$(date -u +%Y%m%dT%H%M)-export}
mkdir -p "$BUILD" "$OUT"
OUT=$(cd "$OUT" && pwd)
log() { echo "bench-export: $*" >&2; }
die() { log "$*"; exit 1; }
[ -x /usr/bin/time ] || die "/usr/bin/time is needed (apt-get install time)"

CGO_ENABLED=0 go build -o "$BUILD/ghostdriver" ./cmd/ghostdriver
CGO_ENABLED=0 go build -o "$BUILD/gencapture" ./bench/gencapture
CGO_ENABLED=0 go build -o "$BUILD/otlpcount" ./bench/otlpcount
CAP=$BUILD/export-6.17-$JOBS.txt
[ -s "$CAP" ] || "$BUILD/gencapture" -style 6.17 -jobs "$JOBS" -rings 4 -procs 8 -o "$CAP"
EPOCH=1700000000000000000
{
	echo "jobs=$JOBS rounds=$ROUNDS capture_bytes=$(stat -c %s "$CAP") commit=$(git rev-parse --short HEAD)"
	echo "nproc=$(nproc) loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
	"$BUILD/ghostdriver" replay "$CAP" --epoch "$EPOCH" | grep -E '^(jobs|events decoded):'
} >"$OUT/events.txt"
EVENTS=$(sed -n 's/.*(total \([0-9]*\)).*/\1/p' "$OUT/events.txt")
[ -n "$EVENTS" ] || die "no event total in $OUT/events.txt"

# count FORMAT FILE ROUND: requests spans job_spans distinct_job_ids grep_job_spans. JSON is
# counted by grep in every round and decoded by otlpcount (distinct ids) in round 1 only:
# decoding gigabytes of JSON takes longer than writing them.
count() {
	if [ "$1" = proto ]; then
		echo "$("$BUILD/otlpcount" -format proto "$2")	-"
	elif [ "$3" = 1 ]; then
		echo "$("$BUILD/otlpcount" -format json "$2")	$(grep -o '"name":"gpu.job"' "$2" | wc -l)"
	else
		echo "-	-	-	-	$(grep -o '"name":"gpu.job"' "$2" | wc -l)"
	fi
}

printf 'round\tcondition\twall_s\tuser_s\tsys_s\tpeak_rss_kb\tevents\tevents_per_cpu_s\tfile_bytes\trequests\tspans\tjob_spans\tdistinct_job_ids\tjob_spans_grep\trc\n' >"$OUT/export.tsv"
for r in $(seq "$ROUNDS"); do
	for cond in none json proto; do
		f=$BUILD/export-out.$cond
		rm -f "$f"
		args=("$CAP" --quiet --epoch "$EPOCH")
		[ "$cond" = none ] || args+=(--output "$f" --output-format "$cond")
		log "round $r: replay → $cond"
		rc=0
		/usr/bin/time -f '%e %U %S %M' -o "$BUILD/time.txt" "$BUILD/ghostdriver" replay "${args[@]}" 2>"$BUILD/stderr.txt" || rc=$?
		read -r wall user sys rss < <(tail -1 "$BUILD/time.txt") # a failed run adds a line before
		if [ "$cond" = none ]; then
			counts="0	-	-	-	-	-"
		else
			counts="$(stat -c %s "$f")	$(count "$cond" "$f" "$r")"
		fi
		eps=$(awk -v e="$EVENTS" -v u="$user" -v s="$sys" 'BEGIN{printf "%.0f", e/(u+s)}')
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$cond" "$wall" "$user" "$sys" "$rss" "$EVENTS" "$eps" "$counts" "$rc" >>"$OUT/export.tsv"
		rm -f "$f"
	done
done

# ---- the collector: source: replay → file exporter ----
if [ "$COLLECTOR" = 1 ]; then
	[ -x "$DIST" ] || die "$DIST missing: run make dist (or EXPORT_COLLECTOR=0)"
	printf 'round\tformat\tend_of_capture_s\tuser_s\tsys_s\tpeak_rss_kb\tevents\tevents_per_cpu_s\tfile_bytes\trequests\tspans\tjob_spans\tdistinct_job_ids\tjob_spans_grep\tlogged_jobs_completed\twarnings\n' >"$OUT/collector.tsv"
	for r in $(seq "$CROUNDS"); do
		for fmt in json proto; do
			f=$BUILD/collector-out.$fmt
			rm -f "$f"
			cat >"$BUILD/collector.yaml" <<-EOF
				receivers:
				  ghostdriver:
				    source: replay
				    replay:
				      path: $CAP
				      epoch: "$EPOCH"
				exporters:
				  file:
				    path: $f
				    format: $fmt
				service:
				  telemetry:
				    metrics:
				      level: none
				  pipelines:
				    traces:
				      receivers: [ghostdriver]
				      exporters: [file]
			EOF
			log "round $r: collector → file ($fmt)"
			start=$(date +%s.%N)
			/usr/bin/time -f '%e %U %S %M' -o "$BUILD/time.txt" "$DIST" --config "$BUILD/collector.yaml" 2>"$BUILD/collector.log" &
			tpid=$!
			until grep -q 'end of capture\|source stopped' "$BUILD/collector.log"; do
				kill -0 "$tpid" 2>/dev/null || die "the collector exited early: $(tail -5 "$BUILD/collector.log")"
				sleep 0.1
			done
			end=$(date +%s.%N)
			kill -TERM "$(pgrep -P "$tpid")"
			wait "$tpid" || true
			read -r _ user sys rss < <(tail -1 "$BUILD/time.txt")
			eoc=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b-a}')
			eps=$(awk -v e="$EVENTS" -v u="$user" -v s="$sys" 'BEGIN{printf "%.0f", e/(u+s)}')
			logged=$(sed -n 's/.*"jobs_completed": \([0-9]*\).*/\1/p' "$BUILD/collector.log" | head -1)
			warns=$(grep -c '\bwarn\b' "$BUILD/collector.log" || true)
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$fmt" "$eoc" "$user" "$sys" "$rss" "$EVENTS" "$eps" \
				"$(stat -c %s "$f")" "$(count "$fmt" "$f" "$r")" "${logged:--}" "$warns" >>"$OUT/collector.tsv"
			cp "$BUILD/collector.log" "$OUT/collector-$r-$fmt.log"
			rm -f "$f"
		done
	done
fi
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/events.txt"

# ---- summary: medians per condition ----
median() { sort -n | awk '{v[NR]=$1} END{if(NR%2) print v[(NR+1)/2]; else printf "%.2f\n", (v[NR/2]+v[NR/2+1])/2}'; }
{
	echo "# Export path, $JOBS jobs ($EVENTS events), $ROUNDS rounds: medians"
	echo
	echo '| path | wall s | CPU s | events/CPU-s | peak RSS MB | job spans in the file (min over rounds) |'
	echo '|---|---|---|---|---|---|'
	for cond in none json proto; do
		rows=$(awk -F'\t' -v c="$cond" '$2==c' "$OUT/export.tsv")
		w=$(cut -f3 <<<"$rows" | median)
		cpu=$(awk -F'\t' '{print $4+$5}' <<<"$rows" | median)
		e=$(cut -f8 <<<"$rows" | median)
		m=$(awk -F'\t' '{print $6/1024}' <<<"$rows" | median)
		j=$(awk -F'\t' '{print ($12 == "-" ? $14 : $12)}' <<<"$rows" | sort -n | head -1)
		echo "| CLI replay → $cond | $w | $cpu | $e | $m | $j |"
	done
	if [ -s "$OUT/collector.tsv" ]; then
		for fmt in json proto; do
			rows=$(awk -F'\t' -v c="$fmt" '$2==c' "$OUT/collector.tsv")
			w=$(cut -f3 <<<"$rows" | median)
			cpu=$(awk -F'\t' '{print $4+$5}' <<<"$rows" | median)
			e=$(cut -f8 <<<"$rows" | median)
			m=$(awk -F'\t' '{print $6/1024}' <<<"$rows" | median)
			j=$(awk -F'\t' '{print ($12 == "-" ? $14 : $12)}' <<<"$rows" | sort -n | head -1)
			echo "| collector replay → file exporter ($fmt) | $w (to end of capture) | $cpu | $e | $m | $j |"
		done
	fi
} >"$OUT/summary.md"
cat "$OUT/summary.md"
