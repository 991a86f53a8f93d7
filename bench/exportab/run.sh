#!/usr/bin/env bash
# Side by side, before and after a change of the export path: two ghostdriver binaries
# replay the same generated captures (6.17 and 4.11 style) with no output, to an OTLP/JSON
# file and to an OTLP protobuf file, interleaved (per round and condition both binaries,
# the first alternating round by round). Per run: wall, user and system CPU, peak RSS from
# /usr/bin/time; events/CPU-s = events / (user + system). Round 1's files are counted
# independently of ghostdriver (grep of "gpu.job" names in JSON, bench/otlpcount on
# protobuf); the two binaries' protobuf files must hold the same spans (otlpcount -digest:
# batch boundaries follow the wall clock, so the bytes differ; later rounds' files are not
# counted). Not part of `make test`.
#
#   bench/exportab/run.sh BEFORE_BIN AFTER_BIN OUTDIR CAPTURE_6.17 CAPTURE_4.11
#   ROUNDS=3 (default)
set -euo pipefail
BEFORE=$1 AFTER=$2 OUT=$3
shift 3
ROUNDS=${ROUNDS:-3}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TMP=${TMPDIR:-/tmp}/exportab.$$
mkdir -p "$OUT" "$TMP"
trap 'rm -rf "$TMP"' EXIT
CGO_ENABLED=0 go build -C "$REPO" -o "$TMP/otlpcount" ./bench/otlpcount
EPOCH=1700000000000000000
[ -x /usr/bin/time ] || { echo "/usr/bin/time is needed" >&2; exit 1; }

{
	echo "before=$("$BEFORE" version 2>/dev/null | head -1) after=$("$AFTER" version 2>/dev/null | head -1)"
	echo "rounds=$ROUNDS nproc=$(nproc) loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/events.txt"
printf 'style\tround\tcondition\tbinary\twall_s\tuser_s\tsys_s\tpeak_rss_kb\tevents\tevents_per_cpu_s\tfile_bytes\trc\n' >"$OUT/runs.tsv"
printf 'style\tformat\tbinary\tfile_bytes\trequests\tspans\tjob_spans\tdistinct_job_ids\tspan_digest\tjob_spans_grep\n' >"$OUT/counts.tsv"
for cap in "$@"; do
	style=$(basename "$cap" | sed -n 's/.*cap-\([0-9.]*\)-.*/\1/p')
	events=$("$AFTER" replay "$cap" --epoch "$EPOCH" | sed -n 's/^events decoded:.*(total \([0-9]*\)).*/\1/p')
	[ -n "$events" ] || { echo "no event total for $cap" >&2; exit 1; }
	echo "$style: $(stat -c %s "$cap") bytes, $events events" >>"$OUT/events.txt"
	for r in $(seq "$ROUNDS"); do
		order="before after"
		[ $((r % 2)) = 0 ] && order="after before"
		for cond in none json proto; do
			for who in $order; do
				bin=$BEFORE
				[ "$who" = after ] && bin=$AFTER
				f=$TMP/out.$who.$cond
				args=("$cap" --quiet --epoch "$EPOCH")
				[ "$cond" = none ] || args+=(--output "$f" --output-format "$cond")
				echo "exportab: $style round $r $cond $who" >&2
				rc=0
				/usr/bin/time -f '%e %U %S %M' -o "$TMP/time" "$bin" replay "${args[@]}" 2>"$TMP/stderr" || rc=$?
				read -r wall user sys rss < <(tail -1 "$TMP/time")
				bytes=-
				[ "$cond" = none ] || bytes=$(stat -c %s "$f")
				eps=$(awk -v e="$events" -v u="$user" -v s="$sys" 'BEGIN{printf "%.0f", e/(u+s)}')
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$style" "$r" "$cond" "$who" "$wall" "$user" "$sys" "$rss" "$events" "$eps" "$bytes" "$rc" >>"$OUT/runs.tsv"
				if [ "$cond" != none ] && [ "$r" = 1 ]; then
					if [ "$cond" = proto ]; then
						c="$("$TMP/otlpcount" -digest -format proto "$f")	-"
						cut -f5 <<<"$c" >"$TMP/digest.$who"
					else
						c="-	-	-	-	-	$(grep -o '"name":"gpu.job"' "$f" | wc -l)"
					fi
					printf '%s\t%s\t%s\t%s\t%s\n' "$style" "$cond" "$who" "$bytes" "$c" >>"$OUT/counts.tsv"
				fi
				rm -f "$f"
			done
			if [ "$cond" = proto ] && [ "$r" = 1 ]; then
				if cmp -s "$TMP/digest.before" "$TMP/digest.after"; then
					echo "$style: before and after protobuf files hold the same spans (digest $(cat "$TMP/digest.after"))" >>"$OUT/events.txt"
				else
					echo "$style: before and after protobuf files hold DIFFERENT spans" >>"$OUT/events.txt"
				fi
			fi
		done
	done
done
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/events.txt"

# medians per style, condition and binary
median() { sort -n | awk '{v[NR]=$1} END{if(NR%2) print v[(NR+1)/2]; else printf "%.2f\n", (v[NR/2]+v[NR/2+1])/2}'; }
{
	echo "| capture | output | binary | CPU s (user+sys) | sys s | events/CPU-s | wall s | peak RSS MB |"
	echo "|---|---|---|---|---|---|---|---|"
	for style in $(cut -f1 "$OUT/runs.tsv" | tail -n +2 | sort -u); do
		for cond in none json proto; do
			for who in before after; do
				rows=$(awk -F'\t' -v s="$style" -v c="$cond" -v w="$who" '$1==s && $3==c && $4==w' "$OUT/runs.tsv")
				cpu=$(awk -F'\t' '{print $6+$7}' <<<"$rows" | median)
				sys=$(cut -f7 <<<"$rows" | median)
				eps=$(cut -f10 <<<"$rows" | median)
				wall=$(cut -f5 <<<"$rows" | median)
				rss=$(awk -F'\t' '{printf "%.0f\n", $8/1024}' <<<"$rows" | median)
				echo "| $style | $cond | $who | $cpu | $sys | $eps | $wall | $rss |"
			done
		done
	done
} >"$OUT/summary.md"
cat "$OUT/summary.md"
