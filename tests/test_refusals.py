"""Every ignored or contradictory input is refused in one line (issue 18): a flag the job
would not read, a setting of another mode, two outputs at once, names the target rejects."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import run_cli

LORA = ("--task", "lora", "-m", "llama-2-7b", "--tokens", "1e8")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("estimate", "--task", "render", "--gpu", "a6000", "--frames", "100", "--tokens", "1e9"),
         "--tokens: render does not use it; render takes --frames, --samples-per-frame"),
        (("estimate", "--task", "lora", "-m", "llama-2-7b", "--gpu", "a6000", "--prompt", "512"),
         "--prompt: lora does not use it; lora takes --tokens, --images, --epochs"),
        (("recommend", *LORA, "--frames", "10"), "--frames: lora does not use it"),
        # serving settings for work that is not served (they were read by no one)
        (("estimate", "--task", "image", "-m", "sdxl", "--gpu", "a100", "--request-rate", "3"),
         "--request-rate: image does not use it; image takes --images, --resolution"),
        (("estimate", "--task", "image", "-m", "sdxl", "--gpu", "a100", "--engine", "vllm"),
         "--engine: image does not use it"),
        (("estimate", "--task", "lora", "-m", "llama-2-7b", "--gpu", "a100", "--tpot", "50ms"),
         "--tpot: lora does not use it"),
        (("recommend", *LORA, "--ttft", "1s"), "--ttft: lora does not use it"),
        # SGLang's and TGI's FP8 run through Marlin kernels, built from SM 8.0 (a V100 or a
        # T4 was offered them as the engines that run FP8 where vLLM does not)
        (("estimate", "-m", "llama-3.1-8b", "--gpu", "v100-sxm2-16gb", "--engine", "sglang",
          "--quant", "fp8"), "--quant: SGLang runs fp8 weights from compute capability 8.0"),
        (("estimate", "-m", "llama-3.1-8b", "--gpu", "t4", "--engine", "tgi", "--quant", "fp8"),
         "--quant: Text Generation Inference runs fp8 weights from compute capability 8.0"),
        # LoRA's settings for a job that trains no adapters
        (("estimate", "--task", "finetune", "-m", "llama-2-7b", "--gpu", "a100", "--lora-rank",
          "16"), "--lora-rank: finetune does not use it"),
        (("recommend", "--task", "train", "-m", "llama-2-7b", "--tokens", "1e8",
          "--lora-targets", "q_proj"), "--lora-targets: train does not use it"),
        (("fit", "--task", "inference", "-m", "llama-2-7b", "--lora-rank", "16"),
         "--lora-rank: inference does not use it"),
        # a target list that names nothing adapted nothing; passes over no stated size
        (("estimate", "--task", "lora", "-m", "llama-2-7b", "--gpu", "a100", "--lora-targets",
          ","), "--lora-targets: LoRA targets ',' name no module; valid: peft-default"),
        (("estimate", "--task", "lora", "-m", "llama-2-7b", "--gpu", "a100", "--epochs", "3"),
         "--epochs: passes over a dataset whose size is not given: give --tokens / --images"),
        (("recommend", "--task", "lora", "-m", "llama-2-7b", "--epochs", "3"),
         "--epochs: passes over a dataset whose size is not given: give --tokens / --images"),
        (("recommend", "--task", "image", "-m", "sdxl", "--images", "100", "--engine", "vllm"),
         "--engine: image does not use it"),
        (("recommend", "--task", "fp64", "--tflop", "1e6", "--tokens", "5"),
         "--tokens: fp64 does not use it; fp64 takes --tflop"),
        (("recommend", *LORA, "--electricity", "0.3"),
         "--electricity: applies only to buying (mode buy)"),
        (("recommend", *LORA, "--json", "--export", "slurm"),
         "--json and --export print different things"),
        (("recommend", *LORA, "--export", "kubernetes", "--name", "Bad Name!!"),
         "'Bad Name!!' is not a valid job name"),
        (("recommend", *LORA, "--export", "slurm", "--run", " "), "--run: an empty command"),
        # one request served beyond the model's context, with no request rate: estimate's
        # inference path refuses it as the serving planner does
        (("estimate", "-m", "llama-3.1-8b", "--gpu", "h100", "--prompt", "200000"),
         "--prompt: Llama 3.1 8B reads 131,072 tokens at most"),
        # estimate's GPU count is --count (the job's field is gpus): the error names the flag
        (("estimate", "-m", "llama-3.1-8b", "--gpu", "h100", "--task", "train", "--tp", "3"),
         "--count: must be a multiple of --tp × --pp × --cp (3); got 1"),
        # inference without an engine is one copy over every GPU: a smaller --tp would make
        # replicas, which the serving planner sizes; serving has no pipeline stages
        (("estimate", "-m", "llama-2-70b", "--gpu", "a100", "--count", "8", "--tp", "2"),
         "--tp: 2 GPUs a copy makes 4 copies of the model on 8 GPUs, which only the serving "
         "planner sizes: give --engine too, or 8 to split one copy over all"),
        (("estimate", "-m", "llama-2-70b", "--gpu", "a100", "--count", "8", "--pp", "2",
          "--engine", "vllm"),
         "--pp: pipeline stages are planned for training; a served model is split with --tp"),
        (("estimate", "-m", "llama-2-70b", "--gpu", "a100", "--count", "6", "--tp", "3",
          "--engine", "vllm"),
         "--tp: 3 GPUs of tensor parallelism do not split Llama 2 70B's 64 attention heads"),
        # an engine where the GPU cannot run it, or its weight format (the engines' docs)
        (("estimate", "-m", "llama-3.1-8b", "--gpu", "mi300x", "--engine", "trtllm"),
         "--engine: TensorRT-LLM runs on NVIDIA GPUs only (CUDA), not on the AMD Instinct "
         "MI300X; engines that run there: vLLM, SGLang"),
        (("estimate", "-m", "llama-3.1-8b", "--gpu", "a100", "--engine", "trtllm", "--quant",
          "fp8"),
         "--quant: TensorRT-LLM runs fp8 weights from compute capability 8.9; the NVIDIA A100 "
         "80GB SXM has 8.0; engines that run them there: vLLM"),
        (("estimate", "-m", "llama-3.1-8b", "--gpu", "v100-sxm2-16gb", "--engine", "vllm",
          "--quant", "fp8"),
         "--quant: vLLM runs fp8 weights from compute capability 8.0; the NVIDIA V100 SXM2 "
         "16GB has 7.0"),
        (("fit", "-m", "llama-3.1-8b", "--task", "lora", "--prompt", "512"),
         "--prompt: lora does not use it"),
        (("fit", "-m", "llama-3.1-8b", "--task", "train", "--generate", "99"),
         "--generate: train does not use it"),
        (("fit", "--task", "image", "-m", "sdxl", "--seq", "2048"),
         "--seq: image does not use it; image takes --resolution, --steps"),
        (("fit", "--task", "image-lora", "-m", "sdxl", "--prompt", "512"),
         "--prompt: image-lora does not use it"),
        (("recommend", "--task", "image", "-m", "sdxl", "--images", "100", "--seq", "2048"),
         "--seq: image does not use it"),
        (("models", "--family", "lam"), "--family: no model of family 'lam'; the families: llama, "),
        (("fit", "-m", "llama-3.1-8b", "--task", "lora", "--gpu", "a6000", "--checkpointing",
          "--recompute", "none"),
         "--recompute: --checkpointing asks for recomputation 'full' and --recompute for 'none'"),
    ],
)  # fmt: skip
def test_ignored_or_contradictory_input_is_one_line(args: tuple[str, ...], message: str) -> None:
    result = run_cli(*args)
    assert result.code == 2, result.stdout
    assert message in result.stderr and result.stderr.count("\n") == 1


def test_a_bad_name_gets_the_closest_valid_one() -> None:
    result = run_cli("recommend", *LORA, "--export", "kubernetes", "--name", "My_Job.V2")
    assert "(try 'my-job-v2')" in result.stderr


def test_the_kubernetes_yaml_has_no_anchors_or_escapes() -> None:
    text = run_cli("recommend", *LORA, "--export", "kubernetes", "--services", "3").stdout
    assert "&id" not in text and "*id" not in text and "\\x" not in text
    assert yaml.safe_load(text)["kind"] == "Job"


def test_a_buy_job_takes_electricity() -> None:
    result = run_cli("recommend", *LORA, "--mode", "buy", "--electricity", "0.3", "--json")
    assert result.code == 0, result.stderr


def test_a_named_config_that_is_not_a_file_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    for path in ("/nonexistent/whichgpu.toml", str(tmp_path)):
        monkeypatch.setenv("WHICHGPU_CONFIG", path)
        result = run_cli("show", "a100")
        assert result.code == 2
        assert f"WHICHGPU_CONFIG: names {path}, which is not a file" in result.stderr


def test_a_price_file_that_prices_nothing_is_refused(tmp_path: object) -> None:
    from pathlib import Path

    empty = Path(str(tmp_path)) / "prices.csv"
    empty.write_text("gpu,price_usd_per_h\n")
    result = run_cli("show", "a100", "--prices", str(empty))
    assert result.code == 2 and "prices.csv: no prices in the file" in result.stderr


def test_inference_over_gpus_that_cannot_split_the_heads_is_refused() -> None:
    """--count 3 for a 32-head model: no engine runs tensor parallelism of 3."""
    result = run_cli("estimate", "-m", "llama-3.1-8b", "--gpu", "a6000", "--task", "inference",
                     "--count", "3")  # fmt: skip
    assert result.code == 2
    assert "3 GPUs do not split the model's 32 attention (8 KV) heads" in result.stderr
    assert "counts that do: 1, 2, 4, 8" in result.stderr
    two = run_cli("estimate", "-m", "llama-3.1-8b", "--gpu", "a6000", "--task", "inference",
                  "--count", "2")  # fmt: skip
    assert "Layout: tensor parallel 2 (one copy of the model)" in two.stdout


def test_fit_keeps_a_no_checkpointing_the_framework_would_override() -> None:
    """torchtune's recipes checkpoint by default; --no-checkpointing is the user's value,
    kept (it was read as "not given" and the recipe's full recomputation used)."""
    base = ("fit", "-m", "llama-3.1-8b", "--task", "lora", "--gpu", "a6000", "--batch", "2",
            "--framework", "torchtune", "--json")  # fmt: skip
    import json

    def peak(*extra: str) -> float:
        result = run_cli(*base, *extra)
        assert result.code == 0, result.stderr
        return float(json.loads(result.stdout)["total_gib"])

    recipe, on, off = peak(), peak("--checkpointing"), peak("--no-checkpointing")
    assert recipe == on
    assert off > 1.5 * on


def test_a_skypilot_catalog_that_prices_nothing_is_refused(tmp_path: Path) -> None:
    """Issue 18: a --prices file that imports nothing is one line; a SkyPilot catalog that
    prices no GPU whichgpu carries said a note and went on (exit 0)."""
    vms = tmp_path / "vms.csv"
    vms.write_text("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,"
                   "GpuInfo,SpotPrice\nfoo,TPU-v9,8,1,1,1.0,us,,\n")  # fmt: skip
    result = run_cli("compare", "a100", "a6000", "--skypilot-catalog", str(vms))
    assert result.code == 2 and "no offer for a GPU whichgpu carries" in result.stderr
    assert "TPU-v9" in result.stderr and result.stderr.count("\n") == 1


def test_a_served_model_takes_the_replica_size_given() -> None:
    """--tp with an engine fixes each replica's tensor-parallel degree (the planner would
    pick two replicas of 4 for this job); the plan, not a one-copy layout line, says it."""
    args = ("estimate", "-m", "llama-2-70b", "--gpu", "a100-80gb-sxm", "--count", "8",
            "--engine", "trtllm", "--prompt", "512", "--generate", "512")  # fmt: skip
    chosen = run_cli(*args)
    assert "2 × 4-GPU replicas" in chosen.stdout
    forced = run_cli(*args, "--tp", "8")
    assert forced.code == 0, forced.stderr
    assert "1 × 8-GPU replica" in forced.stdout
    assert "one copy of the model" not in forced.stdout + chosen.stdout
    six = run_cli("estimate", "-m", "llama-2-70b", "--gpu", "a100-80gb-sxm", "--count", "6",
                  "--tp", "2", "--engine", "vllm")  # fmt: skip
    assert six.code == 0 and "3 × 2-GPU replicas" in six.stdout
    # a count tensor parallelism cannot split is replicas to the serving planner
    three = run_cli("estimate", "-m", "llama-3.1-8b", "--gpu", "a6000", "--count", "3",
                    "--engine", "vllm")  # fmt: skip
    assert three.code == 0 and "3 × 1-GPU replicas" in three.stdout


def test_the_recommender_skips_a_format_the_gpu_cannot_run() -> None:
    """vLLM's FP8 kernels start at SM 8.0: a V100 is no FP8 option, and says why."""
    import json

    result = run_cli("recommend", "--task", "inference", "-m", "llama-3.1-8b", "--quant", "fp8",
                     "--request-rate", "5", "--hours", "10h", "--json")  # fmt: skip
    assert result.code == 0, result.stderr
    doc = json.loads(result.stdout)
    old = [o for o in doc["options"] if o["gpu"] in ("v100-sxm2-16gb", "t4")]
    assert old and not any(o["feasible"] for o in old)
    assert {o["blockers"][0]["code"] for o in old} == {"block_engine_capability"}
    assert doc["pick"]["gpu"] not in ("v100-sxm2-16gb", "t4")


# units are never guessed (issue 44) ------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--request-rate", "10", "--tpot", "30"), "--tpot: 30 what? give its unit, e.g. 30ms or 30s"),
        (("--request-rate", "10", "--ttft", "2"), "--ttft: 2 what? give its unit, e.g. 2ms or 2s"),
    ],
)  # fmt: skip
def test_a_latency_without_its_unit_is_refused(args: tuple[str, ...], message: str) -> None:
    result = run_cli("recommend", "--task", "inference", "-m", "llama-3.1-8b", *args)
    assert result.code == 2 and message in result.stderr, result.stderr


