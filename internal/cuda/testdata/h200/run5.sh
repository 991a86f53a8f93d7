#!/bin/bash
# Fifth H200 pass: CUDA graphs through `ghostdriver cuda` (graph.py: one capture, 200 replays,
# each synchronized). Needs bin/ghostdriver-cuda.
H=internal/cuda/testdata/h200
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/run5.log) 2>&1
LIBS="--library /usr/local/nvidia/lib64/libcuda.so.1 --library /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13"
set -x
bin/ghostdriver-cuda cuda $LIBS --output /tmp/graph_spans.json -- python3 $H/graph.py
python3 $H/spans_check.py /tmp/graph_spans.json > $OUT/graph_check.json; head -c 3000 $OUT/graph_check.json
