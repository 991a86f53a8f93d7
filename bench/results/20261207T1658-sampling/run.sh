#!/usr/bin/env bash
# Sampling at the source, side by side (BENCHMARKS.md, "Sampling at the source: what it saves").
# TestRingGeneratorLoss of one test binary (go test -c -o probe.test ./internal/probe/ at the
# commit in commit.txt), one process a row, every job's spans (sampler off, A) beside the
# default sampler (B), interleaved: A B in odd rounds, B A in even ones.
#   phase idle: rate 0 (no generator: the reader and the pipeline's own polls and timers)
#               and 10 jobs/s, 30 s each; 10 000 jobs/s with no span output, 30 s
#   phase low:  10 000 and 1 000 jobs/s, 30 s each, ROUNDS rounds
#   phase high: 100 000 jobs/s, 60 s each, ROUNDS rounds
# Every row: stage spans (GHOSTDRIVER_RINGGEN_SPANS=stages: the SpanBuilder's pdata, then
# ptrace.ProtoMarshaler), metrics collected every 10 s and encoded (METRICS=proto), the
# generator's tick 10 ms (TICK=10ms). The load average before each run goes to load.log.
# usage: run.sh PROBE.test OUTDIR [ROUNDS] [PHASES]   (IDLE_S, LOW_S, HIGH_S: seconds a run)
set -euo pipefail
bin=$(realpath "$1") out=$(realpath "$2") rounds=${3:-3} phases=${4:-"idle low high"}
idle_s=${IDLE_S:-30} low_s=${LOW_S:-30} high_s=${HIGH_S:-60} # seconds a run (shorter: a smoke test)
mkdir -p "$out/raw"
export GHOSTDRIVER_RINGGEN_TICK=10ms GHOSTDRIVER_RINGGEN_METRICS=proto
tsv=$out/sidebyside.tsv
n=0
one() { # round rate seconds sampling spans
  n=$((n + 1))
  local f=$out/raw/$(printf %02d $n)-r$1-$2-$4-$5.tsv load
  load=$(cut -d' ' -f1 /proc/loadavg)
  echo -e "$(date -u +%T)\tround $1\trate $2\t${3}s\tsampling $4\tspans $5\tload $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.log"
  GHOSTDRIVER_RINGGEN_OUT=$f GHOSTDRIVER_RINGGEN_RATES=$2 GHOSTDRIVER_RINGGEN_SECONDS=$3 \
    GHOSTDRIVER_RINGGEN_SAMPLING=$4 GHOSTDRIVER_RINGGEN_SPANS=$5 \
    "$bin" -test.run '^TestRingGeneratorLoss$' -test.count 1 -test.v >>"$out/test.log" 2>&1 || echo "FAIL (test.log): $f" >>"$out/load.log"
  [ -s "$tsv" ] || echo -e "round\tload_before\t$(head -1 "$f")" >"$tsv"
  echo -e "$1\t$load\t$(tail -1 "$f")" >>"$tsv"
}
pair() { # round rate seconds
  if [ $(($1 % 2)) = 1 ]; then one "$@" off stages; one "$@" default stages
  else one "$@" default stages; one "$@" off stages; fi
}
for ph in $phases; do
  case $ph in
  idle) one 0 0 "$idle_s" default stages; one 0 10 "$idle_s" default stages; one 0 10000 "$idle_s" off none ;;
  low) for r in $(seq 1 "$rounds"); do pair "$r" 10000 "$low_s"; pair "$r" 1000 "$low_s"; done ;;
  high) for r in $(seq 1 "$rounds"); do pair "$r" 100000 "$high_s"; done ;;
  esac
done
