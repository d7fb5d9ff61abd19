"""The airline domain's compile prompt (OURS; the paper describes the compile only in prose)."""

from __future__ import annotations

from tau2gate.strings import compile_prompt

__all__ = ["COMPILE_PROMPT"]

# OURS: the shared compile request (tau2gate.strings.COMPILE_PROMPT) for the airline
# policy, asking for the policy's current time (`now`: flight times are compared with it).
COMPILE_PROMPT = compile_prompt("an airline", now=True)
