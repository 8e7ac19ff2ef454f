"""Image generation: pipeline presets parsed as data, their exact parameter counts and FLOPs,
memory and time as the job changes, and the CLI, API and recommender end to end."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whichgpu.catalog import load_catalog
from whichgpu.estimate.diffusion import ImageJob, fitting_image_job, image_memory, make_image_job
from whichgpu.estimate.imaging import estimate_image
from whichgpu.models.diffusion import walk
from whichgpu.models.pipelines import find_pipeline, pipeline_data, pipelines

from .conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]


def test_parameter_counts_equal_the_libraries_sums() -> None:
    """Every component's walk equals diffusers'/transformers' own parameter sum, recorded by
    building each shipped config on the meta device (validation/diffusion_params.csv)."""
    text = (ROOT / "validation" / "diffusion_params.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    assert len(rows) == sum(len(p.components) for p in pipelines().values()) == 25
    for row in rows:
        component = pipelines()[row["pipeline"]].component(row["role"])
        assert component.params == int(row["params"]), row


def test_parameter_counts_equal_the_published_totals() -> None:
    """Exact published counts are met exactly; rounded ones ("2B", "8.1B") to their rounding."""
    for pid, data in pipeline_data().items():
        for role, published in data["_whichgpu"]["published_params"].items():
            ours = pipelines()[pid].component(role).params
            if published % 10_000_000 == 0:  # a rounded figure
                assert abs(ours / published - 1) < 0.05, (pid, role)
            else:
                assert ours == published, (pid, role)


@pytest.mark.parametrize(
    ("pipeline", "role", "side", "tokens", "flops", "conv_flops"),
    [
        # torch.utils.flop_counter.FlopCounterMode over the diffusers 0.42 modules built from
        # the shipped configs (meta device): all FLOPs, and aten.convolution's
        ("sd-1.5", "denoiser", 64, 77, 803_273_441_280, 443_946_106_880),
        ("sdxl", "denoiser", 128, 77, 6_761_236_398_080, 1_623_111_761_920),
        ("flux.1-dev", "denoiser", 128, 512, 74_384_653_418_496, 0),  # no conv: linear patches
        ("sd-1.5", "vae", 64, 77, 2_514_518_933_504, 2_471_569_260_544),
    ],
)
def test_forward_flops_equal_pytorchs_count(
    pipeline: str, role: str, side: int, tokens: int, flops: int, conv_flops: int
) -> None:
    component = pipelines()[pipeline].component(role)
    w = walk(component, side, side, tokens)
    assert w.flops == pytest.approx(flops, rel=1e-9)
    # SD 1.x projects in and out of attention by 1×1 convs, SDXL by linear layers
    assert w.conv_flops == pytest.approx(conv_flops, rel=1e-9)


def test_names_resolve_forgivingly() -> None:
    assert find_pipeline("SDXL").id == "sdxl"
    assert find_pipeline("black-forest-labs/FLUX.1-dev").id == "flux.1-dev"
    assert find_pipeline("sd-1.4").id == "sd-1.5"


def _gpu(name: str):  # type: ignore[no-untyped-def]
    return load_catalog().gpu(name)


def test_more_steps_take_longer_and_larger_images_need_more() -> None:
    sdxl, gpu = find_pipeline("sdxl"), _gpu("rtx-4090")
    base = make_image_job(sdxl, gpu, steps=30)
    fast = estimate_image(sdxl, base, gpu)
    slow = estimate_image(sdxl, replace(base, steps=60), gpu)
    assert slow.seconds_per_image > fast.seconds_per_image * 1.7
    small = image_memory(sdxl, replace(base, resolution=768)).total_bytes
    assert image_memory(sdxl, base).total_bytes > small


def test_guidance_doubles_the_denoisers_work() -> None:
    from whichgpu.estimate.diffusion import image_times

    sd, gpu = find_pipeline("sd-1.5"), _gpu("a100-80gb-sxm")
    job = make_image_job(sd, gpu)
    with_cfg = image_times(sd, job, gpu).step_s
    without = image_times(sd, replace(job, cfg=False), gpu).step_s
    assert with_cfg == pytest.approx(2 * without, rel=0.05)
    assert find_pipeline("flux.1-dev").cfg is False  # guidance-distilled


def test_fp32_matmuls_run_on_fp32_cores_unless_tf32_is_asked() -> None:
    """PyTorch's defaults: cuDNN's convolutions take TF32 (``cudnn.allow_tf32``), its matmuls
    do not (``matmul.allow_tf32`` off since 1.12); ``tf32`` is ``set_float32_matmul_precision
    ("high")``. The published pair: SDXL in FP32 on an A100 read 72.2 s for 4 images of 25
    steps without it (huggingface/blog simple_sdxl_optimizations), 7.36 s for one of 30 with
    it (diffusion-fast's run_benchmark.py): 2.4 s and 0.25 s a 2-latent step."""
    from whichgpu.estimate.diffusion import component_walk, image_times

    sdxl, a100 = find_pipeline("sdxl"), _gpu("a100-40gb")
    job = make_image_job(sdxl, a100, precision="32-true", batch=1)
    w = component_walk(sdxl, "denoiser", 128)
    tf32, fp32 = a100.tf32_tensor_dense_tflops * 1e12, a100.fp32_tflops * 1e12
    strict = image_times(sdxl, job, a100).step_s
    high = image_times(sdxl, replace(job, precision="tf32"), a100).step_s
    assert strict == pytest.approx(2 * (w.conv_flops / tf32 + (w.flops - w.conv_flops) / fp32))
    assert high == pytest.approx(2 * w.flops / tf32)
    assert strict > 6 * high
    v100 = _gpu("v100-sxm2-16gb")  # no TF32: the same FP32 cores either way
    assert image_times(sdxl, job, v100).step_s == pytest.approx(
        image_times(sdxl, replace(job, precision="tf32"), v100).step_s
    )


def test_memory_bound_kernels_cost_their_traffic_over_the_bandwidth() -> None:
    """Norms, activations, residual adds and resampling read and write their tensors apart
    from the GEMMs: a ResNet block of 320 channels at 64×64 moves (4·320 + 9·320)·4096
    elements (two GroupNorms and SiLUs, the time embedding's add, the residual add), and the
    whole step's traffic costs the same bytes on any GPU, seconds by its bandwidth."""
    from whichgpu.estimate.diffusion import component_walk, image_times
    from whichgpu.models.diffusion_walks import Tally, _resnet

    t = Tally()
    _resnet(t, 320, 320, 64 * 64, 1280)
    assert t.elementwise == (4 * 320 + 9 * 320) * 64 * 64
    sd = find_pipeline("sd-1.5")
    w = component_walk(sd, "denoiser", 64)
    for gpu_id in ("a100-80gb-sxm", "rtx-3090"):
        gpu = _gpu(gpu_id)
        job = make_image_job(sd, gpu, batch=1)
        moved = 2 * w.elementwise_elements * 2.0  # guidance's two latents, 16-bit
        assert image_times(sd, job, gpu).step_stream_s == pytest.approx(
            moved / (gpu.memory_bandwidth_gb_per_s * 1e9)
        )
    # where that traffic outlasts the calibrated math, the answer says what binds
    a100 = _gpu("a100-80gb-sxm")
    many = estimate_image(sd, make_image_job(sd, a100, batch=16), a100)
    assert many.bound == "memory bandwidth"
    flux = find_pipeline("flux.1-dev")
    assert estimate_image(flux, make_image_job(flux, a100, batch=1), a100).bound == "compute"


def test_measured_on_an_h200() -> None:
    """Our own runs on a GPU no published image run covers (validation/measured_diffusion.csv,
    diffusers 0.42 on an H200): a VAE decode's activations within a fifth (its peak is the
    last upsampling convolution and cuDNN's workspace), a denoiser step's within a third,
    and FP32 over TF32 on SDXL's step within a fifth of the measured 2.5x."""
    from whichgpu.estimate.diffusion import stage_activations

    h200 = _gpu("h200")
    text = (ROOT / "validation" / "measured_diffusion.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    assert len(rows) == 16
    seconds = {}
    for row in rows:
        tf32 = row["precision"] == "32-true" and row["matmul"] == "high"
        job = ImageJob(int(row["px"]), 30, int(row["batch"]),
                       precision="tf32" if tf32 else row["precision"])  # type: ignore[arg-type]  # fmt: skip
        pipeline = find_pipeline(row["pipeline"])
        stage = "denoising" if row["what"] == "step" else "VAE decode"
        estimated = stage_activations(pipeline, job)[stage]
        measured = (float(row["peak_gib"]) - float(row["weights_gib"])) * 2**30
        assert estimated / measured - 1 == pytest.approx(
            0, abs=0.2 if row["what"] == "decode" else 0.33
        ), row
        if row["pipeline"] == "sdxl" and row["what"] == "step" and row["precision"] == "32-true":
            seconds[row["matmul"]] = (
                float(row["seconds"]),
                estimate_image(pipeline, job, h200).seconds_per_step,
            )
    measured_ratio = seconds["highest"][0] / seconds["high"][0]
    assert measured_ratio == pytest.approx(2.5, abs=0.05)
    assert seconds["highest"][1] / seconds["high"][1] == pytest.approx(measured_ratio, rel=0.2)


def test_offload_trades_gpu_memory_for_host_memory_and_time() -> None:
    flux, gpu = find_pipeline("flux.1-dev"), _gpu("rtx-4090")
    whole = make_image_job(flux, gpu)
    resident = estimate_image(flux, whole, gpu)
    model = estimate_image(flux, replace(whole, offload="model"), gpu)
    sequential = estimate_image(flux, replace(whole, offload="sequential"), gpu)
    assert resident.memory.total_gib > 30  # FLUX.1 in BF16 does not fit a 24 GB card whole
    assert model.memory.total_gib < resident.memory.total_gib
    assert sequential.memory.total_gib < 4 < model.memory.total_gib
    assert model.memory.host_bytes > 30 * 2**30 and resident.memory.host_bytes == 0
    assert sequential.seconds_per_image > model.seconds_per_image > resident.seconds_per_image


@pytest.mark.parametrize("gpu_id", ["a100-80gb-sxm", "h100-sxm", "v100-sxm2-32gb", "rtx-a6000"])
@pytest.mark.parametrize("quant", ["fp8", "nf4", "q8_0", "q4_k_m"])
def test_quantised_weights_save_memory_not_time(gpu_id: str, quant: str) -> None:
    """The loaders quantise the weights only and compute in 16 bits: a quantised FLUX.1 is
    smaller and, dequantising each step, a little slower, never faster (diffusers'
    quantization blog, one H100: BF16 and NF4 12 s, Q8_0 and float8 weight-only 15 s); it
    read 25-45 % faster on an A100 or a V100, which have no FP8 math at all."""
    flux, gpu = find_pipeline("flux.1-dev"), _gpu(gpu_id)
    plain = ImageJob(1024, 50, 1, precision=make_image_job(flux, gpu).precision)
    dense = estimate_image(flux, plain, gpu)
    quantised = estimate_image(flux, replace(plain, quant=quant), gpu)
    assert quantised.memory.total_gib < dense.memory.total_gib
    assert 1.0 < quantised.seconds_per_image / dense.seconds_per_image < 1.25


def test_quantised_on_the_gpu_the_peak_holds_the_16_bit_pipeline() -> None:
    """torchao's ``quantize_`` after ``pipeline.to("cuda")`` (the diffusers-torchao
    benchmarks) loads the 16-bit pipeline whole first: FLUX.1 [dev] fp8 peaked at 31.82 GiB
    of live tensors on an H100 at 1 and at 4 images a call (sayakpaul/diffusers-torchao#20),
    where quantised as it loads it needs ~20 (diffusers' quantization blog: 21.5 reserved)."""
    flux = find_pipeline("flux.1-dev")
    for batch in (1, 4):
        job = make_image_job(flux, None, batch=batch, quant="fp8", quantize_on="gpu")
        peak = image_memory(flux, job)
        assert peak.stage == "loading"
        assert peak.tensor_bytes / 2**30 == pytest.approx(31.82, rel=0.05)
    on_load = image_memory(flux, make_image_job(flux, None, quant="fp8"))
    assert on_load.stage != "loading"
    assert on_load.total_bytes / 2**30 == pytest.approx(21.5, rel=0.1)


def test_each_loader_quantises_what_it_quantises() -> None:
    """GGUF files hold the transformer alone (T5 stays 16-bit: Q8_0 peaks at 26.0 GB on an
    H100, diffusers' quantization blog); bitsandbytes keeps T5's ``wo`` projections in fp32
    (transformers' ``_keep_in_fp32_modules``: NF4 peaks at 17.3); torchao's int8
    weight-only is planned (21.5)."""
    flux = find_pipeline("flux.1-dev")
    t5 = flux.component("text_encoder_2")
    gguf = make_image_job(flux, None, quant="q8_0")
    assert image_memory(flux, gguf).total_bytes / 2**30 == pytest.approx(26.0, rel=0.08)
    from whichgpu.estimate.diffusion import bytes_per_weight

    assert bytes_per_weight(t5, gguf) == 2.0
    nf4 = make_image_job(flux, None, quant="nf4")
    assert 0.516 < bytes_per_weight(t5, nf4) < 1.5  # a fifth of T5 in fp32
    assert image_memory(flux, nf4).total_bytes / 2**30 == pytest.approx(17.3, rel=0.15)
    int8 = make_image_job(flux, None, quant="int8")
    assert image_memory(flux, int8).total_bytes / 2**30 == pytest.approx(21.5, rel=0.1)


def test_an_open_setting_is_chosen_to_fit() -> None:
    flux, gpu = find_pipeline("flux.1-dev"), _gpu("rtx-4090")
    job, chosen = fitting_image_job(flux, make_image_job(flux, gpu), 24 * 2**30, True, True, True)
    # its transformer alone is 23.8 GB in BF16: only sequential offload fits a 24 GB card
    assert job.offload == "sequential" and "cpu_offload" in chosen
    assert image_memory(flux, job).total_bytes <= 24 * 2**30


def test_bf16_falls_back_to_fp16_where_the_gpu_has_no_bf16() -> None:
    flux = find_pipeline("flux.1-dev")
    assert make_image_job(flux, _gpu("t4")).precision == "16-true"
    assert make_image_job(flux, _gpu("rtx-4090")).precision == "bf16-true"


@settings(max_examples=30, deadline=None)
@given(batch=st.integers(1, 15), side=st.sampled_from([512, 768, 1024, 1536]))
def test_memory_grows_with_the_batch(batch: int, side: int) -> None:
    sdxl = find_pipeline("sdxl")
    job = ImageJob(resolution=side, steps=30, batch=batch)
    more = replace(job, batch=batch + 1)
    assert image_memory(sdxl, more).total_bytes > image_memory(sdxl, job).total_bytes
    tiled = replace(job, vae_tiling=True)
    assert image_memory(sdxl, tiled).total_bytes <= image_memory(sdxl, job).total_bytes


def test_estimate_cli_prints_the_job_and_its_memory() -> None:
    result = run_cli(*["estimate", "--task", "image", "-m", "sdxl", "--gpu", "rtx-4090", "--steps", "30",
              "--images", "1000", "--json"],
    )  # fmt: skip
    assert result.code == 0, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    assert doc["regime"] == "diffusion-infer" and doc["throughput"]["unit"] == "images/s"
    image = doc["image"]
    assert image["steps"] == 30 and image["resolution_px"] == 1024
    assert image["denoiser_passes_per_step"] == 2
    # left open, the images a call are the most that fit the card (up to 8), and said so
    assert "batch" in image["chosen"] and 1 < image["batch"] <= 8
    assert 8 < image["memory_gib"] < 24
    assert doc["time_s"] == pytest.approx(1000 * image["seconds_per_image"], rel=1e-9)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--resolution", "1000"], "multiples of 32 px (try 992 or 1024)"),
        (["--steps", "0"], "--steps"),
        (["--quant", "int4"], "not int4"),
        (["--tokens", "1e9"], "image does not use it"),
    ],
)
def test_bad_image_input_is_one_line_and_exit_2(args: list[str], needle: str) -> None:
    result = run_cli(*["estimate", "--task", "image", "-m", "sdxl", "--gpu", "a6000", *args],
    )  # fmt: skip
    assert result.code == 2
    assert needle in (result.stdout + result.stderr) and "Traceback" not in (
        result.stdout + result.stderr
    )
    assert len(result.stderr.strip().splitlines()) == 1 and not result.stdout


