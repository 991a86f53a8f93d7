#!/usr/bin/env bash
# `make dist`: build the collector distribution (ocb, builder-config.yaml) and say what it is
# doing. ocb itself is silent for minutes on a first build (it captures the go commands'
# output), so it runs with --skip-compilation (generate the sources, fetch the modules; a
# heartbeat shows the module cache growing), and the compile step is run here with the
# flags ocb v0.165.0 uses (cmd/builder/internal/builder/main.go, Compile: -trimpath,
# -ldflags="-s -w", CGO_ENABLED=0; the Makefile's VERSION_LDFLAGS added to -ldflags, as it
# passes them to ocb's --ldflags) plus -v, whose package lines are counted into a progress
# line. Same binary as `builder --config builder-config.yaml --ldflags="-s -w $VERSION_LDFLAGS"`.
set -euo pipefail
: "${OCB:?}" "${DIST:?}"
GO=${GO:-go}
# Times are counted from MAKE_RUN_T0 (unix seconds) when make run started this build.
start=$(( SECONDS - ( $(date +%s) - ${MAKE_RUN_T0:-$(date +%s)} ) ))
stamp() { local s=$((SECONDS - start)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
say() { printf '   [%s] %s\n' "$(stamp)" "$*"; }
cachesize() { du -sm "$($GO env GOMODCACHE)" 2>/dev/null | cut -f1; }

out=$(dirname "$DIST")
mkdir -p "$out"
log=$out/ocb.log
say "ocb: generating the distribution's sources and fetching its Go modules (log: $log)"
"$OCB" --config builder-config.yaml --skip-compilation >"$log" 2>&1 &
ocb=$!
trap 'kill $ocb 2>/dev/null || true' EXIT
while kill -0 $ocb 2>/dev/null; do
  for _ in $(seq 1 15); do kill -0 $ocb 2>/dev/null && sleep 1; done
  kill -0 $ocb 2>/dev/null && say "ocb: fetching modules, module cache $(cachesize) MiB"
done
if ! wait $ocb; then
  cat "$log" >&2
  echo "ocb failed (output above)" >&2
  exit 1
fi
trap - EXIT

cd "$out"
total=$($GO list -deps . 2>/dev/null | wc -l)
say "compiling $(basename "$DIST"): $total packages (std included); only those not in the build cache are compiled and counted"
errs=build-output.log
n=0
last=$SECONDS
# go build -v prints each package as it is compiled; anything else it prints (a compiler
# message, a download) goes to $errs and is shown if the build fails.
set +e
CGO_ENABLED=0 $GO build -v -trimpath -o "$(basename "$DIST")" -ldflags="-s -w ${VERSION_LDFLAGS:-}" -gcflags= . 2>&1 | {
  : >"$errs"
  while IFS= read -r line; do
    case $line in
      *' '* | *:*) printf '%s\n' "$line" >>"$errs" ;;
      *) n=$((n + 1)) ;;
    esac
    if ((SECONDS - last >= 10)); then
      say "compiling: $n of at most $total packages compiled"
      last=$SECONDS
    fi
  done
  say "compiled $n packages"
}
rc=${PIPESTATUS[0]}
set -e
if ((rc != 0)); then
  cat "$errs" >&2
  echo "compiling the distribution failed (go build exit $rc; output above, also in $out/$errs)" >&2
  exit "$rc"
fi
say "built $DIST"