def test_a_duration_is_read_bare_only_where_its_name_gives_the_unit(tmp_path: Path) -> None:
    lora = ("recommend", "--task", "lora", "-m", "llama-2-7b", "--tokens", "1e8", "--json")
    refused = run_cli(*lora, "--deadline", "30")
    assert refused.code == 2 and "--deadline: 30 what? give its unit, e.g. 30h or 30d" in (
        refused.stderr
    )
    assert run_cli(*lora, "--deadline", "30h").code == 0
    served = ("recommend", "--task", "inference", "-m", "llama-3.1-8b", "--json")
    assert run_cli(*served, "--hours", "100").code == 0  # --hours names its unit
    job = tmp_path / "job.toml"
    job.write_text('[constraints]\ndeadline_h = 30\n[[components]]\nkind = "lora"\n'
                   'model = "llama-2-7b"\ntokens = 1e8\n')  # fmt: skip
    assert run_cli("recommend", "--file", str(job), "--json").code == 0  # deadline_h: hours
    job.write_text('[[components]]\nkind = "inference"\nmodel = "llama-3.1-8b"\n'
                   "request_rate = 5\ntpot = 0.1\n")  # fmt: skip
    result = run_cli("recommend", "--file", str(job))
    assert result.code == 2 and "components.0.tpot: 0.1 what?" in result.stderr


def test_the_api_refuses_a_latency_without_its_unit() -> None:
    from fastapi.testclient import TestClient

    from whichgpu.catalog import load_catalog
    from whichgpu.web import create_app

    client = TestClient(create_app(load_catalog()))
    body = {"model": "llama-3.1-8b", "gpu": "l40s", "request_rate": 5, "tpot": 0.1}
    response = client.post("/api/v1/estimate", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "unit_required"
    assert client.post("/api/v1/estimate", json={**body, "tpot": "100ms"}).status_code == 200


def test_a_word_people_use_for_a_task_gets_its_name() -> None:
    """Issue 49: ``--task serve`` had no suggestion; the task people mean is named."""
    from tests.conftest import run_cli

    result = run_cli("recommend", "--task", "serve", "-m", "llama-3.1-8b")
    assert result.code == 2 and result.stderr.rstrip().endswith("(did you mean inference?)")
