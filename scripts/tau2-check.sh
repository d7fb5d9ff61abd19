#!/usr/bin/env bash
# Optional check of the tau2-bench airline gate (not in the default tests or .ci/run).
# Installs tau2-bench from a local checkout TAU2_DIR (Python >= 3.12) and state-ladder into
# their own venv, then runs, with no model:
#   1. the compile path on the scripted compiler (it answers with our reference rules), then
#      gold replay: every gold write action through the gate under the reference rules and
#      under that compile;
#   2. the gold-replay agent scored by tau2-bench, ungated (none) and gated (enforce);
#   3. a short run of every rung against the scripted endpoint (scripted/tau2-naive agent,
#      scripted/tau2-user user simulator, over HTTP on loopback through litellm).
#   bash scripts/tau2-check.sh TAU2_DIR        (or: just tau2-check TAU2_DIR)
set -euo pipefail
TAU2_DIR=${1:?usage: tau2-check.sh TAU2_DIR (a checkout of sierra-research/tau2-bench)}
if [ ! -d "$TAU2_DIR" ]; then
  echo "tau2-check: no directory $TAU2_DIR" >&2; exit 2
fi
TAU2_DIR=$(cd "$TAU2_DIR" && pwd)
cd "$(dirname "$0")/.."
if [ ! -f "$TAU2_DIR/src/tau2/registry.py" ]; then
  echo "tau2-check: $TAU2_DIR is not a tau2-bench checkout (no src/tau2/registry.py)" >&2; exit 2
fi
if [ ! -s "$TAU2_DIR/data/tau2/domains/airline/db.json" ]; then
  echo "tau2-check: $TAU2_DIR has no data/tau2/domains/airline/db.json (the airline database)" >&2; exit 2
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
mkdir -p runs/tau2-check
"$VENV/bin/python" -m tau2gate.adapter compile --scripted --out runs/tau2-check/compiled.json
"$VENV/bin/python" -m tau2gate.adapter gold-replay --split base --rules runs/tau2-check/compiled.json
"$VENV/bin/python" -m tau2gate.adapter run --gold --rungs none,enforce --split base \
  --concurrency 2 --out runs/tau2-check/gold
"$VENV/bin/python" -m tau2gate.adapter run --scripted --rungs none,shown,advisory,enforce \
  --split base --tasks "$TASKS" --concurrency 2 --out runs/tau2-check/scripted
