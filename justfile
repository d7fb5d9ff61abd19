# state-ladder recipes. `just --list` shows them.

# Create .venv and install the project with every extra.
install:
    python3 -m venv .venv
    .venv/bin/pip install -q --upgrade pip
    .venv/bin/pip install -q -e '.[dev]'

# The README's test command (every core: pytest-xdist).
test:
    .venv/bin/python -m pytest -q

# The pure packages alone (protocol, scoring, the layering checks): under a minute.
test-fast:
    .venv/bin/python -m pytest -q tests/protocol tests/scoring tests/architecture

# ruff and mypy (strict on the packages and the tests).
lint:
    .venv/bin/ruff check .
    .venv/bin/ruff format --check .
    .venv/bin/mypy

# The main job on the embedded scripted endpoint.
demo:
    .venv/bin/ladder demo --out runs/demo

# Every benchmark case: one table, one JSON line per case.
bench:
    .venv/bin/python -m bench

# The slow reliability drills (kill drill, soak).
drill:
    .venv/bin/python -m pytest -q -m slow -o addopts='--import-mode=importlib'

# Optional: the runner against a real small model via llama.cpp on loopback:
# smollm2 (SmolLM2-135M-Instruct) or gemma3 (Gemma 3 270M base; scripts/e2e-real.sh).
e2e-real MODEL="smollm2":
    bash scripts/e2e-real.sh {{MODEL}}

# Optional: the tau2-bench gate check against a local tau2-bench checkout (own venv);
# `just tau2-check DIR --domain retail` (airline, retail or telecom; default airline).
tau2-check TAU2_DIR *ARGS:
    bash scripts/tau2-check.sh {{TAU2_DIR}} {{ARGS}}
