#!/usr/bin/env bash
# The tau2-bench gate with a real model on one domain (the recipe behind docs/tau2.md's
# "A real model"): the agent model compiles the domain's policy, the compile is audited by
# gold replay, then the four rungs run on every task of the base split with the same tasks,
# trials and seeds, agent and user simulator on one OpenAI-compatible endpoint.
#   TAU2_VENV=.venv-tau2 bash scripts/tau2-model.sh BASE_URL AGENT_MODEL USER_MODEL DOMAIN
# Environment: TRIALS (default 4), CONCURRENCY (default 32), JUDGE_MODEL (retail only: the
# served model that judges tau2-bench's natural-language assertions; without it retail is
# scored with the `env` evaluation, the database only), RULES (a compiled rule file to use
# instead of compiling), OUT (default runs/tau2/DOMAIN/AGENT_MODEL).
set -euo pipefail
USAGE="usage: tau2-model.sh BASE_URL AGENT_MODEL USER_MODEL airline|retail|telecom"
BASE_URL=${1:?$USAGE}
AGENT=${2:?$USAGE}
USER_MODEL=${3:?$USAGE}
DOMAIN=${4:?$USAGE}
case "$DOMAIN" in
  airline|telecom|retail) ;;
  *) echo "tau2-model: unknown domain $DOMAIN ($USAGE)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
VENV=${TAU2_VENV:-.venv-tau2}
if ! "$VENV/bin/python" -c "import tau2.registry, tau2gate" 2>/dev/null; then
  echo "tau2-model: $VENV has no tau2-bench and state-ladder (run just tau2-check first)" >&2; exit 2
fi
export LITELLM_LOCAL_MODEL_COST_MAP=True
OUT=${OUT:-runs/tau2/$DOMAIN/${AGENT//\//_}}
mkdir -p "$OUT"
A=("$VENV/bin/python" -m tau2gate.adapter)
RULES=${RULES:-}
if [ -z "$RULES" ]; then
  RULES=$OUT/compiled.json
  "${A[@]}" compile --domain "$DOMAIN" --base-url "$BASE_URL" --model "$AGENT" --out "$RULES"
fi
"${A[@]}" gold-replay --domain "$DOMAIN" --split base --rules "$RULES" | tee "$OUT/gold-replay.txt"
EVAL=(--evaluation all)
if [ "$DOMAIN" = retail ]; then
  if [ -n "${JUDGE_MODEL:-}" ]; then EVAL=(--evaluation all --judge-model "$JUDGE_MODEL")
  else EVAL=(--evaluation env); fi
fi
"${A[@]}" run --domain "$DOMAIN" --rules "$RULES" --rungs none,shown,advisory,enforce \
  --base-url "$BASE_URL" --agent-model "$AGENT" --user-model "$USER_MODEL" "${EVAL[@]}" \
  --split base --trials "${TRIALS:-4}" --concurrency "${CONCURRENCY:-32}" --out "$OUT" \
  | tee "$OUT/report.txt"
