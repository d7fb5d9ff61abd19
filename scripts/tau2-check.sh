#!/usr/bin/env bash
# Optional check of the tau2-bench gate on one domain (not in the default tests or .ci/run).
# Installs tau2-bench from a local checkout TAU2_DIR (Python >= 3.12) and state-ladder into
# their own venv, then runs, with no model, on DOMAIN (airline, retail or telecom; default
# airline):
#   1. the compile path on the scripted compiler (it answers with our reference rules), then
#      gold replay: every gold write action through the gate under the reference rules and
#      under that compile;
#   2. the gold-replay agent scored by tau2-bench, ungated (none) and gated (enforce);
#   3. a short run of every rung against the scripted endpoint (scripted/tau2-naive agent,
#      scripted/tau2-user user simulator, over HTTP on loopback through litellm); not for
#      telecom, whose scripted agent never writes (docs/tau2.md).
# Retail is scored with tau2-bench's `env` evaluation (database only): 40 of its tasks carry
# natural-language assertions that need an LLM judge.
#   bash scripts/tau2-check.sh TAU2_DIR [--domain DOMAIN]   (or: just tau2-check TAU2_DIR [--domain DOMAIN])
set -euo pipefail
USAGE="usage: tau2-check.sh TAU2_DIR [--domain airline|retail|telecom]"
TAU2_DIR=${1:?$USAGE (TAU2_DIR: a checkout of sierra-research/tau2-bench)}
shift
DOMAIN=airline
while [ $# -gt 0 ]; do
  case "$1" in
    --domain) DOMAIN=${2:?$USAGE}; shift 2 ;;
    --domain=*) DOMAIN=${1#--domain=}; shift ;;
    *) echo "tau2-check: unknown argument $1 ($USAGE)" >&2; exit 2 ;;
  esac
done
case "$DOMAIN" in
  airline) DATA=db.json; EVALUATION=all ;;
  retail) DATA=db.json; EVALUATION=env ;;
  telecom) DATA=tasks.json; EVALUATION=all ;;
  *) echo "tau2-check: unknown domain $DOMAIN (one of airline, retail, telecom)" >&2; exit 2 ;;
esac
if [ ! -d "$TAU2_DIR" ]; then
  echo "tau2-check: no directory $TAU2_DIR" >&2; exit 2
fi
TAU2_DIR=$(cd "$TAU2_DIR" && pwd)
cd "$(dirname "$0")/.."
if [ ! -f "$TAU2_DIR/src/tau2/registry.py" ]; then
  echo "tau2-check: $TAU2_DIR is not a tau2-bench checkout (no src/tau2/registry.py)" >&2; exit 2
fi
if [ ! -s "$TAU2_DIR/data/tau2/domains/$DOMAIN/$DATA" ]; then
  echo "tau2-check: $TAU2_DIR has no data/tau2/domains/$DOMAIN/$DATA (docs/tau2.md: where to get it)" >&2; exit 2
fi
PY=$(bash scripts/tau2-python.sh) || exit 2
VENV=${TAU2_VENV:-.venv-tau2}
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import tau2.registry, tau2gate" 2>/dev/null; then
  "$VENV/bin/pip" install -q -e "$TAU2_DIR" -e .
fi
export LITELLM_LOCAL_MODEL_COST_MAP=True  # no network fetch of litellm's price map
export TAU2_DATA_DIR=${TAU2_DATA_DIR:-$TAU2_DIR/data}
TASKS=${TASKS:-10}
OUT=runs/tau2-check/$DOMAIN
mkdir -p "$OUT"
A=("$VENV/bin/python" -m tau2gate.adapter)
"${A[@]}" compile --domain "$DOMAIN" --scripted --out "$OUT/compiled.json"
"${A[@]}" gold-replay --domain "$DOMAIN" --split base --rules "$OUT/compiled.json"
"${A[@]}" run --domain "$DOMAIN" --gold --rungs none,enforce --split base \
  --evaluation "$EVALUATION" --concurrency 2 --out "$OUT/gold"
if [ "$DOMAIN" != telecom ]; then
  "${A[@]}" run --domain "$DOMAIN" --scripted --rungs none,shown,advisory,enforce \
    --split base --tasks "$TASKS" --evaluation "$EVALUATION" --concurrency 2 --out "$OUT/scripted"
fi
