# Sourced by the tests of the benchmarks that need real Marian (MARIAN): without it a run says
# so, exits 0 and makes no work folder; an unknown argument exits 2. Needs fail() of the caller.
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
