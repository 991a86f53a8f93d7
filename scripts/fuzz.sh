#!/usr/bin/env bash
# Runs every fuzz target of the module for a bounded time each (CI: `make test`).
#
#   FUZZTIME=10s scripts/fuzz.sh            # all targets
#   FUZZTIME=1m  scripts/fuzz.sh ./internal/ftrace/   # one package's targets
#
# Targets are found with `go test -list`, so a new Fuzz* function is picked up without
# editing this script. Each runs alone (`-run=^$ -fuzz=^Name$`): its committed corpus
# (testdata/fuzz/<Name>) and f.Add seeds first, then new inputs for FUZZTIME. A failure
# leaves the crashing input in testdata/fuzz/<Name>/ (commit it once fixed: it becomes a
# regression test of `go test`). The script prints the inputs tried per target and fails
# if any target failed. A target whose only failure is Go 1.26's "context deadline exceeded"
# at the FUZZTIME boundary (go.dev/issue/75804: no failing input, no panic, no t.Error) is
# run once more, and fails only if it fails again.
#
# Budget: 16 targets × 10s ≈ 3 min of fuzzing plus ≈ 1 min of instrumented builds on the
# 2-core CI machine; keep FUZZTIME × targets under ~4 min.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

# "FuzzX" lines followed by "ok <pkg> …" for each package that has fuzz targets.
mapfile -t listing < <($GO test -list '^Fuzz' "${pkgs[@]}" 2>&1)
targets=()
names=()
for line in "${listing[@]}"; do
	case "$line" in
	Fuzz*) names+=("$line") ;;
	ok*)
		pkg=$(awk '{print $2}' <<<"$line")
		for n in "${names[@]}"; do targets+=("$pkg $n"); done
		names=()
		;;
	"?"*|"") names=() ;;
	*)
		if [[ "$line" == FAIL* || "$line" == *"build failed"* ]]; then
			printf '%s\n' "${listing[@]}" >&2
			exit 1
		fi
		;;
	esac
done
[ ${#targets[@]} -gt 0 ] || { echo "fuzz.sh: no fuzz targets found" >&2; exit 1; }

# deadline_race LOG: the target's only failure is the coordinator's deadline race.
deadline_race() {
	grep -q 'context deadline exceeded' "$1" &&
		! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' "$1"
}

start=$SECONDS
failed=0
printf '%-50s %-34s %12s %s\n' package target execs result
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	out="$log/${pkg//\//_}.$name"
	# Minimizing a new interesting input may take up to 60 s by default, past FUZZTIME: the
	# fuzzer then reports "context deadline exceeded" though nothing failed. Bound it.
	run() { $GO test -run='^$' -fuzz="^${name}\$" -fuzztime="$FUZZTIME" -fuzzminimizetime="${FUZZMINIMIZETIME:-1s}" "$pkg" >"$out" 2>&1; }
	if run; then
		res=ok
	elif deadline_race "$out"; then
		# Go 1.26's fuzz coordinator can report "context deadline exceeded" at the FUZZTIME
		# boundary with nothing failing (go.dev/issue/75804, fixed in Go 1.27): no failing
		# input, no panic. Run the target once more; a real failure fails both times, and
		# writes its input to testdata/fuzz/.
		echo "fuzz.sh: $name: context deadline exceeded at the FUZZTIME boundary, no failing input (go.dev/issue/75804): running it again" >&2
		if run; then
			res="ok (after the coordinator's deadline race)"
		else
			res=FAIL
			failed=$((failed + 1))
		fi
	else
		res=FAIL
		failed=$((failed + 1))
	fi
	# The fuzzer prints "fuzz: elapsed: 10s, execs: 123456 (12345/sec), …"; the last one counts.
	execs=$(grep -o 'execs: [0-9]*' "$out" | tail -1 | awk '{print $2}')
	printf '%-50s %-34s %12s %s\n' "${pkg#github.com/ghostdriver/ghostdriver/}" "$name" "${execs:-?}" "$res"
	if [ "$res" = FAIL ]; then
		sed 's/^/    /' "$out" | tail -40
	fi
done
echo "fuzz.sh: ${#targets[@]} targets, FUZZTIME=$FUZZTIME, $((SECONDS - start))s, $failed failed"
[ "$failed" -eq 0 ]
