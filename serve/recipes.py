"""Launch recipes for the paper's models (Appendix B.4, Table 6).

What the paper states is recorded as stated: the checkpoints, FP8 quantization for the
open models, separate no-think and thinking checkpoints for Qwen3-235B, per-request regime
selection for the Qwen3.6-35B hybrid, DeepSeek V4 Pro through its vendor API with thinking
on or off per request, and the decoding of every call (temperature 0; reply budget 400 /
2,500 tokens, doubled up to 12,000 on an empty thinking reply and halved to a floor of 512 on
context overflow; matcher 200 / 2,500; compiler 3,000 / 6,000; 900 s timeout, six attempts).

The paper leaves context length, tensor parallelism and GPU settings to its unreleased
serving scripts; those values here are OURS, chosen for 8 x H200-class nodes (141 GB):

* Tensor parallel 4 for the 235B FP8 checkpoints (about 235 GB of weights plus KV cache);
  on 80 GB GPUs use 8 with ``--enable-expert-parallel`` (Qwen's FP8 block size does not
  divide the MoE weights at TP 8 without it). Tensor parallel 1 for the 35B-A3B model.
* ``--max-model-len``: 32,768 for the no-think checkpoint (a 44-turn transcript stays under
  about 10k tokens plus a 400-token reply) and 65,536 where thinking is on (room for the
  12,000-token doubled reply budget).
* ``--reasoning-parser qwen3`` for Qwen models that think (vLLM >= 0.10; older vLLM needs
  ``deepseek_r1`` for the Thinking-2507 checkpoint); none for the Instruct-2507 checkpoint,
  which never thinks. Quantization is read from the FP8 checkpoints' own config, so no
  ``--quantization`` flag. ``--enable-prefix-caching`` because every turn resends the
  growing transcript; ``--enable-prompt-tokens-details`` so each reply reports its cached
  prompt tokens (logged per call).
* DeepSeek V4 Pro's API model id and thinking switch are the vendor's to define; the values
  below are assumptions to check against the vendor's documentation.

Flags were checked against vLLM's engine-argument documentation (``vllm serve MODEL
--tensor-parallel-size --max-model-len --reasoning-parser --served-model-name --host
--port --enable-prefix-caching``) and SGLang's ``sglang.launch_server`` (``--model-path
--tp --context-length --reasoning-parser --served-model-name``).
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = [
    "NO_THINK",
    "RECIPES",
    "THINKING",
    "Decoding",
    "Recipe",
    "launch_command",
    "sglang_command",
    "vllm_command",
]

Regime = Literal["no-think", "thinking"]


class Decoding(msgspec.Struct, frozen=True, kw_only=True):
    temperature: float = 0.0
    reply_tokens: int
    matcher_tokens: int
    compiler_tokens: int
    empty_thinking_cap: int = 12_000  # an empty thinking reply doubles the budget up to this
    overflow_floor: int = 512  # a context overflow halves the budget down to this
    timeout_s: float = 900.0
    attempts: int = 6


NO_THINK = Decoding(reply_tokens=400, matcher_tokens=200, compiler_tokens=3_000)
THINKING = Decoding(reply_tokens=2_500, matcher_tokens=2_500, compiler_tokens=6_000)


class Recipe(msgspec.Struct, frozen=True, kw_only=True):
    key: str  # the name `ladder serve vllm` takes
    paper_name: str  # as Table 6 names it
    checkpoint: str  # Hugging Face id, or the vendor's API model id
    quantization: str  # "fp8" or "vendor"
    stack: Literal["vllm", "api"]
    tensor_parallel: int  # 0 for a vendor API
    max_model_len: int  # 0 for a vendor API
    regimes: tuple[Regime, ...]
    regime_selection: Literal["checkpoint", "chat_template_kwargs.enable_thinking", "vendor"]
    served_name: str  # --served-model-name; the model name a grid uses
    reasoning_parser: str | None = None
    # What a request adds to its body to select each regime (per-request selection only).
    regime_body: dict[str, dict[str, object]] = {}
    base_url: str | None = None  # vendor APIs
    # --enable-prompt-tokens-details: usage.prompt_tokens_details.cached_tokens, which the
    # per-call cached-token accounting reads (CallRecord.cached_tokens; #40)
    extra_args: tuple[str, ...] = ("--enable-prefix-caching", "--enable-prompt-tokens-details")
    ours: tuple[str, ...] = ()  # the choices made here, not stated by the paper

    def decoding(self, regime: Regime) -> Decoding:
        return THINKING if regime == "thinking" else NO_THINK


_OURS_QWEN = ("tensor_parallel", "max_model_len", "reasoning_parser", "extra_args")

RECIPES: dict[str, Recipe] = {
    r.key: r
    for r in (
        Recipe(
            key="qwen3-235b-no-think",
            paper_name="Qwen3-235B-A22B (no-think)",
            checkpoint="Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",
            quantization="fp8",
            stack="vllm",
            tensor_parallel=4,
            max_model_len=32_768,
            regimes=("no-think",),
            regime_selection="checkpoint",
            served_name="qwen3-235b-a22b-instruct-2507",
            ours=_OURS_QWEN,
        ),
        Recipe(
            key="qwen3-235b-thinking",
            paper_name="Qwen3-235B-A22B (thinking)",
            checkpoint="Qwen/Qwen3-235B-A22B-Thinking-2507-FP8",
            quantization="fp8",
            stack="vllm",
            tensor_parallel=4,
            max_model_len=65_536,
            regimes=("thinking",),
            regime_selection="checkpoint",
            served_name="qwen3-235b-a22b-thinking-2507",
            reasoning_parser="qwen3",
            ours=_OURS_QWEN,
        ),
        Recipe(
            key="qwen3.6-35b",
            paper_name="Qwen3.6-35B-A3B (hybrid)",
            checkpoint="Qwen/Qwen3.6-35B-A3B-FP8",
            quantization="fp8",
            stack="vllm",
            tensor_parallel=1,
            max_model_len=65_536,
            regimes=("no-think", "thinking"),
            regime_selection="chat_template_kwargs.enable_thinking",
            regime_body={
                "no-think": {"chat_template_kwargs": {"enable_thinking": False}},
                "thinking": {"chat_template_kwargs": {"enable_thinking": True}},
            },
            served_name="qwen3.6-35b-a3b",
            reasoning_parser="qwen3",
            ours=_OURS_QWEN,
        ),
        Recipe(
            key="deepseek-v4-pro",
            paper_name="DeepSeek V4 Pro (vendor API)",
            checkpoint="deepseek-v4-pro",
            quantization="vendor",
            stack="api",
            tensor_parallel=0,
            max_model_len=0,
            regimes=("no-think", "thinking"),
            regime_selection="vendor",
            regime_body={
                "no-think": {"thinking": {"type": "disabled"}},
                "thinking": {"thinking": {"type": "enabled"}},
            },
            served_name="deepseek-v4-pro",
            base_url="https://api.deepseek.com/v1",
            extra_args=(),
            ours=("checkpoint", "base_url", "regime_body"),
        ),
    )
}


def vllm_command(recipe: Recipe, *, host: str = "127.0.0.1", port: int = 8000) -> list[str]:
    cmd = [
        "vllm",
        "serve",
        recipe.checkpoint,
        "--served-model-name",
        recipe.served_name,
        "--tensor-parallel-size",
        str(recipe.tensor_parallel),
        "--max-model-len",
        str(recipe.max_model_len),
        "--host",
        host,
        "--port",
        str(port),
    ]
    if recipe.reasoning_parser:
        cmd += ["--reasoning-parser", recipe.reasoning_parser]
    return cmd + list(recipe.extra_args)


def sglang_command(recipe: Recipe, *, host: str = "127.0.0.1", port: int = 8000) -> list[str]:
    cmd = [
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        recipe.checkpoint,
        "--served-model-name",
        recipe.served_name,
        "--tp",
        str(recipe.tensor_parallel),
        "--context-length",
        str(recipe.max_model_len),
        "--host",
        host,
        "--port",
        str(port),
    ]
    if recipe.reasoning_parser:
        cmd += ["--reasoning-parser", recipe.reasoning_parser]
    return cmd


def launch_command(
    recipe: Recipe, *, stack: str = "vllm", host: str = "127.0.0.1", port: int = 8000
) -> list[str] | None:
    """The server command for ``recipe``, or None for a vendor API (nothing to launch)."""
    if recipe.stack == "api":
        return None
    if stack == "sglang":
        return sglang_command(recipe, host=host, port=port)
    return vllm_command(recipe, host=host, port=port)
