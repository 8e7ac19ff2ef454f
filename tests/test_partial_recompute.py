"""Megatron's partial recomputation (issue 46): a preset that recomputes the first N layers
of each model chunk (Megatron-Bridge's Llama 3 8B FP8 preset on H100: recompute_num_layers
5) is planned, timed and launched as it runs; Megatron-core's cross-entropy keeps one fp32
copy of the logits."""

from __future__ import annotations

import pytest

from whichgpu.catalog import load_catalog
from whichgpu.commands.train_launch import launch_arguments
from whichgpu.estimate.activations import model_activation_bytes, recomputed_share
from whichgpu.estimate.logits import logits_bytes
from whichgpu.frozen import evolve
from whichgpu.inputs.job_input import make_job
from whichgpu.models import resolve_model

ARCH = resolve_model("llama-3.1-8b")
JOB = make_job(task="train", precision="fp8-mixed", seq=8192, batch=1, framework="nemo", gpus=8)


def test_the_share_recomputed_is_n_layers_of_each_chunk() -> None:
    five = evolve(JOB, checkpointing="full", recompute_layers=5)
    assert recomputed_share(ARCH, five) == pytest.approx(5 / 32)
    assert recomputed_share(ARCH, evolve(five, pp=4)) == pytest.approx(5 / 8)  # 8 a stage
    # a given --vp is launched as given: 4 stages of 2 chunks of 4 layers, all recomputed
    assert recomputed_share(ARCH, evolve(five, pp=4, vp=2)) == 1.0
    assert recomputed_share(ARCH, evolve(five, pp=4, vp=2, recompute_layers=2)) == 0.5
    assert recomputed_share(ARCH, evolve(five, recompute_layers=0)) == 1.0
    assert recomputed_share(ARCH, JOB) == 0.0


def test_partial_recomputation_keeps_the_others_layers_whole() -> None:
    """5 of 32 layers keep only their input; the other 27 everything."""
    none = model_activation_bytes(ARCH, JOB, 1, 8192, 32)
    full = model_activation_bytes(ARCH, evolve(JOB, checkpointing="full"), 1, 8192, 32)
    five = evolve(JOB, checkpointing="full", recompute_layers=5)
    part = model_activation_bytes(ARCH, five, 1, 8192, 32)
    assert part == pytest.approx(full * 5 / 32 + none * 27 / 32)


def test_megatron_cross_entropy_keeps_one_fp32_copy_and_te_none() -> None:
    """megatron/core/tensor_parallel/cross_entropy.py: the fp32 upcast is exponentiated and
    saved, and becomes the gradient in place: 2 + 4 bytes a logit in both passes; fused in
    Transformer Engine (NeMo's and Megatron-Bridge's configs) the gradient is written into
    the 16-bit logits: 2. The HF loss's log-softmax output, its gradient and the input
    gradient take 12."""
    elements = 8192 * ARCH.vocab_size
    assert JOB.loss_fusion  # the nemo recipe
    assert logits_bytes(ARCH, JOB, "forward") == logits_bytes(ARCH, JOB, "backward")
    assert logits_bytes(ARCH, JOB, "backward") == elements * 2
    megatron = make_job(task="train", precision="fp8-mixed", seq=8192, batch=1,
                        framework="megatron", gpus=8)  # fmt: skip
    assert logits_bytes(ARCH, megatron, "forward") == elements * 6
    assert logits_bytes(ARCH, megatron, "backward") == elements * 6
    assert logits_bytes(ARCH, megatron, "step") == 0.0
    hf = make_job(task="train", precision="bf16-true", seq=8192, batch=1)
    assert logits_bytes(ARCH, hf, "backward") == elements * 12


def test_the_8b_fp8_preset_runs_as_published() -> None:
    """LLAMA3_8B_PRETRAIN_CONFIG_H100_FP8_CS_V1: TP 1, ZeRO-1 (distributed optimizer), micro-
    batch 1, global batch 128, 5 layers recomputed; NeMo and Megatron-Bridge published
    12,036 to 14,451 tokens/s a GPU (docs/training-accuracy.md)."""
    from whichgpu.commands.estimate import estimate_job
    from whichgpu.inputs.requests import EstimateRequest

    request = EstimateRequest(model="llama-3.1-8b", task="train", seq=8192, framework="nemo",
                              precision="fp8-mixed", count=8)  # fmt: skip
    est = estimate_job(load_catalog().gpu("h100-sxm"), ARCH, request)
    job = est.job
    assert job is not None
    assert (job.tp, job.pp, job.cp, job.zero) == (1, 1, 1, 1)
    assert (job.checkpointing, job.recompute_layers, job.global_batch) == ("full", 5, 128)
    assert 12_036 <= est.throughput.value / 8 <= 14_451
    assert any(n.code == "chosen_recipe_layout" for n in est.notes)