def test_other_tasks_refuse_image_settings() -> None:
    result = run_cli(*["estimate", "--task", "lora", "-m", "llama-3.1-8b", "--resolution", "512"],
    )  # fmt: skip
    assert result.code == 2 and "--resolution" in (result.stdout + result.stderr)


def test_recommend_takes_image_jobs_and_says_what_it_chose() -> None:
    result = run_cli(*["recommend", "--task", "image", "-m", "flux.1-dev", "--images", "1000",
              "--max-gpus", "1", "--json"],
    )  # fmt: skip
    assert result.code == 0, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    pick = doc["pick"]
    assert pick is not None
    run = pick["components"][0]
    assert run["unit"] == "images/s" and run["time_s"] > 0
    reasons = " ".join(r["text"] for r in doc["reasons"])
    assert "images a call" in reasons


def test_image_components_in_workload_files_and_the_api(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from whichgpu.web import create_app

    client = TestClient(create_app())
    body = {"components": [{"kind": "image", "model": "sd-1.5", "images": 1000}]}
    response = client.post("/api/v1/recommend", json=body)
    assert response.status_code == 200
    assert response.json()["pick"] is not None
    bad = {"components": [{"kind": "image", "params": "7B", "images": 10}]}
    assert client.post("/api/v1/recommend", json=bad).status_code == 422
    models = client.get("/api/v1/models").json()
    assert {p["id"] for p in models["pipelines"]} == set(pipelines())
    path = tmp_path / "job.toml"
    path.write_text('[[components]]\nkind = "image"\nmodel = "sdxl"\nimages = 500\nsteps = 25\n')
    result = run_cli(*["recommend", "--file", str(path), "--json"])
    assert result.code == 0, result.stdout + result.stderr


# -- fine-tuning the denoiser ----------------------------------------------------------


def test_lora_adapters_count_as_peft_builds_them() -> None:
    """Rank-4 adapters on the diffusers scripts' default targets, as PEFT's
    ``add_adapter(LoraConfig(r=4, target_modules=...))`` counts them on the meta model."""
    from whichgpu.models.diffusion import DEFAULT_LORA_TARGETS, lora_params

    for name, want in [("sd-1.5", 797_184), ("sdxl", 5_806_080), ("sd-3-medium", 1_179_648),
                       ("flux.1-dev", 11_206_656)]:  # fmt: skip
        den = find_pipeline(name).denoiser
        assert lora_params(den, 4, DEFAULT_LORA_TARGETS[den.kind]) == want


def test_training_memory_and_time_follow_the_settings() -> None:
    from whichgpu.estimate.diffusion_training import image_train_memory, make_train_job

    sdxl, gpu = find_pipeline("sdxl"), _gpu("a100-80gb-sxm")
    lora = make_train_job(sdxl, gpu, "lora", batch=2)
    full = make_train_job(sdxl, gpu, "full", batch=2)
    assert (
        image_train_memory(sdxl, full).total_bytes > 2 * image_train_memory(sdxl, lora).total_bytes
    )
    ckpt = replace(lora, checkpointing=True)
    assert (
        image_train_memory(sdxl, ckpt).parts["activations"]
        < image_train_memory(sdxl, lora).parts["activations"]
    )
    from whichgpu.estimate.imaging import estimate_image_training

    assert (
        estimate_image_training(sdxl, ckpt, gpu).seconds_per_step
        > estimate_image_training(sdxl, lora, gpu).seconds_per_step
    )
    assert (
        estimate_image_training(sdxl, full, gpu).seconds_per_step
        > estimate_image_training(sdxl, lora, gpu).seconds_per_step
    )
    eight = make_train_job(sdxl, gpu, "full", batch=2, optimizer="adamw-8bit")
    assert image_train_memory(sdxl, eight).parts["optimizer"] == pytest.approx(
        image_train_memory(sdxl, full).parts["optimizer"] / 4
    )


def test_published_fine_tuning_peaks_within_a_quarter() -> None:
    """Out of sample (nothing fitted on memory): every published peak in
    validation/published_diffusion_training.csv within 25 %."""
    from whichgpu.estimate.imaging import estimate_image_training, published_training_runs

    text = (ROOT / "validation" / "published_diffusion_training.csv").read_text("utf-8")
    runs = [r for r in published_training_runs(text, load_catalog())
            if r.row["metric"] == "peak_memory"]  # fmt: skip
    assert len(runs) >= 10
    for run in runs:
        est = estimate_image_training(run.pipeline, run.job, run.gpu)
        assert abs(est.memory.total_gib / run.published - 1) < 0.25, run.row["id"]


def test_image_lora_estimate_and_recommend() -> None:
    result = run_cli(
        "estimate", "--task", "image-lora", "-m", "flux.1-dev", "--gpu", "rtx-4090",
        "--quant", "nf4", "--cache-latents", "--images", "1000", "--json",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    doc = json.loads(result.stdout)
    training = doc["image_training"]
    assert training["method"] == "lora" and training["trainable_params"] == 11_206_656
    assert training["memory_gib"] < 24 and doc["time_s"] > 0
    bad = run_cli("estimate", "--task", "image-finetune", "-m", "sdxl", "--quant", "nf4")
    assert bad.code == 2 and "image-lora" in bad.stderr
    rec = run_cli(
        "recommend", "--task", "image-lora", "-m", "sdxl", "--images", "500", "--epochs", "4",
        "--max-gpus", "2", "--json",
    )  # fmt: skip
    assert rec.code == 0, rec.stderr
    assert json.loads(rec.stdout)["pick"] is not None


def test_fit_takes_image_jobs_and_says_the_settings_that_fit() -> None:
    result = run_cli("fit", "--task", "image", "-m", "flux.1-dev", "--gpu", "rtx-4090", "--json")
    assert result.code == 0, result.stderr
    doc = json.loads(result.stdout)
    target = doc["target"]
    # FLUX.1 in BF16 (35 GiB whole) fits a 24 GB card only with sequential offload
    assert target["fits"] and "--cpu-offload sequential" in target["settings"]
    assert target["host_memory_gib"] > 30
    # a batch left open is chosen per GPU as estimate chooses it: 8 images a call on 80 GB
    big = {r["gpu"]: r for r in doc["gpus"]}["a100-80gb-sxm"]
    assert big["settings"] == "--batch 8" and big["needed_gib"] == pytest.approx(52.9, abs=0.1)
    text = run_cli("fit", "--task", "image-lora", "-m", "sdxl", "--gpu", "a6000")
    assert text.code == 0 and "it fits" in text.stdout


def test_an_image_model_where_a_language_model_is_asked_says_which_task() -> None:
    result = run_cli("estimate", "-m", "sdxl", "--gpu", "a6000")
    assert result.code == 2
    assert "set --task to image" in result.stderr and "unknown model" not in result.stderr


@pytest.mark.parametrize(
    ("engine", "harness"),
    [
        ("diffusers 0.17.0.dev0, torch 2.0, SDPA (AttnProcessor2_0), channels_last UNet, no compile",
         "diffusers"),
        ("diffusers, torch 2.0 nightly, SDPA (no compile)", "diffusers"),
        ("diffusers 0.17.0.dev0, torch 2.0, SDPA, torch.compile(unet, mode=reduce-overhead)",
         "diffusers-compile"),
        ("diffusers (torch 2.1, SDPA, compiled, NCHW channels)", "diffusers-compile"),
        ("diffusers, torch 1.13, vanilla attention", "diffusers-eager"),
        ("onediff nexfort compile (max-optimize)", "onediff"),
    ],
)  # fmt: skip
def test_a_measurement_is_timed_under_the_software_it_ran(engine: str, harness: str) -> None:
    """The import reads the harness from the row's engine: 'no compile' is not compiled (the
    diffusers torch 2.0 table's no-compile columns were once read as compiled, and the
    compiled harness fitted on a mix of both)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    from import_diffusion import harness as harness_of

    assert harness_of(engine) == harness


def test_a_pipeline_quantised_on_the_gpu_that_cannot_load_says_so() -> None:
    """No batch, offload or tiling lowers the 16-bit pipeline a GPU holds before torchao
    quantises it there: the answer names quantising as it loads instead."""
    done = run_cli("estimate", "-m", "flux.1-dev", "--task", "image", "--quant", "fp8",
                   "--quantize-on", "gpu", "--gpu", "rtx-4090")  # fmt: skip
    assert done.code == 0, done.stderr
    assert "before it is quantised on the GPU" in done.stdout
    assert "--quantize-on load" in done.stdout
