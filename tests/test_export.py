"""Exports of a pick: SkyPilot's own task parser, the Kubernetes OpenAPI schema, Slurm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import golden, run_cli
from whichgpu.frozen import evolve

SCENARIOS = Path(__file__).parent / "scenarios"
#: A 4-GPU training pick: Llama 2 13B full training capped at 4 GPUs, on the article's
#: catalog, is 4 × A100 80GB (ZeRO-3).
FOUR_GPU = (
    "--task",
    "train",
    "--model",
    "llama-2-13b",
    "--precision",
    "bf16-mixed",
    "--batch",
    "4",
    "--global-batch",  # pretraining's 4M-token step, stated (a given micro-batch is not
    "2048",  # multiplied into an accumulation unasked)
    "--checkpointing",
    "--tokens",
    "2e9",
    "--max-gpus",
    "4",
    "--catalog",
    "article",
)


def export(fmt: str, *args: str) -> str:
    result = run_cli("recommend", *args, "--export", fmt, "--run", "torchrun train.py")
    assert result.code == 0, result.stderr
    return result.stdout


def test_skypilot_task_parses_with_skypilot() -> None:
    text = export("skypilot", *FOUR_GPU)
    doc = yaml.safe_load(text)
    assert doc["resources"] == {"accelerators": "A100-80GB:4"}
    assert doc["num_nodes"] == 1 and doc["run"] == "torchrun train.py"
    assert text.startswith("# whichgpu pick for this workload: 4 × A100 80GB SXM")
    sky = pytest.importorskip(
        "sky", reason="SkyPilot is an optional test extra (pip install 'whichgpu[skypilot]')"
    )
    task = sky.Task.from_yaml_config(doc)
    (resources,) = task.resources
    assert resources.accelerators == {"A100-80GB": 4}


def test_skypilot_spot_and_multi_node() -> None:
    text = export(
        "skypilot",
        "--task",
        "train",
        "--model",
        "llama-2-13b",
        "--tokens",
        "2e9",
        "--checkpointing",
        "--max-gpus",
        "16",
        "--objective",
        "time",
        "--market",
        "spot",
    )
    doc = yaml.safe_load(text)
    assert doc["resources"]["use_spot"] is True
    count = int(doc["resources"]["accelerators"].split(":")[1])
    assert count <= 8 and doc["num_nodes"] >= 1
    sky = pytest.importorskip("sky", reason="SkyPilot is an optional test extra")
    sky.Task.from_yaml_config(doc)


def test_kubernetes_job_is_valid() -> None:
    text = export("kubernetes", *FOUR_GPU)
    doc = yaml.safe_load(text)
    assert doc["kind"] == "Job" and doc["apiVersion"] == "batch/v1"
    container = doc["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 4}
    import kubernetes_validate

    kubernetes_validate.validate(doc, "1.30.0", strict=True)


def test_kubernetes_mig_deployment_is_valid(tmp_path: Path) -> None:
    """D4 on one card: seven replicas, each requesting a 1g.10gb MIG slice."""
    text = (SCENARIOS / "d04-inference-at-scale.toml").read_text()
    path = tmp_path / "d04-one-card.toml"
    path.write_text(text.replace("max_gpus = 8", "max_gpus = 1"))
    out = export("kubernetes", "--file", str(path), "--catalog", "article")
    doc = yaml.safe_load(out)
    assert doc["kind"] == "Deployment" and doc["spec"]["replicas"] == 7
    limits = doc["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/mig-1g.10gb": 1}
    import kubernetes_validate

    kubernetes_validate.validate(doc, "1.30.0", strict=True)


def test_slurm_header_golden() -> None:
    text = export("slurm", *FOUR_GPU)
    assert "#SBATCH --gres=gpu:4" in text and "#SBATCH --nodes=1" in text
    golden("export_slurm_4gpu.sh", text)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--export", "docker"], "--export: unknown value 'docker'"),
        (
            [
                "--export",
                "skypilot",
                "--catalog",
                "article",
                "--max-gpus",
                "1",
                "--model",
                "llama-3.2-1b",
                "--task",
                "inference",
                "--services",
                "7",
                "--quant",
                "int4",
                "--hours",
                "10",
            ],
            "SkyPilot rents whole GPUs",
        ),
    ],
)
def test_export_errors_exit_2(args: list[str], expected: str) -> None:
    base = [] if "--task" in args else ["--task", "lora", "--model", "llama-2-7b"]
    result = run_cli("recommend", *base, *args)
    assert result.code == 2 and expected in result.stderr


def test_export_command_from_a_file() -> None:
    result = run_cli(
        "export", "slurm", "-f", str(SCENARIOS / "d02-train-1-7b.toml"), "--catalog", "article"
    )
    assert result.code == 0 and "#SBATCH --gres=gpu:2" in result.stdout


def test_services_become_pods_and_fixed_hours_do_not_stretch() -> None:
    text = export("kubernetes", "--task", "lora", "--model", "llama-3.1-8b", "--tokens", "2e8",
                  "--services", "3")  # fmt: skip
    doc = yaml.safe_load(text)
    assert doc["spec"]["parallelism"] == doc["spec"]["completions"] == 3
    slurm = run_cli(
        "export",
        "slurm",
        "-f",
        str(SCENARIOS / "d04-inference-at-scale.toml"),
        "--catalog",
        "article",
    )
    assert "#SBATCH --time=4-04:00:00" in slurm.stdout  # 100 h of serving, not stretched
    assert "#SBATCH --nodes=7" in slurm.stdout  # one node per isolated service


def test_exports_carry_the_chosen_configuration_as_launch_arguments() -> None:
    """Slurm, SkyPilot and Kubernetes all set WHICHGPU_LAUNCH_ARGS to the framework's own
    settings for the micro-batch, accumulation and recomputation whichgpu chose."""
    args = ("--task", "lora", "--model", "llama-3.1-8b", "--tokens", "2e8")
    slurm = run_cli("recommend", *args, "--framework", "torchtune", "--export", "slurm")
    assert slurm.code == 0, slurm.stderr
    line = next(x for x in slurm.stdout.splitlines() if x.startswith("export WHICHGPU_"))
    assert "batch_size=" in line and "gradient_accumulation_steps=" in line
    assert slurm.stdout.rstrip().endswith("python train.py $WHICHGPU_LAUNCH_ARGS")
    sky = yaml.safe_load(export("skypilot", *args))
    assert sky["envs"]["WHICHGPU_LAUNCH_ARGS"].startswith("--per_device_train_batch_size ")
    kube = yaml.safe_load(export("kubernetes", *args))
    (container,) = kube["spec"]["template"]["spec"]["containers"]
    assert [e["name"] for e in container["env"]] == ["HF_TOKEN", "WHICHGPU_LAUNCH_ARGS"]
    assert "whichgpu/training" in kube["metadata"]["annotations"]


def test_megatron_launch_arguments_name_the_layout() -> None:
    from whichgpu.commands.export import launch_arguments
    from whichgpu.inputs.job_input import make_job

    job = make_job(task="train", batch=1, gpus=64, tp=8, pp=2, zero=1, grad_accum=32)
    assert launch_arguments("megatron", job) == (
        "--micro-batch-size 1 --global-batch-size 128 --tensor-model-parallel-size 8 "
        "--pipeline-model-parallel-size 2 --use-distributed-optimizer --bf16 --seq-length 2048"
    )
    fp8 = evolve(make_job(task="train", batch=1, gpus=64, tp=8, pp=2, zero=1), math="fp8-mixed")
    assert launch_arguments("megatron", fp8).endswith(
        "--bf16 --fp8-format hybrid --seq-length 2048"
    )
    interleaved = make_job(task="train", batch=1, gpus=64, tp=8, pp=2, vp=4, zero=1)
    assert "--num-virtual-stages-per-pipeline-rank 4" in launch_arguments("megatron", interleaved)
    overlapped = make_job(task="train", batch=1, gpus=64, tp=8, pp=2, zero=1, tp_overlap=True)
    assert "--tp-comm-overlap --bf16" in launch_arguments("megatron", overlapped)


def test_the_hf_trainer_launches_in_the_precision_and_zero_stage_planned() -> None:
    """A full fine-tune planned as ZeRO-3 in bf16 mixed precision launched the HF Trainer with
    neither (plain DDP in fp32: 16 bytes a parameter on every GPU, out of memory for 13B):
    the arguments carry ``--bf16`` and the ZeRO stage as a DeepSpeed config, base64-encoded
    JSON (one word to any shell; the Trainer's ``HfDeepSpeedConfig`` decodes it)."""
    import base64

    from whichgpu.commands.export import launch_arguments
    from whichgpu.inputs.job_input import make_job

    job = make_job(task="finetune", precision="bf16-mixed", batch=4, gpus=8, zero=3)
    args = launch_arguments(None, job).split()
    assert args[:4] == ["--per_device_train_batch_size", "4", "--gradient_accumulation_steps", "1"]
    assert "--bf16" in args
    config = json.loads(base64.urlsafe_b64decode(args[args.index("--deepspeed") + 1]))
    assert config["zero_optimization"] == {"stage": 3}
    assert config["train_micro_batch_size_per_gpu"] == "auto"
    offloaded = make_job(task="finetune", precision="bf16-mixed", gpus=8, zero=3, offload="all")
    encoded = launch_arguments("trl", offloaded).split()[-1]
    zero = json.loads(base64.urlsafe_b64decode(encoded))["zero_optimization"]
    assert zero["offload_optimizer"]["device"] == zero["offload_param"]["device"] == "cpu"
    single = make_job(task="lora", precision="bf16-true", batch=2)
    assert launch_arguments(None, single).endswith("--bf16")  # one GPU: no DeepSpeed
    assert "--fp16" in launch_arguments(None, make_job(task="lora", precision="16-mixed"))
    from whichgpu.commands.train_launch import OWN_ARGUMENTS, trainer_zero

    for framework in (*OWN_ARGUMENTS, None, "trl"):  # what the export's comment decodes
        said = trainer_zero(framework, job)
        assert said == ("--deepspeed " in launch_arguments(framework, job)), framework
        tf32 = evolve(make_job(task="finetune", precision="32-true"), math="tf32")
    assert launch_arguments(None, tf32).endswith("--tf32 true")


def test_nemo_launch_arguments_are_nemo_run_overrides() -> None:
    """NeMo 2.0 runs a recipe (``nemo llm pretrain --factory …``) with dotted overrides; its
    tensor-parallel overlap needs sequence parallelism."""
    from whichgpu.commands.export import launch_arguments
    from whichgpu.inputs.job_input import make_job

    job = make_job(task="train", framework="nemo", gpus=64, tp=4, pp=4, vp=5, grad_accum=32)
    assert launch_arguments("nemo", job) == (
        "data.micro_batch_size=1 data.global_batch_size=128 "
        "trainer.strategy.tensor_model_parallel_size=4 "
        "trainer.strategy.pipeline_model_parallel_size=4 "
        "trainer.strategy.virtual_pipeline_model_parallel_size=5 "
        "trainer.strategy.sequence_parallel=True"
    )


def test_the_layout_search_splits_405b_layers_unevenly_and_interleaves() -> None:
    """126 layers: the search offers 4, 8, 16 stages (not only 126's divisors, 1 and 2), each
    interleaved in chunks of two layers (16 a stage → 8 chunks)."""
    from whichgpu.estimate.parallel import training_layouts
    from whichgpu.inputs.job_input import make_job
    from whichgpu.models import resolve_model

    arch = resolve_model("llama-3.1-405b")
    layouts = training_layouts(arch, make_job(task="train", batch=1), 512)
    stages = {(job.tp, job.pp): job.vp for job, _name in layouts if job.tp == 8}
    assert stages[(8, 8)] == 8 and stages[(8, 16)] == 4 and stages[(8, 1)] == 1


#: A serving pick of several replicas on one node: Llama 3.1 8B at 20 requests/s for 10 h
#: (on the full catalog, 4 × 2-GPU vLLM replicas on 8 × RTX A4000 when this was written).
SERVED = ("--task", "inference", "--model", "llama-3.1-8b", "--request-rate", "20",
          "--hours", "10", "--engine", "vllm")  # fmt: skip


def served_plan(text: str) -> tuple[int, int]:
    """(replicas, GPUs a replica) from an export's serving comment."""
    import re

    found = re.search(r"(\d+) × (\d+)-GPU replica", text)
    assert found is not None, text
    return int(found[1]), int(found[2])


def test_replicas_on_one_node_are_one_server_each(tmp_path: Path) -> None:
    """SkyPilot and Slurm start one server per replica the node holds, each on its own GPUs
    and port, and wait on them; they started one server on a replica's GPUs (4 × 2-GPU
    replicas on 8 GPUs ran one `vllm serve --tensor-parallel-size 2`). The node is the
    instance the offer sells: 8 RTX 4090s in one here (the shipped offers' 1-GPU VMs are
    a node each)."""
    prices = tmp_path / "prices.csv"
    prices.write_text("gpu,price_usd_per_h,market,gpus_per_instance\nrtx-4090,0.3,on-demand,8\n")
    served = (*SERVED, "--prices", str(prices))
    result = run_cli("recommend", *served, "--export", "skypilot")
    assert result.code == 0, result.stderr
    sky_text = result.stdout
    replicas, tp = served_plan(sky_text)
    assert replicas > 1  # the scenario must put several replicas on the node
    doc = yaml.safe_load(sky_text)
    assert doc["resources"]["accelerators"].endswith(f":{replicas * tp}")
    lines = doc["run"].splitlines()
    assert lines[-1] == "wait" and len(lines) == replicas + 1
    for i, line in enumerate(lines[:-1]):
        devices = ",".join(str(gpu) for gpu in range(i * tp, (i + 1) * tp))
        assert line.startswith(f"(export CUDA_VISIBLE_DEVICES={devices}; vllm serve ")
        assert f"--tensor-parallel-size {tp} " in line
        assert line.endswith(f"--host 0.0.0.0 --port {8000 + i}) &")
    slurm = run_cli("recommend", *served, "--export", "slurm")
    assert slurm.code == 0, slurm.stderr
    assert slurm.stdout.rstrip().endswith("\n".join(lines))
    import subprocess

    subprocess.run(["bash", "-n", "-c", doc["run"]], check=True)  # the script parses


def test_kubernetes_serves_one_replica_a_pod_without_device_selection() -> None:
    result = run_cli("recommend", *SERVED, "--export", "kubernetes")
    assert result.code == 0, result.stderr
    doc = yaml.safe_load(result.stdout)
    replicas, tp = served_plan(doc["metadata"]["annotations"]["whichgpu/serving"])
    assert doc["spec"]["replicas"] == replicas
    (container,) = doc["spec"]["template"]["spec"]["containers"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": tp}
    command = container["command"][2]
    assert command.startswith("vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size")
    assert "CUDA_VISIBLE_DEVICES" not in command and command.endswith("--port 8000")
    # review (2026-12-07): a gated model (Llama) downloads with the user's token, from the
    # Secret every export names, optional so that an open model runs without one
    (token,) = [e for e in container["env"] if e["name"] == "HF_TOKEN"]
    ref = token["valueFrom"]["secretKeyRef"]
    assert ref == {"name": "hf-token-secret", "key": "HF_TOKEN", "optional": True}
    sky = run_cli("recommend", *SERVED, "--export", "skypilot")
    assert "--secret HF_TOKEN" in sky.stdout.split("\nname:", 1)[0]  # a header comment
    slurm = run_cli("recommend", *SERVED, "--export", "slurm")
    assert "# a gated Hub model (Llama, Gemma) downloads with your token: export HF_TOKEN" in (
        slurm.stdout
    )


def served_command(*args: str, fmt: str = "slurm") -> str:
    result = run_cli("recommend", "--task", "inference", "--model", "llama-3.1-8b",
                     "--request-rate", "2", "--hours", "10", *args, "--export", fmt)  # fmt: skip
    assert result.code == 0, result.stderr
    if fmt == "kubernetes":
        return str(yaml.safe_load(result.stdout)["spec"]["template"]["spec"]["containers"][0]
                   ["command"][2])  # fmt: skip
    return result.stdout.rstrip().splitlines()[-1]


def run_with_fake(command: str, program: str, model: str | None) -> str:
    """``command`` run by bash with ``program`` a function that prints its arguments, one a
    line, and $WHICHGPU_MODEL set to ``model``: what the engine would be given."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "WHICHGPU_MODEL"}
    if model is not None:
        env["WHICHGPU_MODEL"] = model
    fake = f'{program}() {{ printf "%s\\n" "$@"; }}; '
    done = subprocess.run(["bash", "-c", fake + command], env=env, capture_output=True,
                          text=True)  # fmt: skip
    return done.stdout + done.stderr


@pytest.mark.parametrize(
    ("engine", "quant", "flag"),
    [
        ("vllm", "fp8", " --quantization fp8"),  # vLLM quantizes a BF16 checkpoint to FP8
        ("sglang", "fp8", " --quantization fp8"),  # so does SGLang (online quantization)
        ("tgi", "fp8", " --quantize fp8"),  # TGI: fp8 on the fly
        ("tgi", "int8", " --quantize bitsandbytes"),  # TGI: 8-bit bitsandbytes on the fly
        ("transformers", "int8", " --quantization bnb-8bit"),  # transformers serve
    ],
)
def test_quantizing_flags_reach_the_launch_command(engine: str, quant: str, flag: str) -> None:
    command = served_command("--engine", engine, "--quant", quant)
    assert command.endswith(flag) and "meta-llama/Llama-3.1-8B" in command


@pytest.mark.parametrize(
    ("engine", "quant", "program", "needs"),
    [
        ("vllm", "int4", "vllm", "an AWQ or GPTQ INT4 checkpoint"),  # AWQ/GPTQ: offline
        ("vllm", "int8", "vllm", "an INT8 W8A8 checkpoint"),  # llm-compressor W8A8
        ("sglang", "int4", "python", "an AWQ or GPTQ INT4 checkpoint"),
        ("tgi", "int4", "docker", "an AWQ or GPTQ INT4 checkpoint"),  # TGI: pre-quantized
        ("trtllm", "fp8", "trtllm-serve", "an FP8 checkpoint from TensorRT Model Optimizer"),
        ("transformers", "int4", "transformers", "an AWQ or GPTQ INT4 checkpoint"),
    ],
)
def test_pre_quantized_formats_never_serve_the_bf16_checkpoint(
    engine: str, quant: str, program: str, needs: str
) -> None:
    """INT4/INT8 used to reach no command: the BF16 checkpoint was served. Where the engine
    loads a pre-quantized checkpoint, the command takes it from $WHICHGPU_MODEL and stops,
    naming what to set, when it is unset."""
    result = run_cli("recommend", "--task", "inference", "--model", "llama-3.1-8b",
                     "--request-rate", "2", "--hours", "10", "--engine", engine, "--quant",
                     quant, "--export", "slurm")  # fmt: skip
    assert result.code == 0, result.stderr
    command = result.stdout.rstrip().splitlines()[-1]
    assert f"loads {needs} of the model, not its 16-bit weights" in result.stdout
    unset = run_with_fake(command, program, None)
    assert f"WHICHGPU_MODEL: set it to {needs} of meta-llama/Llama-3.1-8B" in unset
    given = run_with_fake(command, program, "org/Llama-3.1-8B-Q").splitlines()
    assert "org/Llama-3.1-8B-Q" in given and "meta-llama/Llama-3.1-8B" not in given


def test_every_engine_format_is_flagged_or_named_as_a_checkpoint() -> None:
    from whichgpu.job.engines import ENGINES

    for engine in ENGINES.values():
        for quant in engine.formats:
            flag, checkpoint = engine.quantization(quant)
            assert (flag == "") != (checkpoint is None), (engine.id, quant)


def test_tgi_runs_its_launcher_in_a_pod_and_its_image_on_a_host() -> None:
    pod = served_command("--engine", "tgi", fmt="kubernetes")
    assert pod.startswith("text-generation-launcher --model-id meta-llama/Llama-3.1-8B ")
    assert "docker" not in pod
    host = served_command("--engine", "tgi")
    assert host.startswith(
        "docker run --rm --gpus all --shm-size 1g --network host "
        "-v $HOME/.cache/huggingface:/data -e HF_TOKEN "
        "ghcr.io/huggingface/text-generation-inference:3.3.7 --model-id meta-llama/"
    )
    assert host.endswith("--hostname 0.0.0.0 --port 8080")


def test_llama_cpp_context_is_the_total_over_its_slots_from_a_hub_gguf() -> None:
    """llama-server's -c is the KV cache all -np slots share: 768 tokens (512 + 256) a
    sequence × the slots; -hf fetches the GGUF (-m wanted a local file)."""
    pod = served_command("--engine", "llama.cpp", "--quant", "q4_k_m", fmt="kubernetes")
    assert pod.startswith("/app/llama-server -hf ")
    args = run_with_fake(pod, "/app/llama-server", "org/L-GGUF:Q4_K_M")
    given = args.splitlines()
    slots = int(given[given.index("-np") + 1])
    assert slots > 1 and int(given[given.index("-c") + 1]) == 768 * slots
    assert given[given.index("-hf") + 1] == "org/L-GGUF:Q4_K_M"


def test_ollama_serves_and_pulls_the_model() -> None:
    pod = served_command("--engine", "ollama", "--quant", "q4_k_m", fmt="kubernetes")
    assert pod.startswith("OLLAMA_HOST=0.0.0.0:11434 OLLAMA_NUM_PARALLEL=1 ")
    assert "ollama serve & until OLLAMA_HOST=127.0.0.1:11434 ollama list" in pod
    assert 'ollama pull "${WHICHGPU_MODEL:?set it to a Q4_K_M GGUF (hf.co/' in pod
    assert pod.endswith("|| kill $!; wait")


def test_transformers_runs_its_server() -> None:
    """It ran `python -c "pipeline(...)"`, which loads the model and exits."""
    command = served_command("--engine", "transformers")
    assert command == "transformers serve meta-llama/Llama-3.1-8B --host 0.0.0.0 --port 8000"


def test_skypilot_refuses_a_gpu_it_has_no_name_for_in_one_line(tmp_path: Path) -> None:
    """An RTX A5500 pick (priced low here) has no SkyPilot name in the catalog: exit 2,
    one line naming the best option that has one, with its accelerators. The RTX 6000 Ada
    and the H100 NVL have RunPod's (sky/catalog/data_fetchers/fetch_runpod.py)."""
    prices = tmp_path / "prices.csv"
    prices.write_text("gpu,price_usd_per_h,market\nrtx-a5500,0.01,on-demand\n")
    result = run_cli("recommend", *SERVED, "--prices", str(prices), "--export", "skypilot")
    assert result.code == 2 and result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert "SkyPilot has no accelerator name for NVIDIA RTX A5500 in whichgpu's catalog" in line
    assert "; the best option it names is " in line and "(accelerators: " in line
    from whichgpu.catalog.store import load_catalog

    named = line.split("(accelerators: ")[1].split(":")[0]
    assert any(a.alias == named and a.scope == "skypilot" for a in load_catalog().aliases)
    kube = run_cli("recommend", *SERVED, "--prices", str(prices), "--export", "kubernetes")
    assert kube.code == 0 and "RTX A5500" in kube.stdout
    for gpu, name in (("rtx-6000-ada", "RTX6000-Ada"), ("h100-nvl", "H100-NVL")):
        prices.write_text(f"gpu,price_usd_per_h,market\n{gpu},0.01,on-demand\n")
        sky = run_cli("recommend", *SERVED, "--prices", str(prices), "--export", "skypilot")
        assert sky.code == 0 and f"accelerators: {name}:" in sky.stdout


def test_nodes_are_the_instances_the_offers_sell() -> None:
    """A pick rented as GB200 NVL72 trays (4 GPUs each, as the offers sell them) runs on
    nodes of 4: 64 GPUs are 16 Slurm nodes with --gres=gpu:4, not 8 of 8."""
    out = run_cli("recommend", "--task", "train", "-m", "llama-3.1-70b", "--seq", "16384",
                  "--framework", "megatron", "--tokens", "1e10", "--max-gpus", "64",
                  "--objective", "time", "--export", "slurm").stdout  # fmt: skip
    assert "64 × GB200" in out
    assert "#SBATCH --nodes=16" in out and "#SBATCH --gres=gpu:4" in out


def test_a_context_parallel_layout_reaches_the_launch_arguments() -> None:
    """Issue 46, item 1: a layout with context parallelism launches as one
    (Megatron-LM's --context-parallel-size)."""
    out = run_cli("recommend", "--task", "train", "-m", "llama-3.1-70b", "--seq", "16384",
                  "--framework", "megatron", "--tokens", "1e10", "--max-gpus", "64",
                  "--objective", "time", "--export", "slurm").stdout  # fmt: skip
    degree = out.split("context parallel ")[1].split()[0]
    assert int(degree) > 1 and f"--context-parallel-size {degree}" in out


def test_a_disaggregated_pick_exports_its_replicas_and_says_why() -> None:
    """A pick that runs prefill and decode apart needs a router the exports do not write:
    the script deploys the replicas of the same GPUs it was weighed against (never one
    server over all of them) and its comment says the plan's split and what it needs; a
    speculative plan's comment says the engine's options to add."""

    def script(*extra: str) -> str:
        done = run_cli("recommend", "--task", "inference", "-m", "llama-3.1-8b", "--prompt",
                       "8000", "--generate", "500", "--request-rate", "2", "--ttft", "2s",
                       *extra, "--export", "slurm")  # fmt: skip
        assert done.code == 0, done.stderr
        return done.stdout[done.stdout.index("#!/bin/bash") :]

    split = script(
        "--tpot", "20ms", "--mode", "buy", "--layout", "disaggregated"
    )  # one node of 8: split, not 8 VMs
    assert "prefill and decode apart" in split and "router" in split
    assert "--tensor-parallel-size 8" not in split
    # the replicas it was weighed against (4 x TP 2), on whichever engine the search chose
    assert split.count("vllm serve") + split.count("trtllm-serve") >= 2
    assert "ngram speculative decoding" in script("--tpot", "30ms", "--speculative", "ngram")


def test_separate_workers_on_an_engine_with_a_pd_mode_are_written_with_its_router() -> None:
    """On SGLang (whose PD mode is cited: --disaggregation-mode, sglang_router) the script
    starts each prefill and decode worker on its own GPUs and port, every GPU of the node
    once, and the router in front naming each worker (a prefill worker with its bootstrap
    port); a Kubernetes pod is one replica, so its manifest keeps the replicas and says so."""
    import re

    args = ("recommend", "--task", "inference", "-m", "llama-3.1-8b", "--prompt", "8000",
            "--generate", "500", "--request-rate", "2", "--ttft", "2s", "--tpot", "20ms",
            "--mode", "buy", "--engine", "sglang", "--layout", "disaggregated")  # fmt: skip
    done = run_cli(*args, "--export", "slurm")
    assert done.code == 0, done.stderr
    out = done.stdout
    prefill = re.findall(r"CUDA_VISIBLE_DEVICES=([\d,]+); .*--disaggregation-mode prefill", out)
    decode = re.findall(r"CUDA_VISIBLE_DEVICES=([\d,]+); .*--disaggregation-mode decode", out)
    assert prefill and decode
    gpus = [int(g) for devices in prefill + decode for g in devices.split(",")]
    assert sorted(gpus) == list(range(8))
    router = next(line for line in out.splitlines() if "sglang_router.launch_router" in line)
    assert router.count("--prefill http://127.0.0.1:") == len(prefill)
    assert router.count("--decode http://127.0.0.1:") == len(decode)
    assert "--pd-disaggregation" in router and " 8998" in router and "--port 8000" in router
    ports = re.findall(r"--port (\d+) --disaggregation-mode", out)
    assert len(set(ports)) == len(prefill) + len(decode)
    assert "the script starts them" in out
    pod = run_cli(*args, "--export", "kubernetes")
    assert pod.code == 0 and "stand in" in pod.stdout and "disaggregation-mode" not in pod.stdout


def test_separate_vllm_workers_are_written_with_nixl_and_vllm_router() -> None:
    """On vLLM (the NixlConnector usage guide; vllm-project/router's PD mode) each worker
    serves with the NixlConnector on its own port and its own NIXL side channel (5600 up:
    every worker on a host needs one), none on the router's 8000, and vllm-router names each
    prefill and decode worker; the SkyPilot task runs the same script."""
    import re

    args = ("recommend", "--task", "inference", "-m", "llama-3.1-8b", "--prompt", "8000",
            "--generate", "500", "--request-rate", "2", "--ttft", "2s", "--tpot", "20ms",
            "--mode", "buy", "--engine", "vllm", "--layout", "disaggregated")  # fmt: skip
    done = run_cli(*args, "--export", "slurm")
    assert done.code == 0, done.stderr
    workers = [line for line in done.stdout.splitlines() if "vllm serve" in line]
    assert len(workers) >= 2
    assert all('--kv-transfer-config \'{"kv_connector":"NixlConnector","kv_role":"kv_both"}\''
               in line for line in workers)  # fmt: skip
    sides = [re.search(r"VLLM_NIXL_SIDE_CHANNEL_PORT=(\d+)", line) for line in workers]
    ports = [re.search(r"--port (\d+)", line) for line in workers]
    assert all(sides) and all(ports)
    assert len({m.group(1) for m in sides if m}) == len(workers)
    worker_ports = {m.group(1) for m in ports if m}
    assert len(worker_ports) == len(workers) and "8000" not in worker_ports
    router = next(line for line in done.stdout.splitlines() if line.startswith("vllm-router"))
    assert "--vllm-pd-disaggregation" in router and "--port 8000" in router
    named = re.findall(r"--(?:prefill|decode) http://127.0.0.1:(\d+)", router)
    assert sorted(named) == sorted(worker_ports)
    assert "pip install vllm-router" in done.stdout
    sky = run_cli(*args, "--export", "skypilot")
    assert sky.code == 0 and "vllm-router --vllm-pd-disaggregation" in sky.stdout


def test_separate_tensorrt_llm_servers_are_written_with_trtllm_serve_disaggregated() -> None:
    """On TensorRT-LLM (its disaggregated-serving docs) each context and generation server
    is trtllm-serve on its own port with a cache_transceiver_config in its options file (the
    context servers' overlap scheduler off), and `trtllm-serve disaggregated` in front reads
    a config naming each, as many as it says, on the router's port 8000."""
    import re

    done = run_cli("recommend", "--task", "inference", "-m", "llama-3.1-8b", "--prompt", "8000",
                   "--generate", "500", "--request-rate", "2", "--ttft", "2s", "--tpot", "20ms",
                   "--mode", "buy", "--engine", "trtllm", "--layout", "disaggregated",
                   "--export", "slurm")  # fmt: skip
    assert done.code == 0, done.stderr
    out = done.stdout
    servers = [line for line in out.splitlines() if "trtllm-serve meta-llama" in line]
    contexts = [line for line in servers if "disable_overlap_scheduler: true" in line]
    assert contexts and len(contexts) < len(servers)
    assert all("cache_transceiver_config:\\n  backend: NIXL" in line for line in servers)
    ports = [m.group(1) for line in servers if (m := re.search(r"--port (\d+)", line))]
    assert len(set(ports)) == len(servers) and "8000" not in ports
    config = out[out.index("cat > /tmp/whichgpu-disagg.yaml") :]
    text = config[config.index("\n") + 1 : config.index("\nEOF")]
    doc = yaml.safe_load(text)
    assert doc["port"] == 8000
    named = doc["context_servers"]["urls"] + doc["generation_servers"]["urls"]
    assert sorted(u.rsplit(":", 1)[1] for u in named) == sorted(ports)
    assert doc["context_servers"]["num_instances"] == len(contexts)
    assert doc["generation_servers"]["num_instances"] == len(servers) - len(contexts)
    assert "trtllm-serve disaggregated -c /tmp/whichgpu-disagg.yaml &" in out


#: A served pick whose plan runs prefill and decode apart on 8 × H100 (long prompts, a tight
#: TPOT: DistServe's case), on vLLM, as asked (``--layout disaggregated``: the search alone
#: holds the split to the slow end of its wider range, where it serves no more)
PD_PICK = ("recommend", "--task", "inference", "-m", "llama-3.1-8b", "--prompt", "8000",
           "--generate", "500", "--request-rate", "2", "--ttft", "2s", "--tpot", "20ms",
           "--mode", "buy", "--layout", "disaggregated", "--engine", "vllm")  # fmt: skip


def test_a_served_pick_exports_as_an_nvidia_dynamo_deployment() -> None:
    """NVIDIA Dynamo's DynamoGraphDeployment (its vLLM disagg.yaml example): a Frontend, and
    the plan's prefill and decode workers as two services of its worker counts, each pod its
    worker's GPUs, running dynamo.vllm with the engine's own flags, the disaggregation mode
    and the NixlConnector (no --host/--port: the frontend serves HTTP); replicas without a
    split are one worker service; Dynamo takes no training job, nor an engine it does not
    run."""
    import re

    done = run_cli(*PD_PICK, "--export", "dynamo")
    assert done.code == 0, done.stderr
    text = done.stdout[done.stdout.index("# whichgpu pick") :]
    doc = yaml.safe_load(text)
    assert doc["apiVersion"] == "nvidia.com/v1alpha1" and doc["kind"] == "DynamoGraphDeployment"
    services = doc["spec"]["services"]
    assert services["Frontend"]["componentType"] == "frontend"
    prefill, decode = services["VllmPrefillWorker"], services["VllmDecodeWorker"]
    split = re.search(r"(\d+) prefill × (\d+) GPUs, (\d+) decode × (\d+)", text)
    assert split is not None
    p_workers, p_tp, d_workers, d_tp = (int(g) for g in split.groups())
    assert (prefill["replicas"], prefill["resources"]["limits"]["gpu"]) == (p_workers, str(p_tp))
    assert (decode["replicas"], decode["resources"]["limits"]["gpu"]) == (d_workers, str(d_tp))
    assert p_workers * p_tp + d_workers * d_tp == 8
    for service, mode in ((prefill, "prefill"), (decode, "decode")):
        main = service["extraPodSpec"]["mainContainer"]
        assert main["command"] == ["python3", "-m", "dynamo.vllm"]
        flags = main["args"]
        assert flags[:2] == ["--model", "meta-llama/Llama-3.1-8B"]
        assert flags[flags.index("--disaggregation-mode") + 1] == mode
        assert '"kv_connector":"NixlConnector"' in flags[flags.index("--kv-transfer-config") + 1]
        assert "--port" not in flags and "--host" not in flags
        gpus = service["resources"]["limits"]["gpu"]
        assert flags[flags.index("--tensor-parallel-size") + 1] == str(gpus)
    together = run_cli("recommend", "--task", "inference", "-m", "llama-3.1-8b",
                       "--request-rate", "5", "--engine", "sglang", "--export", "dynamo")  # fmt: skip
    assert together.code == 0, together.stderr
    agg = yaml.safe_load(together.stdout[together.stdout.index("# whichgpu pick") :])
    workers = {k: v for k, v in agg["spec"]["services"].items() if k != "Frontend"}
    assert list(workers) == ["worker"] and "subComponentType" not in workers["worker"]
    assert "--disaggregation-mode" not in workers["worker"]["extraPodSpec"]["mainContainer"]["args"]
    # TensorRT-LLM's workers: dynamo.trtllm's own flags, the options file as its JSON
    trt = run_cli(*PD_PICK[:-1], "trtllm", "--export", "dynamo")
    assert trt.code == 0, trt.stderr
    roles = yaml.safe_load(trt.stdout[trt.stdout.index("# whichgpu pick") :])["spec"]["services"]
    for role in ("prefill", "decode"):
        main = roles[role]["extraPodSpec"]["mainContainer"]
        assert main["command"] == ["python3", "-m", "dynamo.trtllm"]
        flags = main["args"]
        assert flags[flags.index("--tensor-parallel-size") + 1] == roles[role]["resources"][
            "limits"]["gpu"]  # fmt: skip
        options = json.loads(flags[flags.index("--override-engine-args") + 1])
        assert options["cache_transceiver_config"] == {"backend": "NIXL"}
        assert options.get("disable_overlap_scheduler") is (True if role == "prefill" else None)
        for theirs in ("--tp_size", "--host", "--port", "--extra_llm_api_options"):
            assert theirs not in flags
    for refused in (("--task", "inference", "-m", "llama-3.1-8b", "--request-rate", "5",
                     "--engine", "tgi"), ("--task", "lora", "-m", "llama-2-7b", "--tokens",
                     "1e8")):  # fmt: skip
        out = run_cli("recommend", *refused, "--export", "dynamo")
        assert (
            out.code == 2 and "Dynamo" in out.stderr and len(out.stderr.strip().splitlines()) == 1
        )


def test_a_served_pick_exports_as_llm_d_modelservice_values() -> None:
    """llm-d's ModelService chart (its values-pd.yaml example): the plan's prefill and
    decode workers as the chart's prefill and decode pods, each its workers' count and
    GPUs (parallelism.tensor), vLLM started by the chart (modelCommand vllmServe: the model,
    port, tensor-parallel size and served name are the chart's, never repeated in args) with
    the engine's other flags and the NixlConnector, the routing sidecar in front of decode;
    replicas without a split are decode pods alone, no sidecar; llm-d takes no training job,
    nor an engine other than vLLM."""
    import re

    done = run_cli(*PD_PICK, "--export", "llm-d")
    assert done.code == 0, done.stderr
    text = done.stdout[done.stdout.index("# whichgpu pick") :]
    values = yaml.safe_load(text)
    assert values["modelArtifacts"]["uri"] == "hf://meta-llama/Llama-3.1-8B"
    assert values["modelArtifacts"]["labels"]["llm-d.ai/model"] == "whichgpu-job"
    assert values["routing"]["proxy"]["enabled"] is True
    # vLLM behind the decode pods' sidecar on its target port; prefill on the service's
    ports = {role: values[role]["containers"][0]["ports"][0]["containerPort"]
             for role in ("prefill", "decode")}  # fmt: skip
    assert ports == {"prefill": 8000, "decode": 8200}
    split = re.search(r"(\d+) prefill × (\d+) GPUs, (\d+) decode × (\d+)", text)
    assert split is not None
    p_workers, p_tp, d_workers, d_tp = (int(g) for g in split.groups())
    for role, workers, tp in (("prefill", p_workers, p_tp), ("decode", d_workers, d_tp)):
        pod = values[role]
        assert pod["create"] is True and pod["replicas"] == workers
        assert pod["parallelism"]["tensor"] == tp
        container = pod["containers"][0]
        assert container["modelCommand"] == "vllmServe"
        assert container["resources"]["limits"]["nvidia.com/gpu"] == str(tp)
        flags = container["args"]
        assert '"kv_connector":"NixlConnector"' in flags[flags.index("--kv-transfer-config") + 1]
        for chart_flag in ("--port", "--host", "--tensor-parallel-size", "--served-model-name"):
            assert chart_flag not in flags
        assert "meta-llama/Llama-3.1-8B" not in flags and "--max-num-seqs" in flags
    assert p_workers * p_tp + d_workers * d_tp == 8
    together = run_cli("recommend", "--task", "inference", "-m", "llama-3.1-8b",
                       "--request-rate", "5", "--engine", "vllm", "--export", "llm-d")  # fmt: skip
    assert together.code == 0, together.stderr
    agg = yaml.safe_load(together.stdout[together.stdout.index("# whichgpu pick") :])
    assert agg["prefill"]["create"] is False and agg["routing"]["proxy"]["enabled"] is False
    assert "--kv-transfer-config" not in agg["decode"]["containers"][0]["args"]
    for refused in (("--task", "inference", "-m", "llama-3.1-8b", "--request-rate", "5",
                     "--engine", "sglang"), ("--task", "lora", "-m", "llama-2-7b", "--tokens",
                     "1e8"), ("--task", "inference", "-m", "llama-3.1-8b", "--quant",
                     "q4_k_m", "--request-rate", "1")):  # fmt: skip
        out = run_cli("recommend", *refused, "--export", "llm-d")
        assert out.code == 2 and "llm-d" in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
    fr = run_cli("--lang", "fr", "recommend", "--task", "inference", "-m", "llama-3.1-8b",
                 "--request-rate", "5", "--engine", "sglang", "--export", "llm-d")  # fmt: skip
    assert fr.code == 2 and " or " not in fr.stderr and "pour vllm, vllm@0.6" in fr.stderr


def test_kubernetes_asks_for_amd_gpus_in_rocm_images(tmp_path: Path) -> None:
    """An AMD pick's pods ask for amd.com/gpu (AMD's device plugin) and run ROCm images:
    vLLM's (vllm/vllm-openai-rocm, as vLLM's docs name it), ROCm's PyTorch for training; an
    engine whose ROCm image whichgpu does not know is refused in one line."""
    prices = tmp_path / "prices.csv"
    prices.write_text("gpu,price_usd_per_h,market\nmi300x,0.5,on-demand\n")
    served = ("--task", "inference", "--model", "llama-3.1-8b", "--request-rate", "20",
              "--hours", "10", "--prices", str(prices), "--export", "kubernetes")  # fmt: skip
    doc = yaml.safe_load(run_cli("recommend", *served, "--engine", "vllm").stdout)
    (container,) = doc["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "vllm/vllm-openai-rocm:latest"
    assert set(container["resources"]["limits"]) == {"amd.com/gpu"}
    refused = run_cli("recommend", *served, "--engine", "sglang")
    assert refused.code == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "no ROCm image of SGLang" in refused.stderr and "--image" in refused.stderr
    given = run_cli("recommend", *served, "--engine", "sglang", "--image", "sglang-rocm:mine")
    (container,) = yaml.safe_load(given.stdout)["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "sglang-rocm:mine"
    trained = run_cli("recommend", "--task", "lora", "--model", "llama-3.1-8b", "--tokens",
                      "1e8", "--prices", str(prices), "--export", "kubernetes")  # fmt: skip
    (container,) = yaml.safe_load(trained.stdout)["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "rocm/pytorch:latest"
    assert set(container["resources"]["limits"]) == {"amd.com/gpu"}


def test_a_replica_over_several_instances_is_refused_and_amd_containers_get_rocm_flags(
    tmp_path: Path,
) -> None:
    """A serving replica larger than the instance its offers sell (TP 8 on GB200 trays of 4)
    cannot be one server a node: every export that writes one refuses it in one line. On an
    AMD GPU an engine run from its image gets ROCm's devices, not NVIDIA's --gpus."""
    trays = tmp_path / "trays.csv"
    trays.write_text("gpu,price_usd_per_h,market,instance,gpus_per_instance\n"
                     "gb200,0.05,on-demand,tray4,4\n")  # fmt: skip
    for kind in ("slurm", "skypilot", "kubernetes"):
        result = run_cli("recommend", "--task", "inference", "-m", "llama-3.1-405b",
                         "--request-rate", "5", "--max-gpus", "16", "--prices", str(trays),
                         "--export", kind)  # fmt: skip
        assert result.code == 2 and "more than an instance of 4" in result.stderr
    amd = tmp_path / "amd.csv"
    amd.write_text("gpu,price_usd_per_h,market\nmi300x,0.5,on-demand\n")
    script = run_cli("recommend", *SERVED[:-1], "tgi", "--prices", str(amd), "--export",
                     "slurm", "--image", "tgi-rocm:mine").stdout  # fmt: skip
    assert "--device /dev/kfd --device /dev/dri --group-add video" in script
    assert "--gpus" not in script and "tgi-rocm:mine" in script


def test_a_training_pick_starts_a_process_a_gpu() -> None:
    """The default training run is the script under torchrun on several GPUs (one worker a
    GPU), with a rendezvous on the first node over several: Slurm through srun, one task a
    node, SkyPilot from its node environment; one GPU runs the script alone."""
    from whichgpu.commands.train_launch import train_launch

    assert train_launch("slurm", 1, 1) == "python train.py $WHICHGPU_LAUNCH_ARGS"
    assert train_launch("kubernetes", 1, 8).startswith("torchrun --standalone --nproc-per-node 8 ")
    sky = train_launch("skypilot", 4, 8)
    assert "--nnodes $SKYPILOT_NUM_NODES" in sky and "--node-rank $SKYPILOT_NODE_RANK" in sky
    out = run_cli("recommend", "--task", "train", "-m", "llama-3.1-70b", "--tokens", "1e10",
                  "--max-gpus", "64", "--objective", "time", "--export", "slurm").stdout  # fmt: skip
    nodes = int(out.split("#SBATCH --nodes=")[1].split()[0])
    per_node = int(out.split("#SBATCH --gres=gpu:")[1].split()[0])
    assert nodes > 1 and out.rstrip().endswith(train_launch("slurm", nodes, per_node))
    assert "srun --ntasks-per-node=1 bash -c 'torchrun --nnodes $SLURM_NNODES" in out
    import subprocess

    subprocess.run(["bash", "-n", "-c", out], check=True)  # the script parses


def test_tensorrt_llm_launches_with_a_step_that_holds_the_prompt() -> None:
    """TensorRT-LLM without chunked prefill takes whole prompts up to --max_num_tokens (8,192
    by default) and refuses longer ones: the launch line raises it to the prompt the plan
    serves, and keeps the default for shorter ones."""
    ask = ("recommend", "--task", "inference", "-m", "llama-3.1-8b", "--request-rate", "2",
           "--engine", "trtllm", "--generate", "200", "--export", "slurm")  # fmt: skip
    long = run_cli(*ask, "--prompt", "12000")
    assert long.code == 0, long.stderr
    assert "--max_num_tokens 12000 " in long.stdout
    short = run_cli(*ask, "--prompt", "1000")
    assert short.code == 0 and "--max_num_tokens 8192 " in short.stdout


def test_replicas_on_instances_of_their_own_are_a_skyserve_service() -> None:
    """Llama 3.1 8B at 10 requests/s picks four 1-GPU RTX 4090 VMs, one replica each: the task
    was num_nodes 4, four servers with nothing in front of them. It is a SkyServe service
    (SkyPilot's docs, "Serving Models"): a readiness probe, 4 replicas, each replica's GPU and
    port; a training pick keeps its task."""
    result = run_cli("recommend", "--task", "inference", "--model", "llama-3.1-8b",
                     "--request-rate", "10", "--tpot", "50ms", "--export", "skypilot")  # fmt: skip
    assert result.code == 0, result.stderr
    text = result.stdout
    doc = yaml.safe_load(text)
    assert doc["service"] == {"readiness_probe": "/v1/models", "replicas": 4}
    assert doc["resources"] == {"accelerators": "RTX4090:1", "ports": 8000}
    assert "num_nodes" not in doc and "--port 8000" in doc["run"]
    assert "sky serve up" in text
    sky = pytest.importorskip("sky", reason="SkyPilot is an optional test extra")
    task = sky.Task.from_yaml_config(doc)
    assert task.service is not None


def test_a_served_deployment_names_its_port_and_says_when_a_pod_is_ready() -> None:
    """A serving Deployment's pods listed no port and no readiness probe: a Service in front
    of them would send requests to pods still loading the model. The engine's port is the
    container's, and a pod is ready when its engine lists its model (TGI: /health); a
    command of the user's (--run) serves on a port whichgpu does not know, so says neither."""
    doc = yaml.safe_load(run_cli("recommend", *SERVED, "--export", "kubernetes").stdout)
    (container,) = doc["spec"]["template"]["spec"]["containers"]
    assert container["ports"] == [{"name": "http", "containerPort": 8000}]
    assert container["readinessProbe"]["httpGet"] == {"path": "/v1/models", "port": "http"}
    own = run_cli("recommend", *SERVED, "--export", "kubernetes", "--run", "python serve.py")
    (mine,) = yaml.safe_load(own.stdout)["spec"]["template"]["spec"]["containers"]
    assert "ports" not in mine and "readinessProbe" not in mine
    tgi = run_cli("recommend", *SERVED, "--engine", "tgi", "--export", "kubernetes")
    (pod,) = yaml.safe_load(tgi.stdout)["spec"]["template"]["spec"]["containers"]
    assert pod["readinessProbe"]["httpGet"]["path"] == "/health"
    assert pod["ports"][0]["containerPort"] == 8080
