"""Model architectures: exact parameter counts, presets, config parsing, the generic rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whichgpu.errors import InvalidInput, UnknownName
from whichgpu.models import arch_from_config_text, resolve_model
from whichgpu.models.generic import generic_config, parse_param_count
from whichgpu.models.hf import parse_config
from whichgpu.models.presets import find_preset, presets

# Exact counts: sum(p.numel()) of the model transformers builds from each preset on the meta
# device (tied weights once), recorded when the presets were assembled (their notes).
TRANSFORMERS_COUNTS = {
    "bert-base-uncased": 109_482_240,  # BertModel with pooler (the MLM head adds 32,058)
    "bert-large-uncased": 335_141_888,  # BertModel with pooler
    "deepseek-v2-lite": 15_706_484_224,
    "deepseek-v3": 671_026_404_352,  # without the MTP module, as DeepseekV3ForCausalLM builds it
    "falcon-40b": 41_303_293_952,
    "falcon-7b": 6_921_720_704,
    "gemma-2-27b": 27_227_128_320,
    "gemma-2-2b": 2_614_341_888,
    "gemma-2-9b": 9_241_705_984,
    "gpt-j-6b": 6_050_882_784,  # the model card's 6,053,381,344 is not what the config builds
    "gpt2": 124_439_808,
    "gpt2-medium": 354_823_168,
    "gpt2-large": 774_030_080,
    "gpt2-xl": 1_557_611_200,
    "llama-2-7b": 6_738_415_616,
    "llama-2-13b": 13_015_864_320,
    "llama-2-70b": 68_976_648_192,
    "llama-3.1-8b": 8_030_261_248,
    "llama-3.1-70b": 70_553_706_496,
    "llama-3.3-70b": 70_553_706_496,  # Llama 3.1 70B's architecture
    "llama-3.1-405b": 405_853_388_800,
    "llama-3.2-1b": 1_235_814_400,
    "llama-3.2-3b": 3_212_749_824,
    "mistral-7b-v0.1": 7_241_732_096,  # from the config's shapes (the Hub's 7.24B)
    "mistral-7b-v0.3": 7_248_023_552,
    "mixtral-8x7b": 46_702_792_704,
    "mixtral-8x22b": 140_620_634_112,
    "mpt-7b": 6_649_286_656,
    "mpt-30b": 29_957_200_896,
    "phi-3-mini-4k": 3_821_079_552,
    "phi-3-medium-4k": 13_960_238_080,
    "qwen1.5-moe-a2.7b": 14_315_784_192,
    "qwen2.5-0.5b": 494_032_768,
    "qwen2.5-1.5b": 1_543_714_304,
    "qwen2.5-7b": 7_615_616_512,
    "qwen2.5-14b": 14_770_033_664,
    "qwen2.5-32b": 32_763_876_352,
    "qwen2.5-72b": 72_706_203_648,
    "qwen3-8b": 8_190_735_360,
    "qwen3-32b": 32_762_123_264,
    "qwen3-30b-a3b": 30_532_122_624,
    "qwen3-235b-a22b": 235_093_634_560,
    "deepseek-r1": 671_026_404_352,  # V3's architecture
    "kimi-k2": 1_026_408_209_408,  # built as DeepseekV3ForCausalLM, its repository's class
    "gpt-oss-20b": 20_914_757_184,
    "gpt-oss-120b": 116_829_156_672,
    "llama-4-scout": 107_769_861_120,  # Llama4ForCausalLM of its text_config
    "llama-4-maverick": 400_711_848_960,  # Llama4ForCausalLM of its text_config
    # transformers 4.50.3 (meta device): Gemma3ForCausalLM for the 1B, else
    # Gemma3ForConditionalGeneration with its SigLIP tower (416,866,032) and projector
    "gemma-3-1b": 999_885_952,
    "gemma-3-4b": 4_300_079_472,
    "gemma-3-12b": 12_187_325_040,
    "gemma-3-27b": 27_432_406_640,
    "resnet-50": 25_557_032,  # torchvision's resnet50: 25,557,032
    "vit-b-16": 86_567_656,  # torchvision's vit_b_16: 86,567,656
}


def test_every_preset_is_counted() -> None:
    assert set(presets()) == set(TRANSFORMERS_COUNTS)


@pytest.mark.parametrize(("preset", "count"), sorted(TRANSFORMERS_COUNTS.items()))
def test_exact_parameter_counts(preset: str, count: int) -> None:
    assert resolve_model(preset).total_params == count


@pytest.mark.parametrize(
    ("preset", "active", "published"),
    [
        ("mixtral-8x7b", 12_879_925_248, 12.9e9),  # "12.9B active" (Mistral)
        ("mixtral-8x22b", 39_152_031_744, 39e9),
        ("qwen1.5-moe-a2.7b", 2_689_173_504, 2.7e9),
        ("deepseek-v3", 37_552_282_624, 37e9),  # "37B activated"
        ("deepseek-r1", 37_552_282_624, 37e9),  # V3's architecture
        ("kimi-k2", 32_861_477_888, 32e9),  # "32B activated"
        ("qwen3-30b-a3b", 3_353_032_704, 3.3e9),  # "3.3B activated"
        ("qwen3-235b-a22b", 22_190_763_520, 22e9),  # "22B activated"
        ("llama-4-scout", 17_172_894_720, 17e9),  # "17B activated parameters"
        ("llama-4-maverick", 17_184_691_200, 17e9),
        # OpenAI's "5.1B" and "3.6B active" leave out the embedding table (579M)
        ("gpt-oss-120b", 5_711_982_912, 5.1e9 + 201_088 * 2_880),
        ("gpt-oss-20b", 4_187_440_704, 3.6e9 + 201_088 * 2_880),
    ],
)
def test_active_parameters_of_moe_models(preset: str, active: int, published: float) -> None:
    arch = resolve_model(preset)
    assert arch.active_params == active
    assert arch.active_params == pytest.approx(published, rel=0.03)


def test_published_counts_agree_with_the_exact_ones_to_their_rounding() -> None:
    for preset in presets().values():
        if preset.published_params:
            exact = resolve_model(preset.id).total_params
            assert exact == pytest.approx(preset.published_params, rel=0.08), preset.id


@pytest.mark.parametrize(
    ("typed", "preset"),
    [("llama-3.1-8b", "llama-3.1-8b"), ("meta-llama/Llama-3.1-8B", "llama-3.1-8b"),
     ("Llama 3.1 8B", "llama-3.1-8b"), ("Mixtral-8x7B-v0.1", "mixtral-8x7b"), ("GPT2", "gpt2"),
     # the repository's name before Meta renamed it
     ("meta-llama/Meta-Llama-3.1-70B", "llama-3.1-70b"), ("Meta-Llama-3.1-405B", "llama-3.1-405b"),
     ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b")],
)  # fmt: skip
def test_presets_resolve_forgivingly(typed: str, preset: str) -> None:
    assert find_preset(typed).id == preset


def test_an_unknown_model_gets_closest_matches() -> None:
    with pytest.raises(UnknownName) as caught:
        find_preset("llama-3.1-9b")
    assert "llama-3.1-8b" in caught.value.suggestions


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"hidden_size": 8}, "config.json: missing 'model_type'"),
        ({"model_type": "llama", "hidden_size": 64}, "config.json (llama): missing 'num_hidden_layers'"),
        ({"model_type": "rwkv"}, "model_type 'rwkv' is not supported; supported: "),
        ({"model_type": "llama", "hidden_size": -1, "num_hidden_layers": 2}, "'hidden_size' must be a whole number >= 0"),
        ([1, 2], "config.json must be a JSON object"),
    ],
)  # fmt: skip
def test_bad_configs_are_one_clear_error(config: object, message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_config(config)  # type: ignore[arg-type]
    assert message in caught.value.message()


def test_a_config_file_is_data() -> None:
    text = json.dumps(find_preset("gpt2").config)
    assert arch_from_config_text(text, "x/config.json").total_params == 124_439_808
    with pytest.raises(InvalidInput, match="not valid JSON"):
        arch_from_config_text("{'model_type': 'gpt2'}", "config.json")


@pytest.mark.parametrize(
    ("text", "count"), [("7B", 7_000_000_000), ("350M", 350_000_000), ("1.5b", 1_500_000_000)]
)
def test_param_sizes(text: str, count: int) -> None:
    assert parse_param_count(text) == count


@pytest.mark.parametrize("text", ["7 GB", "-3B", "0.1M", "99T"])
def test_bad_param_sizes(text: str) -> None:
    with pytest.raises(InvalidInput):
        parse_param_count(text)


@pytest.mark.parametrize("size", ["1B", "7B", "13B", "70B", "175B"])
def test_the_generic_rule_lands_near_the_asked_size(size: str) -> None:
    arch = resolve_model(params=size)
    assert arch.total_params == pytest.approx(parse_param_count(size), rel=0.08)
    config = generic_config(parse_param_count(size))
    assert config["hidden_size"] % 256 == 0


def test_the_generic_13b_is_llama_2_13b_s_shape() -> None:
    assert resolve_model(params="13B").total_params == resolve_model("llama-2-13b").total_params


# configs checked as data (issue 16) ------------------------------------------------------
LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
         "num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008}  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"num_hidden_layers": 10**400}, "holds a number of more than 30 digits"),
        ({"num_hidden_layers": 10**12}, "'num_hidden_layers' is at most 1,000"),
        ({"num_hidden_layers": 0}, "'num_hidden_layers' must be at least 1 (got 0)"),
        ({"num_key_value_heads": 0}, "'num_key_value_heads' must be at least 1 (got 0)"),
        ({"vocab_size": 0}, "'vocab_size' must be at least 1 (got 0)"),
        ({"num_attention_heads": 31}, "hidden size 4,096 is not a multiple of the 31 attention"),
        ({"num_key_value_heads": 64}, "64 key/value heads must divide the 32 attention heads"),
        ({"num_key_value_heads": 5}, "5 key/value heads must divide the 32 attention heads"),
        ({"vocab_size": -1}, "'vocab_size' must be a whole number >= 0"),
    ],
)
def test_absurd_configs_are_one_line_naming_the_key(
    change: dict[str, object], message: str
) -> None:
    import json

    from whichgpu.errors import InvalidInput
    from whichgpu.models import arch_from_config_text

    with pytest.raises(InvalidInput) as caught:
        arch_from_config_text(json.dumps({**LLAMA, **change}), "bad.json")
    assert message in caught.value.message() and "\n" not in caught.value.message()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 500_000 + "]" * 500_000, "nested more than 32 levels deep"),
        ('{"a": ' * 40 + "1" + "}" * 40, "nested more than 32 levels deep"),
        ('{"model_type": "llama", "hidden_size": NaN}', "NaN is not a JSON number"),
        ('{"model_type": "llama", "x": Infinity}', "Infinity is not a JSON number"),
        (" " * (1024 * 1024 + 1), "at most 1,048,576"),
    ],
)
def test_malformed_config_files_are_one_line(text: str, message: str) -> None:
    from whichgpu.errors import InvalidInput
    from whichgpu.models import arch_from_config_text

    with pytest.raises(InvalidInput) as caught:
        arch_from_config_text(text, "bad.json")
    assert message in caught.value.message()


def test_a_deep_config_file_is_one_line_in_the_cli(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    result = run_cli("fit", "-m", str(path), "--task", "inference")
    assert result.code == 2 and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and "nested more than 32 levels" in result.stderr


def test_models_lists_the_presets_smallest_first_with_a_filter() -> None:
    from tests.conftest import run_cli

    doc = json.loads(run_cli("models", "--json").stdout)
    ids = [m["id"] for m in doc["models"]]
    assert len(ids) == 54 and ids[0] == "resnet-50" and ids[-1] == "kimi-k2"
    qwen = json.loads(run_cli("models", "--family", "qwen", "--max-params", "10B", "--json").stdout)
    assert [m["id"] for m in qwen["models"]] == [
        "qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-7b", "qwen3-8b"
    ]  # fmt: skip
    mixtral = next(m for m in doc["models"] if m["id"] == "mixtral-8x7b")
    assert mixtral["experts"] == 8 and mixtral["active_params"] < mixtral["params"]
    bad = run_cli("models", "--min-params", "lots")
    assert bad.code == 2 and "--min-params: takes a size like 7B" in bad.stderr


def test_an_unknown_model_points_at_the_models_list() -> None:
    with pytest.raises(UnknownName) as caught:
        resolve_model("zzzzzzzz")
    # named by the shell: a function in Python, the command in the CLI, an endpoint
    assert "whichgpu.list_models() lists them" in caught.value.message()
    from tests.conftest import run_cli

    assert "'whichgpu models' lists them" in run_cli("fit", "-m", "zzzzzzzz").stderr


def test_models_fits_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """No name or number cut at 80 columns (issue 18's rule for every table)."""
    from tests.conftest import golden, run_cli

    monkeypatch.setenv("COLUMNS", "80")
    result = run_cli("models")
    assert result.code == 0
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    assert "…" not in result.stdout
    golden("models_80.txt", result.stdout)


@pytest.mark.parametrize(
    ("pasted", "preset"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("deepseek-ai/DeepSeek-R1", "deepseek-r1"),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
        ("mistralai/Mistral-7B-v0.1", "mistral-7b-v0.1"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3"),
        ("google/gemma-2-9b-it", "gemma-2-9b"),
        ("meta-llama/Llama-2-7b-chat-hf", "llama-2-7b"),
        ("qwen/qwen2.5-7b-instruct", "qwen2.5-7b"),
        ("Qwen/Qwen3-8B-Base", "qwen3-8b"),
        ("moonshotai/Kimi-K2-Instruct", "kimi-k2"),
        ("openai/gpt-oss-120b", "gpt-oss-120b"),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama-4-scout"),
        ("meta-llama/Llama-4-Maverick-17B-128E", "llama-4-maverick"),
    ],
)
def test_hub_ids_as_people_paste_them_resolve_offline(pasted: str, preset: str) -> None:
    """Issue 45: a Hub id of a chat, instruction or base variant names the preset of its
    architecture, case aside, with no network."""
    assert find_preset(pasted).id == preset


def test_a_variant_word_alone_does_not_invent_a_model() -> None:
    with pytest.raises(UnknownName):
        find_preset("someone/Unknown-Model-Instruct")


def test_gpt_oss_is_served_in_its_checkpoints_mxfp4_experts() -> None:
    """Issue 45, item 5: gpt-oss ships its experts in MXFP4 and the rest in BF16
    (config.json's quantization_config); served with no format asked, it is planned so, as
    OpenAI sizes it: the 20B "within 16GB", the 120B on one 80 GB GPU (at least 60 GB)."""
    from tests.conftest import run_cli

    assert resolve_model("gpt-oss-120b").checkpoint_quant == "mxfp4"
    peaks = {}
    for model, gpu in (("gpt-oss-20b", "rtx-4090"), ("gpt-oss-120b", "h100-sxm")):
        result = run_cli("fit", "-m", model, "--task", "inference", "--gpu", gpu, "--json")
        assert result.code == 0, result.stderr
        peaks[model] = json.loads(result.stdout)["total_gib"]
    assert 12 < peaks["gpt-oss-20b"] < 16 and 60 < peaks["gpt-oss-120b"] < 70


def test_a_format_of_experts_on_a_dense_model_is_one_line() -> None:
    from tests.conftest import run_cli

    result = run_cli("estimate", "-m", "llama-3.1-8b", "--task", "inference", "--gpu", "h100",
                     "--quant", "mxfp4")  # fmt: skip
    assert result.code == 2 and "has no experts" in result.stderr


def test_gemma3_fills_what_its_config_leaves_to_transformers() -> None:
    """Google's Gemma 3 files leave the window, heads and activation to Gemma3TextConfig:
    a config without them is Gemma 3 as transformers builds it (a 4,096-token window on
    five layers in six, GELU), not every layer global under SiLU."""
    from whichgpu.models.hf import parse_config

    sparse = {"model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
              "num_hidden_layers": 34}  # fmt: skip
    arch = parse_config(sparse, "sparse")
    assert (arch.sliding_window, arch.sliding_layers) == (4096, 29)
    assert (arch.n_heads, arch.n_kv_heads, arch.head_dim, arch.vocab_size) == (8, 4, 256, 262_208)