def test_full_recomputation_launches_with_a_method() -> None:
    """Megatron-core refuses full granularity without a method ("block" or "uniform"):
    every layer alone is uniform over units of 1, a preset's N layers block N."""
    every = evolve(JOB, checkpointing="full")
    assert ("--recompute-granularity full --recompute-method uniform "
            "--recompute-num-layers 1") in launch_arguments("megatron", every)  # fmt: skip
    five = evolve(every, recompute_layers=5)
    assert "--recompute-method block --recompute-num-layers 5" in launch_arguments("megatron", five)
    assert ("model.config.recompute_method=block model.config.recompute_num_layers=5"
            in launch_arguments("nemo", five))  # fmt: skip
    selective = launch_arguments("megatron", evolve(JOB, checkpointing="selective"))
    assert "--recompute-granularity selective" in selective
    assert "--recompute-method" not in selective


def test_a_block_of_layers_is_one_setting_in_the_cli_the_api_and_files() -> None:
    """``--recompute-layers N`` plans full recomputation of N layers a chunk (Megatron's
    block method) on Megatron or NeMo, and refuses in one line elsewhere or beside a mode
    that is not full; the API takes the same field."""
    import json
    import warnings

    from tests.conftest import run_cli
    from whichgpu.web.app import create_app

    ask = ("estimate", "-m", "llama-3.1-8b", "--task", "train", "--gpu", "h100-sxm", "--count",
           "8", "--seq", "8192", "--framework", "megatron", "--recompute-layers", "4", "--json")  # fmt: skip
    done = run_cli(*ask)
    assert done.code == 0, done.stderr
    config = json.loads(done.stdout)["configuration"]
    assert (config["checkpointing"], config["recompute_layers"]) == ("full", 4)
    hf = run_cli("estimate", "-m", "llama-3.1-8b", "--task", "train", "--gpu", "h100-sxm",
                 "--recompute-layers", "4")  # fmt: skip
    assert hf.code == 2 and "give --framework megatron or nemo" in hf.stderr
    clash = run_cli("fit", "-m", "llama-3.1-8b", "--task", "train", "--gpu", "h100-sxm",
                    "--framework", "nemo", "--recompute", "none", "--recompute-layers", "4")  # fmt: skip
    assert clash.code == 2 and clash.stderr.count("\n") == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

        with TestClient(create_app(load_catalog())) as client:
            body = {"model": "llama-3.1-8b", "task": "train", "gpu": "h100-sxm", "count": 8,
                    "seq": 8192, "framework": "megatron", "recompute_layers": 4}  # fmt: skip
            got = client.post("/api/v1/estimate", json=body)
            assert got.status_code == 200, got.text
            assert got.json()["configuration"]["recompute_layers"] == 4
            bad = client.post("/api/v1/estimate", json={**body, "recompute_layers": 0})
            assert bad.status_code == 422
            past = client.post("/api/v1/estimate", json={**body, "recompute_layers": 20, "pp": 2})
            assert past.status_code == 422 and "holds 16 a rank" in past.text


@pytest.mark.parametrize(
    "command",
    [
        ("estimate", "--gpu", "h100-sxm", "--count", "8", "--recompute-layers", "33"),
        ("fit", "--gpu", "h100-sxm", "--recompute-layers", "33"),
        ("recommend", "--tokens", "1e9", "--recompute-layers", "33"),
        ("estimate", "--gpu", "h100-sxm", "--count", "8", "--pp", "2", "--recompute-layers", "17"),
    ],
)
def test_a_block_past_a_ranks_layers_is_refused_in_one_line(command: tuple[str, ...]) -> None:
    """Megatron takes 1 to the layers a pipeline rank holds (32 for Llama 3.1 8B on one
    stage, 16 on two): estimate, fit and recommend refuse a block past them in one line,
    the layers named, where recommend had listed every option as unplannable."""
    from tests.conftest import run_cli

    done = run_cli(command[0], "-m", "llama-3.1-8b", "--task", "train", "--framework",
                   "megatron", *command[1:])  # fmt: skip
    layers = "16" if "--pp" in command else "32"
    assert done.code == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"holds {layers} a rank" in done.stderr


def test_fit_keeps_the_presets_block_and_suggests_every_layer() -> None:
    """``fit`` plans the layout the estimate does, the preset's 5 layers included; where a
    block is recomputed, recomputing every layer is the change it suggests."""
    from whichgpu.commands.fit import candidate_changes

    done = __import__("tests.conftest", fromlist=["run_cli"]).run_cli(
        "fit",
        "-m",
        "llama-3.1-8b",
        "--task",
        "train",
        "--gpu",
        "h100-sxm",
        "--gpus",
        "8",
        "--seq",
        "8192",
        "--framework",
        "nemo",
        "--precision",
        "fp8-mixed",
        "--json",
    )
    assert done.code == 0, done.stderr
    assert '"recompute_layers": 5' in done.stdout
    five = evolve(JOB, checkpointing="full", recompute_layers=5)
    changed = [job for _note, job in candidate_changes(ARCH, five)]
    assert any(j.checkpointing == "full" and j.recompute_layers == 0 for j in changed)
