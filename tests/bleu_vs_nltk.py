#!/usr/bin/env python3
"""marian-evaluate against NLTK's corpus_bleu on 400 lines of words without punctuation, where
13a tokenization is a plain split, so both see the same tokens. Every hypothesis has at least 4
words: NLTK counts at least one n-gram per sentence where sacreBLEU counts none.
Exit 77 (skipped) without NLTK."""
import random, subprocess, sys, tempfile
try:
    from nltk.translate.bleu_score import corpus_bleu
except ImportError:
    print("python3-nltk is not installed: skipped")
    sys.exit(77)
evaluate = sys.argv[1]
rng = random.Random(11)
words = ["man", "woman", "dog", "street", "red", "runs", "sits", "the", "a", "on", "in", "with", "blue", "ball"]
refs, hyps = [], []
for _ in range(400):
    ref = [rng.choice(words) for _ in range(rng.randint(7, 14))]
    hyp = [w if rng.random() < 0.7 else rng.choice(words) for w in ref]
    if rng.random() < 0.3:
        hyp = hyp[: max(1, len(hyp) - rng.randint(1, 3))]
    elif rng.random() < 0.2:
        hyp = hyp + [rng.choice(words)]
    refs.append(ref)
    hyps.append(hyp)
expected = 100 * corpus_bleu([[r] for r in refs], hyps)
with tempfile.NamedTemporaryFile("w", suffix=".ref", delete=False) as f:
    f.write("".join(" ".join(r) + "\n" for r in refs))
out = subprocess.run([evaluate, "--reference", f.name], input="".join(" ".join(h) + "\n" for h in hyps),
                     capture_output=True, text=True, check=True).stdout
got = float(out.split()[2])
print(out.strip())
print(f"NLTK corpus_bleu: {expected:.4f}")
assert abs(got - expected) < 0.005, f"marian-evaluate {got} != NLTK {expected:.4f}"
