#!/bin/bash
# Seventh H200 pass (issue 15): run6.sh's conditions b, p, t, e, x only, five alternated
# rounds (run6's three rounds were noisy: the no-tracer runs alone spread 1111-1384 ms).
# Writes $OUT/run7.log and $OUT/levers7.txt. About 10 minutes: more than one device call
# allows (the 2026-12-03 run ran past 590 s in its last round; ROUNDS=4 fits).
CONDS="b p t e x" NAME=run7 ROUNDS=${ROUNDS:-5} exec bash "$(dirname "$0")/run6.sh"
