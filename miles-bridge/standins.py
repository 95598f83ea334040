"""What the bridge puts in place of modules that cannot be imported on a Debian machine, each named with
its reason: the one stand-in installer of miles-bridge/. `install_dependency_standins` (the session server,
the rollout driver, the oracles) and `install_dump_standins` (Miles' dump writers, dumps/write_dumps.py)
only act where the real import fails, so in Miles' own image the real packages are used;
`install_toy_tokenizer` always acts (there is no model checkpoint on this path).
"""

import base64
import importlib
import importlib.util
import json
import logging
import sys
import types
from pathlib import Path

# Modules the session path needs and that Debian ships: (import name, Debian package).
REQUIRED_DEBIAN_MODULES = [
    ("fastapi", "python3-fastapi"),
    ("starlette", "python3-starlette"),
    ("uvicorn", "python3-uvicorn"),
    ("httpx", "python3-httpx"),
    ("pydantic", "python3-pydantic"),
    ("numpy", "python3-numpy"),
    ("setproctitle", "python3-setproctitle"),
]


class Replacements:
    """The record of what was replaced and why (printed at start, so a run says what it is)."""

    def __init__(self):
        self.items: list[tuple[str, str]] = []

    def add(self, name: str, why: str) -> None:
        self.items.append((name, why))


def precondition(message: str) -> "NoReturn":  # noqa: F821
    """What every launcher here does when the machine lacks something: one line, exit 3 (docs/cli.md)."""
    print(f"precondition: {message}", file=sys.stderr, flush=True)
    sys.exit(3)


def importable(name: str) -> bool:
    try:
        importlib.import_module(name)
        return True
    except ImportError:
        return False


def missing_debian_modules() -> list[tuple[str, str]]:
    return [(name, package) for name, package in REQUIRED_DEBIAN_MODULES if not importable(name)]


def standin_module(name: str, **attrs) -> types.ModuleType:
    """A module made here and registered as `name`, so Miles' own import of it finds this one."""
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module


def standin_package(name: str) -> types.ModuleType:
    """The package `name` as already imported, else an empty one made here, linked into its parent package
    (made the same way), so a stand-in submodule can be reached by attribute as Python's import would."""
    existing = sys.modules.get(name)
    if existing is not None:
        return existing
    module = standin_module(name)
    module.__path__ = []
    parent, _, leaf = name.rpartition(".")
    if parent:
        setattr(standin_package(parent), leaf, module)
    return module


def _torch_standin(replaced: Replacements) -> None:
    if importable("torch"):
        return

    class _Type:
        """A placeholder type: on the session path torch names only appear in annotations."""

    standin_module("torch", dtype=type("dtype", (_Type,), {}), Size=type("Size", (tuple,), {}), Tensor=type("Tensor", (_Type,), {}))
    replaced.add("torch", "not installed; the session path uses it only in type annotations (miles/utils/types.py)")


def _unavailable(name: str):
    """A callable standing in for `name` that refuses to run: the paths here import it but never call it."""

    def call(*_args, **_kwargs):
        raise RuntimeError(f"{name} is a stand-in (miles-bridge/standins.py); this path must not call it")

    call.__name__ = name.rsplit(".", 1)[-1]
    return call


def _ray_standin(replaced: Replacements) -> None:
    if importable("ray"):
        return
    ray = standin_package("ray")
    ray.__getattr__ = lambda name: _unavailable(f"ray.{name}")  # any attribute: a callable that refuses
    # What miles.utils.object_store and miles.utils.ray_utils import at module level (the dump writers).
    standin_package("ray.util")
    strategies = standin_package("ray.util.scheduling_strategies")
    strategies.NodeAffinitySchedulingStrategy = _unavailable("ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy")
    standin_package("ray.util.state").list_nodes = _unavailable("ray.util.state.list_nodes")
    replaced.add(
        "ray",
        "not in Debian; imported by miles/utils/misc.py, object_store.py and ray_utils.py but never called on "
        "the session path or by the dump writers (the object store is only used by split_train_data_by_dp, "
        "which the dump path replaces with the *_raw split functions)",
    )


def _pybase64_standin(replaced: Replacements) -> None:
    if importable("pybase64"):
        return
    standin_module("pybase64", b64decode=base64.b64decode, b64encode=base64.b64encode)
    replaced.add("pybase64", "not in Debian; the standard library's base64 gives the same bytes")


def _safetensors_standin(replaced: Replacements) -> None:
    if importable("safetensors.numpy"):
        return
    import safetensors_format

    package = standin_module("safetensors", SafetensorError=safetensors_format.SafetensorError)
    package.__path__ = []
    package.numpy = standin_module("safetensors.numpy", save=safetensors_format.save, load=safetensors_format.load)
    replaced.add(
        "safetensors.numpy",
        "not in Debian; miles-bridge/safetensors_format.py writes the same container format",
    )


