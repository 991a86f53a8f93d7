#!/usr/bin/env bash
# Collector before/after: two otelcol-ghostdriver binaries, source: replay -> file exporter,
# json and proto, interleaved, ROUNDS rounds (order alternating). Per run: CPU (user+sys) and
# peak RSS from /usr/bin/time up to the log's end of capture; the file's gpu.job spans counted.
set -euo pipefail
BEFORE=$1 AFTER=$2 OUT=$3 CAP=$4 EVENTS=$5
ROUNDS=${ROUNDS:-3}
EPOCH=1700000000000000000
mkdir -p "$OUT"; T=$(mktemp -d)
printf 'style\tround\tformat\tbinary\tend_of_capture_s\tuser_s\tsys_s\tpeak_rss_kb\tevents_per_cpu_s\tfile_bytes\tjob_spans\tlogged_jobs_completed\twarnings\n' >"$OUT/collector.tsv"
style=$(basename "$CAP" | sed -n 's/.*cap-\([0-9.]*\)-.*/\1/p')
for r in $(seq "$ROUNDS"); do
  order="before after"; [ $((r % 2)) = 0 ] && order="after before"
  for fmt in json proto; do
    for who in $order; do
      bin=$BEFORE; [ "$who" = after ] && bin=$AFTER
      f=$T/out.$fmt; rm -f "$f"
      cat >"$T/c.yaml" <<EOC
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
EOC
      echo "collector ab: $style round $r $fmt $who" >&2
      start=$(date +%s.%N)
      /usr/bin/time -f '%e %U %S %M' -o "$T/time" "$bin" --config "$T/c.yaml" 2>"$T/log" &
      tp=$!
      until grep -q 'end of capture\|source stopped' "$T/log"; do
        kill -0 "$tp" 2>/dev/null || { tail -5 "$T/log"; exit 1; }
        sleep 0.1
      done
      end=$(date +%s.%N)
      kill -TERM "$(pgrep -P "$tp")"; wait "$tp" || true
      read -r _ user sys rss < <(tail -1 "$T/time")
      eoc=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b-a}')
      eps=$(awk -v e="$EVENTS" -v u="$user" -v s="$sys" 'BEGIN{printf "%.0f", e/(u+s)}')
      if [ "$fmt" = json ]; then js=$(grep -o '"name":"gpu.job"' "$f" | wc -l); else js=$(/work/tmp/ab/otlpcount -format proto "$f" | cut -f3); fi
      logged=$(sed -n 's/.*"jobs_completed": \([0-9]*\).*/\1/p' "$T/log" | head -1)
      warns=$(grep -c '\bwarn\b' "$T/log" || true)
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$style" "$r" "$fmt" "$who" "$eoc" "$user" "$sys" "$rss" "$eps" "$(stat -c %s "$f")" "$js" "${logged:--}" "$warns" >>"$OUT/collector.tsv"
      cp "$T/log" "$OUT/collector-$style-$r-$fmt-$who.log"
      rm -f "$f"
    done
  done
done
rm -rf "$T"
