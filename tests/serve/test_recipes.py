"""Launch recipes of the paper's models: the printed commands (no GPU needed)."""

from __future__ import annotations

from typer.testing import CliRunner

from serve.cli import serve_app
from serve.recipes import NO_THINK, RECIPES, THINKING

runner = CliRunner()


def dry_run(*args: str) -> str:
    result = runner.invoke(serve_app, ["vllm", *args, "--dry-run"])
    assert result.exit_code == 0, result.output
    return result.output.strip()


def test_vllm_commands() -> None:
    assert dry_run("qwen3-235b-no-think") == (
        "vllm serve Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 "
        "--served-model-name qwen3-235b-a22b-instruct-2507 --tensor-parallel-size 4 "
        "--max-model-len 32768 --host 127.0.0.1 --port 8000 --enable-prefix-caching "
        "--enable-prompt-tokens-details"
    )
    assert dry_run("qwen3-235b-thinking", "--port", "8123") == (
        "vllm serve Qwen/Qwen3-235B-A22B-Thinking-2507-FP8 "
        "--served-model-name qwen3-235b-a22b-thinking-2507 --tensor-parallel-size 4 "
        "--max-model-len 65536 --host 127.0.0.1 --port 8123 --reasoning-parser qwen3 "
        "--enable-prefix-caching --enable-prompt-tokens-details"
    )
    hybrid = dry_run("qwen3.6-35b", "--host", "0.0.0.0")
    assert hybrid.startswith("vllm serve Qwen/Qwen3.6-35B-A3B-FP8 ")
    assert "--tensor-parallel-size 1 " in hybrid and "--host 0.0.0.0 " in hybrid
    assert "--reasoning-parser qwen3" in hybrid


def test_sglang_and_vendor_api() -> None:
    sg = dry_run("qwen3.6-35b", "--stack", "sglang")
    assert sg.startswith("python -m sglang.launch_server --model-path Qwen/Qwen3.6-35B-A3B-FP8 ")
    assert "--tp 1 " in sg and "--context-length 65536 " in sg
    api = dry_run("deepseek-v4-pro")
    assert "vendor API" in api and "nothing to launch" in api


def test_unknown_model_fails_with_one_line() -> None:
    result = runner.invoke(serve_app, ["vllm", "llama-9000", "--dry-run"])
    assert result.exit_code != 0
    assert "unknown model 'llama-9000'" in result.output


def test_recipe_table() -> None:
    assert set(RECIPES) == {
        "qwen3-235b-no-think",
        "qwen3-235b-thinking",
        "qwen3.6-35b",
        "deepseek-v4-pro",
    }
    assert RECIPES["qwen3.6-35b"].regime_selection == "chat_template_kwargs.enable_thinking"
    assert RECIPES["qwen3-235b-thinking"].regime_selection == "checkpoint"
    assert RECIPES["deepseek-v4-pro"].regime_selection == "vendor"
    assert all(r.quantization == "fp8" for r in RECIPES.values() if r.stack == "vllm")
    assert (NO_THINK.reply_tokens, NO_THINK.matcher_tokens, NO_THINK.compiler_tokens) == (
        400,
        200,
        3000,
    )
    assert (THINKING.reply_tokens, THINKING.matcher_tokens, THINKING.compiler_tokens) == (
        2500,
        2500,
        6000,
    )
    assert NO_THINK.temperature == 0.0 and NO_THINK.timeout_s == 900 and NO_THINK.attempts == 6
    listing = runner.invoke(serve_app, ["recipes"]).output
    assert all(key in listing for key in RECIPES)


def test_registered_under_ladder_serve() -> None:
    from ladder.app import app

    result = runner.invoke(app, ["serve", "vllm", "qwen3-235b-no-think", "--dry-run"])
    assert result.exit_code == 0 and result.output.startswith("vllm serve ")
