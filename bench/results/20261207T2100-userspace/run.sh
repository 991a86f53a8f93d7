#!/usr/bin/env bash
# User space without span output, old vs new, interleaved (BENCHMARKS.md, "User space a job
# without span output", 2026-12-07 21:00). OLD.test and NEW.test: `go test -c ./internal/probe/`
# at the two commits (old-commit.txt, new-commit.txt). The order alternates per round: old
# first in odd rounds, new first in even ones (A B, B A, ...). The load average before each
# run goes into every row.
#   inproc: BenchmarkUserSpaceNoSpans, 400 iterations of 4096 jobs a run        -> inproc.tsv
#   e2e:    TestRingGeneratorLoss, no span output, 100 000 jobs/s, E2E_S seconds -> e2e.tsv
#   cost:   TestRingGeneratorLoss, the default sampler, stage spans in pdata + protobuf,
#           metrics collected and encoded, tick 10 ms, 10 000 and 1 000 jobs/s,
#           COST_S seconds                                                       -> cost.tsv
# usage: run.sh OLD.test NEW.test OUTDIR ROUNDS "PHASES"
set -euo pipefail
old=$(realpath "$1") new=$(realpath "$2") out=$(realpath "$3") rounds=$4 phases=${5:-"inproc e2e cost"}
e2e_s=${E2E_S:-60} cost_s=${COST_S:-30}
mkdir -p "$out/raw"
order() { if [ $(($1 % 2)) = 1 ]; then echo old new; else echo new old; fi; }
binof() { if [ "$1" = old ]; then echo "$old"; else echo "$new"; fi; }
load() { cut -d' ' -f1 /proc/loadavg; }
inproc() {
  local tsv=$out/inproc.tsv
  [ -s "$tsv" ] || echo -e "round\tbinary\titerations\tallocs_per_job\tcpu_ns_per_job\twall_ns_per_job\tload_before\tload_after" >"$tsv"
  for r in $(seq 1 "$rounds"); do
    for b in $(order "$r"); do
      local l0 line; l0=$(load)
      line=$("$(binof $b)" -test.run '^$' -test.bench UserSpaceNoSpans -test.benchtime 400x | grep '^BenchmarkUserSpaceNoSpans')
      set -- $line
      echo -e "$r\t$b\t$2\t$3\t$5\t$7\t$l0\t$(load)" >>"$tsv"
    done
  done
}
ring() { # round binary tsv rate seconds sampling spans metrics tick
  local f=$out/raw/$1-$2-$4-$6-$7.tsv l0; l0=$(load)
  env GHOSTDRIVER_RINGGEN_OUT=$f GHOSTDRIVER_RINGGEN_RATES=$4 GHOSTDRIVER_RINGGEN_SECONDS=$5 \
    GHOSTDRIVER_RINGGEN_SAMPLING=$6 GHOSTDRIVER_RINGGEN_SPANS=$7 ${8:+GHOSTDRIVER_RINGGEN_METRICS=$8} ${9:+GHOSTDRIVER_RINGGEN_TICK=$9} \
    "$(binof $2)" -test.run '^TestRingGeneratorLoss$' -test.count 1 -test.v >>"$out/test.log" 2>&1 || echo "FAIL $f" >>"$out/test.log"
  [ -s "$3" ] || echo -e "round\tbinary\tload_before\t$(head -1 "$f")" >"$3"
  echo -e "$1\t$2\t$l0\t$(tail -1 "$f")" >>"$3"
}
for ph in $phases; do
  case $ph in
  inproc) inproc ;;
  e2e) for r in $(seq 1 "$rounds"); do for b in $(order "$r"); do ring "$r" $b "$out/e2e.tsv" 100000 "$e2e_s" off none; done; done ;;
  cost) for r in $(seq 1 "$rounds"); do for rate in 10000 1000; do for b in $(order "$r"); do
          ring "$r" $b "$out/cost.tsv" $rate "$cost_s" default stages proto 10ms; done; done; done ;;
  esac
done
