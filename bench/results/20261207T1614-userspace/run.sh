#!/usr/bin/env bash
# Old (fc4a800 + internal/probe/userspace_bench_test.go copied in) vs new (this commit) test
# binaries of internal/probe, BenchmarkUserSpaceNoSpans, interleaved (the order alternates
# per round), default GOGC. usage: run.sh OLD.test NEW.test ROUNDS OUT.tsv
set -euo pipefail
old=$1 new=$2 rounds=$3 out=$4
echo -e "round\tbinary\titerations\tallocs_per_job\tcpu_ns_per_job\twall_ns_per_job\tloadavg1" >"$out"
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then order="old new"; else order="new old"; fi
  for b in $order; do
    bin=$old; [ "$b" = new ] && bin=$new
    line=$("$bin" -test.run '^$' -test.bench UserSpaceNoSpans -test.benchtime 400x | grep '^BenchmarkUserSpaceNoSpans')
    set -- $line
    echo -e "$r\t$b\t$2\t$3\t$5\t$7\t$(cut -d' ' -f1 /proc/loadavg)" >>"$out"
  done
done
