"""NVFP4 (issue 44, item 4: "FP4 on Blackwell where you can cite it"): the format's bits, the
GPUs whose tensor cores run it, the engines that serve it and where, the checkpoints that
ship in it, and the calibration rows it unlocks."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from whichgpu.catalog import load_catalog
from whichgpu.job import QUANT_BITS


def test_nvfp4_weighs_four_and_a_half_bits() -> None:
    """E2M1 values and an E4M3 scale per block of 16 (NVIDIA's NVFP4 blog, 2025-06-24)."""
    assert QUANT_BITS["nvfp4"] == 4 + 8 / 16


def test_the_blackwell_and_cdna4_gpus_and_only_they_have_fp4_tensor_cores() -> None:
    """Each figure is the dense one the vendor's sheet implies, cited per field; B300's is
    not half its sparse one (105 of 144 PFLOPS for 8 GPUs); the MI355X's FP4 units take MXFP4,
    not NVFP4."""
    catalog = load_catalog()
    fp4 = {g.id: g.fp4_tensor_dense_tflops for g in catalog.gpus if g.fp4_tensor_dense_tflops}
    assert fp4 == {
        "b200": 9000, "gb200": 10000, "b300": 13125, "rtx-pro-6000-blackwell": 2000,
        "rtx-pro-6000-blackwell-max-q": 1755.5,
        "rtx-5090": 1676, "rtx-5080": 900.4,
        "mi355x": 10066.4,  # CDNA 4's MXFP4, which NVFP4 does not run on
    }  # fmt: skip
    assert {g.id for g in catalog.gpus if g.architecture in ("Blackwell", "CDNA 4")} == set(fp4)
    from whichgpu.estimate.perf import runs_natively, tensor_tflops

    mi355x = catalog.gpu("mi355x")
    assert not runs_natively(mi355x, "nvfp4")
    assert tensor_tflops(mi355x, "nvfp4") == mi355x.fp16_tensor_dense_tflops
    for gpu in catalog.gpus:
        if gpu.id in fp4:
            assert gpu.fp8_tensor_dense_tflops and fp4[gpu.id] >= 2 * gpu.fp8_tensor_dense_tflops


def test_the_math_runs_on_fp4_units_where_there_are_some_else_dequantised() -> None:
    from whichgpu.catalog.records import Benchmark
    from whichgpu.estimate.efficiency import math_unit
    from whichgpu.estimate.perf import tensor_tflops

    catalog = load_catalog()
    b200, h100 = catalog.gpu("b200"), catalog.gpu("h100-sxm")
    bench = Benchmark(id="x", gpu="b200", gpus=1, regime="llm-serve", model="llama-3.1-8b",
                      precision="nvfp4", metric="output_throughput", value=1.0,
                      unit="tokens/s", harness="trtllm", source="x", as_of="2026")  # fmt: skip
    assert math_unit(bench, b200) == "fp4" and tensor_tflops(b200, "nvfp4") == 9000
    assert math_unit(bench, h100) == "dequant-16"
    assert tensor_tflops(h100, "nvfp4") == h100.fp16_tensor_dense_tflops


def test_tensorrt_llm_needs_blackwell_for_nvfp4_and_names_vllm_for_hopper() -> None:
    """TensorRT-LLM and SGLang run NVFP4 on Blackwell's FP4 tensor cores only; vLLM also
    from SM 8.0 through its Marlin FP4 kernels (weight-only)."""
    refused = run_cli("estimate", "-m", "llama-3.3-70b", "--task", "inference", "--gpu",
                      "h100-sxm", "--quant", "nvfp4", "--engine", "trtllm")  # fmt: skip
    assert refused.code == 2
    assert "compute capability 10.0" in refused.stderr and "vLLM" in refused.stderr
    served = run_cli("estimate", "-m", "llama-3.3-70b", "--task", "inference", "--gpu",
                     "h100-sxm", "--quant", "nvfp4", "--engine", "vllm", "--json")  # fmt: skip
    assert served.code == 0, served.stderr


def test_a_modelopt_checkpoint_is_planned_in_its_format() -> None:
    """TensorRT Model Optimizer writes ``quant_method: modelopt`` and the format in
    ``quant_algo`` (NVIDIA's NVFP4 and FP8 checkpoints on the Hub)."""
    from whichgpu.models.hf_fields import _checkpoint_quant

    def quant(method: str, algo: str | None = None) -> str | None:
        config: dict[str, object] = {"quant_method": method}
        if algo is not None:
            config["quant_algo"] = algo
        return _checkpoint_quant({"quantization_config": config})

    assert quant("modelopt", "NVFP4") == "nvfp4" and quant("modelopt", "FP8") == "fp8"
    assert quant("modelopt_fp4") == "nvfp4" and quant("modelopt", "W4A8_AWQ") is None


def test_llama_70b_on_one_b200_in_nvfp4_reads_as_tensorrt_llm_published_it() -> None:
    """The perf-overview's B200 FP4 rows (catalog/data/benchmarks.csv) calibrate the FP4
    unit: 7,007 output tokens/s at 1,000/1,000 on one B200. The estimate is within the
    serving fit's error of it, its KV cache in FP8 as Model Optimizer exports it."""
    doc = json.loads(run_cli("estimate", "-m", "llama-3.3-70b", "--task", "inference", "--gpu",
                             "b200", "--quant", "nvfp4", "--engine", "trtllm", "--prompt",
                             "1000", "--generate", "1000", "--json").stdout)  # fmt: skip
    serving = doc["serving"]
    assert serving["kv_dtype"] == "fp8"
    per_replica = serving["capacity_per_replica"]["output_tokens_per_s"]
    total = per_replica * serving["replicas"]
    assert total == pytest.approx(7007, rel=0.15)


def test_a_served_model_names_the_nvfp4_plan_on_blackwell_with_the_vendors_caveat() -> None:
    """Issue 44, item 4: the search also plans the model in NVFP4 on the GPUs whose tensor
    cores run it and names the option that beats the pick by more than its error, beside the
    FP8 one, the caveat said as NVIDIA's own figure; an FP8 checkpoint (DeepSeek-V3's) is
    planned in NVFP4 too, as NVIDIA publishes such checkpoints."""
    from whichgpu.catalog import load_catalog

    catalog = load_catalog()
    args = ("recommend", "--task", "inference", "-m", "llama-3.1-70b", "--request-rate", "15",
            "--tpot", "50ms", "--json")  # fmt: skip
    doc = json.loads(run_cli(*args).stdout)
    said = {r["params"]["quant"]: r for r in doc["reasons"] if r["code"].startswith("reason_quant")}
    assert set(said) == {"fp8", "nvfp4"}
    fp4 = said["nvfp4"]
    assert fp4["code"] == "reason_quant_cheaper_nvfp4" and "a vendor's figure" in fp4["text"]
    assert fp4["params"]["usd_per_h"] < said["fp8"]["params"]["usd_per_h"]
    named = fp4["params"]["option"].split(" × ")[-1]
    assert catalog.resolve(named).fp4_tensor_dense_tflops
    # asked in NVFP4, nothing lower is offered again
    asked = json.loads(run_cli(*args, "--quant", "nvfp4").stdout)
    assert not [r for r in asked["reasons"] if r["code"].startswith("reason_quant")]
    deepseek = json.loads(run_cli("recommend", "--task", "inference", "-m", "deepseek-v3",
                                  "--request-rate", "5", "--tpot", "50ms", "--json").stdout)  # fmt: skip
    notes = deepseek["infeasible"] if deepseek["pick"] is None else deepseek["reasons"]
    assert [n for n in notes if n["params"].get("quant") == "nvfp4"]
