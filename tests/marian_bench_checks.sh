# Sourced by the tests of the benchmarks that need real Marian (MARIAN): without it a run says
# so, exits 0 and makes no work folder; an unknown argument exits 2. Needs fail() of the caller.

# standin DIR PROGRAM EXTRA-ARGS: DIR/PROGRAM runs this program's PROGRAM (in $ours, the build
# folder under test) with EXTRA-ARGS last, in real Marian's place
standin() {
  mkdir -p "$1"
  printf '#!/usr/bin/env bash\nexec "%s/%s" "$@" %s\n' "$ours" "$2" "$3" > "$1/$2"
  chmod +x "$1/$2"
}
# expect_skip_and_usage_error BENCH WORK_FOLDER
expect_skip_and_usage_error() {
  local skip status
  skip=$(MARIAN= "$1" --work "$2")
  echo "$skip" | grep -q 'skipped: set MARIAN' || fail "no skip message"
  [ ! -e "$2" ] || fail "the skipped run made its work folder"
  status=0
  MARIAN= "$1" --no-such-option > /dev/null 2>&1 || status=$?
  [ "$status" = 2 ] || fail "an unknown argument did not exit 2"
}