def _logging_utils_standin(replaced: Replacements) -> None:
    if importable("miles.utils.logging_utils"):
        return
    sys.modules.pop("miles.utils.logging_utils", None)

    def configure_logger_raw(name: str = "") -> None:
        logging.basicConfig(level=logging.INFO, format=f"[%(asctime)s {name}] %(filename)s:%(lineno)d - %(message)s")

    standin_module(
        "miles.utils.logging_utils",
        configure_logger_raw=configure_logger_raw,
        configure_logger=_unavailable("miles.utils.logging_utils.configure_logger"),
        configure_strict_async_warnings=_unavailable("miles.utils.logging_utils.configure_strict_async_warnings"),
    )
    replaced.add(
        "miles.utils.logging_utils",
        "its audit imports need pydantic 2 (Discriminator, TypeAdapter); only configure_logger_raw is used here "
        "(the session path calls it; the dump writers import it through miles.utils.http_utils)",
    )


def _pydantic_model_dump_shim(replaced: Replacements) -> None:
    import pydantic

    if hasattr(pydantic.BaseModel, "model_dump"):
        return

    def model_dump(self, *, mode: str = "python", **kwargs):
        return json.loads(self.json(**kwargs)) if mode == "json" else self.dict(**kwargs)

    pydantic.BaseModel.model_dump = model_dump
    replaced.add(
        "pydantic.BaseModel.model_dump",
        f"pydantic {pydantic.VERSION} is version 1; model_dump(mode='json') is json.loads(model.json())",
    )


def install_dependency_standins(miles_root: Path) -> Replacements:
    replaced = Replacements()
    sys.path.insert(0, str(miles_root))
    _torch_standin(replaced)
    _ray_standin(replaced)
    _pybase64_standin(replaced)
    _safetensors_standin(replaced)
    _pydantic_model_dump_shim(replaced)
    _logging_utils_standin(replaced)
    return replaced


def _training_parallel_standin(replaced: Replacements) -> None:
    if importable("torch.distributed.device_mesh"):
        return
    # save_debug_train_data (the wrapper) asks the process group for its rank; the writer below it,
    # save_debug_train_data_for_rank, takes rank/cp_rank/cp_size as arguments and is what runs here.
    name = "miles.backends.training_utils.parallel"
    standin_module(name, get_parallel_state=_unavailable(f"{name}.get_parallel_state"))
    replaced.add(
        name,
        "Debian's torch build has no torch.distributed.device_mesh, which this module imports; only "
        "get_parallel_state is referenced (by save_debug_train_data, not called here)",
    )


def _tracking_standin(replaced: Replacements) -> None:
    if importable("pydantic") and hasattr(importlib.import_module("pydantic"), "TypeAdapter") and importable(
        "miles.utils.tracking_utils"
    ):
        return
    sys.modules.pop("miles.utils.tracking_utils", None)
    # log_rollout_data prints its dict with logger.info (the line a launcher log holds), then hands it to
    # tracking.log for wandb/tensorboard; that module needs pydantic 2. The log line is the product here.
    standin_package("miles.utils.tracking_utils").tracking = standin_module(
        "miles.utils.tracking_utils.tracking", log=lambda *_args, **_kwargs: None
    )
    replaced.add(
        "miles.utils.tracking_utils",
        "its backends need pydantic 2 (Debian has 1); log_rollout_data's logger.info line is what is kept, "
        "the tracking.log call after it (wandb/tensorboard) does nothing here",
    )


def install_dump_standins(miles_root: Path, *, tracking: bool) -> Replacements:
    """What Miles' dump writers import but never call on this path, so they run on CPU with Debian's
    python3-torch. With `tracking`, log_rollout_data runs too: its tracking backend becomes a no-op."""
    replaced = Replacements()
    sys.path.insert(0, str(miles_root))
    _ray_standin(replaced)
    _training_parallel_standin(replaced)
    _logging_utils_standin(replaced)
    if (miles_root / "miles" / "utils" / "routed_experts.py").is_file():
        # The newer Miles' routed_experts.py (imported by its types.py and debug_data.py,
        # sii-avalanche/miles@4d412b5a) imports pybase64 at module level; 31f1ca96's writers never do.
        _pybase64_standin(replaced)
    if tracking:
        _tracking_standin(replaced)
    return replaced


