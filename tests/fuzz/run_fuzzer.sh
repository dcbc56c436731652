#!/bin/sh
# Runs a libFuzzer harness for a fixed number of inputs over its checked-in seed corpus; new
# inputs it finds go to a scratch corpus in the build tree (the checked-in one stays as it is).
# A crash fails the test and leaves the crashing input in the scratch directory.
# usage: run_fuzzer.sh HARNESS SEED-DIR SCRATCH-DIR RUNS
set -u
harness=$1 seeds=$2 scratch=$3 runs=$4
mkdir -p "$scratch"
log="$scratch.log"
"$harness" -runs="$runs" -seed=1 -max_len=4096 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$scratch/" "$scratch" "$seeds" >"$log" 2>&1
status=$?
tail -n 15 "$log"
if [ "$status" -ne 0 ]; then
  echo "$(basename "$harness"): crashed (exit $status); input saved in $scratch/"
  exit 1
fi
echo "$(basename "$harness"): $runs libFuzzer runs, 0 crashes"
