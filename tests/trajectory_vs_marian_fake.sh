#!/usr/bin/env bash
# bench/trajectory-vs-marian's verdict, with this program in real Marian's place: a stand-in that
# drops --pretrained-model draws the same initial model from the same seed, so its Costs are this
# program's and the bench passes; the same stand-in at 3x the learning rate leaves the Costs at
# update 3 (update 1 has rate 0 on both sides) and the bench exits 1 naming the update. Without
# MARIAN it says so and exits 0; an unknown argument exits 2.
set -euo pipefail
root=$1 ours=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bench=$root/bench/trajectory-vs-marian
fail() { echo "trajectory-vs-marian: $1"; echo "$out"; exit 1; }

# standin DIR EXTRA-ARGS: DIR/marian runs this program without --pretrained-model
standin() {
  mkdir -p "$1"
  cat > "$1/marian" <<SCRIPT
#!/usr/bin/env bash
args=() skip=0
for a in "\$@"; do
  if [ \$skip = 1 ]; then skip=0; continue; fi
  if [ "\$a" = --pretrained-model ]; then skip=1; continue; fi
  args+=("\$a")
done
exec "$ours/marian" "\${args[@]}" $2
SCRIPT
  chmod +x "$1/marian"
}
standin "$work/same" ""
standin "$work/faster" "--learn-rate 0.003"
# a small transformer on the synthetic corpus, one vocabulary made by the first run
/usr/bin/python3 "$root/scripts/make-synthetic-corpus" "$work/data" --train 2000 > /dev/null
d=$work/data
small="--train-sets $d/train.src $d/train.trg --valid-sets $d/valid.src $d/valid.trg --vocabs $d/joint.yml $d/joint.yml
  --dim-vocabs 0 0 --dim-emb 32 --transformer-dim-ffn 64 --transformer-heads 2 --enc-depth 1 --dec-depth 1"
out=$(MARIAN=$work/same "$bench" --updates 4 --strict 4 --work "$work/w1" --args "$small") || fail "the same program failed"
echo "$out" | grep -q 'the first 4 updates agree within 1e-5' || fail "no verdict"
[ "$(echo "$out" | grep -cE '^ +[1-4] +[0-9.]+ +[0-9.]+ +0\.00e\+00$')" = 4 ] || fail "not 4 equal Costs"
set +e
out=$(MARIAN=$work/faster "$bench" --updates 4 --strict 4 --work "$work/w2" --args "$small")
status=$?
set -e
[ $status = 1 ] || fail "a 3x learning rate passed (exit $status)"
echo "$out" | grep -qE '^ +2 .* 0\.00e\+00$' || fail "update 2 differs, though update 1 has rate 0"
echo "$out" | grep -qE '^ +3 .*<- over 1e-5$' || fail "update 3 not flagged"
echo "$out" | grep -q 'differ by more than 1e-5 within the first 4 updates' || fail "no failure verdict"

out=$(MARIAN= "$bench" --work "$work/none")
echo "$out" | grep -q 'skipped: set MARIAN' || fail "no skip message"
[ ! -e "$work/none" ] || fail "the skipped run made its work folder"
set +e
MARIAN= "$bench" --no-such-option > /dev/null 2>&1
[ $? = 2 ] || fail "an unknown argument did not exit 2"
echo "trajectory-vs-marian: ok"