def install_sample_adapter(sample_class, replaced: Replacements) -> None:
    """The tree's 31f1ca96 conversion (miles/ray/rollout/train_data_conversion.py) reads `sample.adapter`
    (Multi-LoRA); the newer Sample of sii-avalanche/miles@4d412b5a miles/utils/types.py predates that
    field. Without an adapter the conversion takes its adapter-less branch, as every recipe sample does:
    the class gets `adapter = None`. Nothing is changed where the field exists."""
    if "adapter" in getattr(sample_class, "__dataclass_fields__", {}) or hasattr(sample_class, "adapter"):
        return
    sample_class.adapter = None
    replaced.add(
        "miles.utils.types.Sample.adapter",
        "this tree's Sample (sii-avalanche/miles@4d412b5a) predates Multi-LoRA adapters, which the tree's "
        "train_data_conversion.py (31f1ca96) reads; None, the adapter-less branch every recipe sample takes",
    )


def install_adapter_ref(types_module, replaced: Replacements) -> None:
    """The newer normalised metrics.py imports `AdapterRef` from miles.utils.types only to annotate its
    rollout keys; sii-avalanche/miles@4d412b5a's types.py predates it (as scripts/oracles/metrics_next_oracle.py)."""
    if hasattr(types_module, "AdapterRef"):
        return
    types_module.AdapterRef = object
    replaced.add(
        "miles.utils.types.AdapterRef",
        "this tree's types.py predates Multi-LoRA adapters; the metrics.py given only names it in annotations",
    )


def load_module_from(name: str, path: str) -> types.ModuleType:
    """A Miles module from a file outside the tree (--metrics-py), under its own module name."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def install_load_tokenizer(load_tokenizer, why: str, replaced: Replacements) -> None:
    """Miles' `load_tokenizer` becomes `load_tokenizer`: there is no model checkpoint on this path."""
    try:
        processing_utils = importlib.import_module("miles.utils.processing_utils")
    except ImportError:
        sys.modules.pop("miles.utils.processing_utils", None)

        def _multimodal(*_args, **_kwargs):
            raise RuntimeError("multimodal inputs are not supported by the CPU session-server launcher")

        processing_utils = standin_module(
            "miles.utils.processing_utils",
            encode_image_for_rollout_engine=_multimodal,
            extract_multimodal_train_inputs=_multimodal,
        )
    processing_utils.load_tokenizer = load_tokenizer
    replaced.add("miles.utils.processing_utils.load_tokenizer", why)


def install_toy_tokenizer(
    miles_root: Path, vocabulary: list[str], replaced: Replacements, *, tito_package: bool = False
) -> None:
    """`load_tokenizer` and `get_tito_tokenizer` become the harness's toy (always: no checkpoint here).
    `tito_package` (capabilities.py): the checkout's TITO classes live in `tito_tokenizer/base.py`."""
    from toy_tokenizer import ToyTokenizer

    tokenizer = ToyTokenizer(vocabulary)

    def load_tokenizer(name_or_path, chat_template_path=None, **kwargs):
        return tokenizer

    install_load_tokenizer(load_tokenizer, "the harness's toy tokenizer (no model checkpoint)", replaced)

    package_dir = miles_root / "miles" / "utils" / "chat_template_utils"
    if tito_package:
        _install_toy_on_tito_package(miles_root, package_dir, replaced)
        return
    try:
        chat_template_utils = importlib.import_module("miles.utils.chat_template_utils")
    except ImportError:
        # Its template module needs transformers, jinja2, huggingface_hub and sglang; the submodules the
        # session path uses (message_matcher_hub, token_seq_comparator) are imported from the checkout.
        for name in [n for n in sys.modules if n.startswith("miles.utils.chat_template_utils")]:
            sys.modules.pop(name)
        chat_template_utils = standin_module("miles.utils.chat_template_utils")
        chat_template_utils.__path__ = [str(package_dir)]
        import toy_tito

        tito_module = standin_module(
            "miles.utils.chat_template_utils.tito_tokenizer", TITOTokenizer=toy_tito.ToyTITOTokenizer
        )
        tito_module.get_tito_tokenizer = toy_tito.get_tito_tokenizer
        chat_template_utils.tito_tokenizer = tito_module
    import toy_tito

    chat_template_utils.get_tito_tokenizer = toy_tito.get_tito_tokenizer
    replaced.add(
        "miles.utils.chat_template_utils.get_tito_tokenizer",
        "the toy tokenizer's default TITO family (miles-bridge/toy_tito.py)",
    )


def _install_toy_on_tito_package(miles_root: Path, package_dir: Path, replaced: Replacements) -> None:
    """The package `chat_template_utils` without its `__init__` (which imports every model family), its
    `template` module's third-party imports stood in, and the toy family on Miles' own `base.TITOTokenizer`."""
    import newer_session
    import qwen3_mode

    for name in [n for n in sys.modules if n.startswith("miles.utils.chat_template_utils")]:
        sys.modules.pop(name)
    chat_template_utils = standin_module("miles.utils.chat_template_utils")
    chat_template_utils.__path__ = [str(package_dir)]
    qwen3_mode.install_template_module_standins(replaced)
    newer_session.install_toy_tito_package(miles_root, chat_template_utils, replaced)
