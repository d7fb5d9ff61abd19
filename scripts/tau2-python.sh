#!/usr/bin/env bash
# The interpreter tau2-check.sh builds its venv with: $TAU2_PYTHON if set, else the first of
# python3.13, python3.12, python3 that actually runs and is Python >= 3.12 (a pyenv shim for a
# version that is not active is found by `command -v` but does not run). Prints its path on
# stdout and one line saying which on stderr; exit 2 with one line when none qualifies.
set -uo pipefail
if [ -n "${TAU2_PYTHON:-}" ]; then
  candidates=("$TAU2_PYTHON")
else
  candidates=(python3.13 python3.12 python3)
fi
tried=()
for c in "${candidates[@]}"; do
  path=$(command -v "$c" 2>/dev/null) || { tried+=("$c: not found"); continue; }
  version=$("$path" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3]); sys.exit(sys.version_info < (3, 12))' 2>/dev/null)
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "tau2-check: using $path (Python $version)" >&2
    echo "$path"
    exit 0
  fi
  if [ -n "$version" ]; then tried+=("$c: Python $version"); else tried+=("$c: does not run"); fi
done
joined=$(printf '; %s' "${tried[@]}")
echo "tau2-check: no Python >= 3.12 that runs (tried ${joined:2}); set TAU2_PYTHON" >&2
exit 2
