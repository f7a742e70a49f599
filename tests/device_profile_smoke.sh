#!/usr/bin/env bash
# bench/device-profile on a tiny model of the recipe's type (the recipe's file, its sizes
# overridden, a synthetic corpus): a row per mini-batch size, with the words behind each
# (four times the sentences, about four times the words) and a time above zero; a failing
# training run fails the profile.
set -euo pipefail
root=$1
bin=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; cat "$work/p.yml" 2>/dev/null; exit 1; }
/usr/bin/python3 "$root/scripts/make-synthetic-corpus" "$work/data" --train 2000 > /dev/null
cat "$work/data/train.src" "$work/data/train.trg" | "$bin/marian-vocab" > "$work/vocab.yml"  # the recipe ties all embeddings
d=$work/data
tiny=(--cpu-threads 1 --train-sets "$d/train.src" "$d/train.trg" --valid-sets "$d/valid.src" "$d/valid.trg"
  --vocabs "$work/vocab.yml" "$work/vocab.yml" --dim-emb 32 --transformer-dim-ffn 64
  --transformer-heads 2 --enc-depth 1 --dec-depth 1)
MARIAN=$bin/marian SIZES="8 32" UPDATES=24 "$root/bench/device-profile" "$work/p.yml" "${tiny[@]}" > /dev/null 2>&1 ||
  fail "the profile did not run"
grep -q '^device: "cpu0"$' "$work/p.yml" || fail "no device line"
grep -Eq '^parameters: [1-9][0-9]*$' "$work/p.yml" || fail "no parameter count"
rows=$(grep -E '^  - \{sentences: [0-9]+, target-words: [0-9.]+, seconds-per-update: [0-9.]+\}$' "$work/p.yml" | tr -d '{},' |
  awk '{print $3, $5, $7}')
[ "$(wc -l <<< "$rows")" = 2 ] || fail "not one row per size"
read -r n1 w1 s1 <<< "$(sed -n 1p <<< "$rows")"
read -r n2 w2 s2 <<< "$(sed -n 2p <<< "$rows")"
[ "$n1 $n2" = "8 32" ] || fail "sizes $n1 $n2"
awk -v a="$w1" -v b="$w2" 'BEGIN {exit !(a > 8 && b > 3 * a && b < 5 * a)}' || fail "words per update $w1 and $w2"
awk -v a="$s1" -v b="$s2" 'BEGIN {exit !(a > 0 && b > 0)}' || fail "seconds per update $s1 and $s2"
# a run that fails (an option marian refuses) fails the profile, naming what failed
if MARIAN=$bin/marian SIZES="8" UPDATES=12 "$root/bench/device-profile" "$work/q.yml" "${tiny[@]}" --no-such-option \
    > "$work/q.log" 2>&1; then fail "a failing run made a profile"; fi
grep -q "no-such-option" "$work/q.log" || fail "the failing run's error was not shown"
[ ! -e "$work/q.yml" ] || fail "a failing run left a profile"
echo "device-profile: rows $n1/$w1/$s1 and $n2/$w2/$s2"
