#!/usr/bin/env bash
# fuzz.sh PKG:TARGET[:MINTIME]...: run each fuzz target for FUZZTIME at FUZZPARALLEL workers,
# with FUZZMINTIME (or the target's own MINTIME) as the budget to minimize each new input
# (Go's default, a minute per input, leaves a fresh machine's workers minimizing instead
# of fuzzing; a target whose execution is slow takes a count, 5x), then print one
# line per target: its package, elapsed time, executions and new corpus entries. A finding
# lands in the package's testdata/fuzz; the script runs every target and fails at the end
# if any target failed. Logs: FUZZLOG (a directory, default a temporary one). FUZZCACHE, a
# directory, holds the generated corpora instead of Go's fuzz cache: FUZZCACHE=$(mktemp -d)
# is a campaign from an empty cache that leaves the shared one alone.
set -uo pipefail
fuzztime=${FUZZTIME:-2m}
mintime=${FUZZMINTIME:-2s}
parallel=${FUZZPARALLEL:-2}
logdir=${FUZZLOG:-$(mktemp -d)}
mkdir -p "$logdir"
go=${GO:-go}

summary=()
failed=0
for spec in "$@"; do
  pkg=${spec%%:*}
  target=${spec#*:}
  min=$mintime
  if [[ $target == *:* ]]; then
    min=${target#*:}
    target=${target%%:*}
  fi
  log="$logdir/$target.log"
  echo "fuzz: $target in $pkg for $fuzztime at -parallel $parallel, minimize $min (log $log)"
  cache=()
  if [ -n "${FUZZCACHE:-}" ]; then
    cache=("-test.fuzzcachedir=$FUZZCACHE/${pkg#./}")
  fi
  "$go" test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$min" \
    -parallel "$parallel" "$pkg" "${cache[@]}" >"$log" 2>&1 # test binary flags after the package
  rc=$?
  # The last progress line holds the totals: "fuzz: elapsed: 30m0s, execs: 1233202 (685/sec), new interesting: 12 (total: 140)".
  last=$(grep -E '^fuzz: elapsed: .*execs:' "$log" | tail -n 1)
  elapsed=$(sed -n 's/^fuzz: elapsed: \([^,]*\),.*/\1/p' <<<"$last")
  execs=$(sed -n 's/.*execs: \([0-9]*\) .*/\1/p' <<<"$last")
  news=$(sed -n 's/.*new interesting: \(.*\)$/\1/p' <<<"$last")
  result=ok
  if [ $rc -ne 0 ]; then
    result=FAIL
    failed=1
    tail -n 40 "$log"
  fi
  summary+=("$(printf '%-4s %-34s %-18s elapsed %-8s execs %-10s minimize %-4s new interesting %s' "$result" "$target" "$pkg" "${elapsed:-?}" "${execs:-?}" "$min" "${news:-?}")")
done

echo
echo "fuzz summary (FUZZTIME=$fuzztime FUZZPARALLEL=$parallel FUZZMINTIME=$mintime, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)):"
printf '%s\n' "${summary[@]}"
exit $failed
