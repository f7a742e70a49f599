#!/usr/bin/env bash
# --valid-script-path for Multi30k (marian-examples' scripts/validate.sh, for SentencePiece
# output): prints the BLEU of the translation file $1 against the validation references
# ($MULTI30K_DATA/val.en.gz, by default examples/multi30k/data).
set -euo pipefail
here=$(dirname "$0")
"${MARIAN_BIN:-$here/../../build/src}/marian-evaluate" --metric bleu --reference <(zcat "${MULTI30K_DATA:-$here/data}/val.en.gz") < "$1" |
  awk '{print $3}'
