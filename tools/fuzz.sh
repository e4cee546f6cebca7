#!/usr/bin/env bash
# Run every libFuzzer target of a VEHICLEDATA_FUZZ build for SECONDS each.
#   tools/fuzz.sh BUILD_DIR SECONDS [NAME...]
# Seeds: cpp/fuzz/corpus/<name>/ (committed); new inputs go to BUILD_DIR/corpus/<name>/
# (not committed); a crash leaves BUILD_DIR/crashes/<name>/crash-* and fails the run
# (make it a regression test: a seed in cpp/fuzz/corpus/<name>/ plus a unit test).
# Prints one line per target: executions, seconds, new corpus size.  Exit 1 on a crash.
set -euo pipefail
build=${1:?build dir}
seconds=${2:?seconds per target}
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for src in "$root"/cpp/fuzz/fuzz_*.cpp; do n=$(basename "$src" .cpp); names+=("${n#fuzz_}"); done
fi
status=0
for name in "${names[@]}"; do
  exe="$build/fuzz_$name"
  if [ ! -x "$exe" ]; then echo "fuzz_$name: not built in $build" >&2; status=1; continue; fi
  work="$build/corpus/$name"; crashes="$build/crashes/$name"; seeds="$root/cpp/fuzz/corpus/$name"
  mkdir -p "$work" "$crashes" "$seeds"
  log="$build/fuzz_$name.log"
  start=$(date +%s.%N)
  if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "$exe" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -timeout=10 -print_final_stats=1 \
            -artifact_prefix="$crashes/" "$work" "$seeds" >"$log" 2>&1; then
    result=ok
  else
    result="CRASH (see $log and $crashes/)"; status=1
  fi
  end=$(date +%s.%N)
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  units=$(ls "$work" | wc -l)
  printf 'fuzz_%s: %s executions in %.1f s, corpus %s new inputs, %s\n' "$name" "$execs" "$(awk "BEGIN{print $end - $start}")" "$units" "$result"
done
exit $status
