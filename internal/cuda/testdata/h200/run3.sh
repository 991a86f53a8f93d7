#!/bin/bash
# Third H200 pass: CUDA spans and metrics through the final CLI (`ghostdriver cuda`), the
# PyTorch workload of run2 (n=4096, K=20, 300 iterations) and the Xid kernel.
# Needs bin/ghostdriver-cuda (CGO_ENABLED=0 go build -o bin/ghostdriver-cuda ./cmd/ghostdriver).
H=internal/cuda/testdata/h200
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/run3.log) 2>&1
GD=bin/ghostdriver-cuda
LIBS="--library /usr/local/nvidia/lib64/libcuda.so.1 --library /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13"
set -x
$GD cuda $LIBS --output $OUT/spans.json --metrics-output $OUT/metrics.json -- python3 $H/workload.py $OUT/wl.json
python3 $H/spans_check.py $OUT/spans.json $OUT/metrics.json > $OUT/check.json; head -c 8000 $OUT/check.json
$GD cuda $LIBS --output $OUT/xid_spans.json -- python3 $H/xid.py
python3 $H/spans_check.py $OUT/xid_spans.json > $OUT/xid_check.json; head -c 4000 $OUT/xid_check.json
gzip $OUT/spans.json
