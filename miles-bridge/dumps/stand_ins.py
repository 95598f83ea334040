"""Stand-ins for what Miles' dump writers import but never call on this path, so they run on CPU with
Debian's python3-torch. Only modules that fail to import are replaced; each entry says why.

Nothing here is Miles code: these are empty placeholders that raise if anything calls them (pybase64:
the standard library's base64 functions).
"""

import base64
import sys
import types
from pathlib import Path

REPLACED = []


def _unavailable(name):
    def call(*_args, **_kwargs):
        raise RuntimeError(f"{name} is a stand-in (miles-bridge/dumps/stand_ins.py); the dump path must not call it")

    call.__name__ = name.rsplit(".", 1)[-1]
    return call


def _module(name, why, **attributes):
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    module.__harness_stand_in__ = why
    sys.modules[name] = module
    REPLACED.append((name, why))
    return module


def _pybase64_standin():
    """The newer Miles' miles/utils/routed_experts.py (imported by its types.py and debug_data.py,
    sii-avalanche/miles@4d412b5a) imports pybase64 at module level; 31f1ca96's writers never do."""
    try:
        import pybase64  # noqa: F401
    except ImportError:
        # The standard library gives the same bytes for what it decodes (a routed-experts payload,
        # absent from these dumps).
        _module(
            "pybase64",
            "not in Debian; the newer Miles' routed_experts.py imports it at module level, the standard "
            "library's base64 gives the same bytes",
            b64decode=base64.b64decode,
            b64encode=base64.b64encode,
        )


def install(tracking=False, miles_root=None):
    """Installs the stand-ins for modules that cannot be imported here; leaves real ones alone. With
    `tracking`, log_rollout_data runs too: its tracking backend (wandb/tensorboard) is replaced by a no-op.
    `miles_root` is the tree the writers come from (what it holds decides what it imports)."""
    try:
        import ray  # noqa: F401  (Miles' own image has it: use the real one)
    except ImportError:
        why = (
            "Debian ships no ray; miles.utils.object_store and miles.utils.ray_utils import it at module "
            "level, but the conversion, split and dump writers never call it (the object store is only "
            "used by split_train_data_by_dp, which this path replaces with the *_raw split functions)"
        )
        ray = _module("ray", why)
        util = _module("ray.util", why)
        strategies = _module(
            "ray.util.scheduling_strategies",
            why,
            NodeAffinitySchedulingStrategy=_unavailable("ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy"),
        )
        state = _module("ray.util.state", why, list_nodes=_unavailable("ray.util.state.list_nodes"))
        ray.util = util
        util.scheduling_strategies = strategies
        util.state = state
        for name in ("remote", "get", "put", "init", "is_initialized", "get_actor", "kill"):
            setattr(ray, name, _unavailable(f"ray.{name}"))
    if miles_root is not None and (Path(miles_root) / "miles" / "utils" / "routed_experts.py").is_file():
        _pybase64_standin()
    try:
        import torch.distributed.device_mesh  # noqa: F401
    except ImportError:
        # save_debug_train_data (the wrapper) asks the process group for its rank; the writer below it,
        # save_debug_train_data_for_rank, takes rank/cp_rank/cp_size as arguments and is what runs here.
        _module(
            "miles.backends.training_utils.parallel",
            "Debian's torch build has no torch.distributed.device_mesh, which this module imports; only "
            "get_parallel_state is referenced (by save_debug_train_data, not called here)",
            get_parallel_state=_unavailable("miles.backends.training_utils.parallel.get_parallel_state"),
        )
    try:
        from pydantic import TypeAdapter  # noqa: F401  (pydantic 2, as Miles' image has)
    except ImportError:
        # Debian bookworm ships pydantic 1; miles.utils.logging_utils imports the event logger, which
        # uses pydantic 2's TypeAdapter. The dump path reaches logging_utils only through
        # miles.utils.misc -> http_utils, which imports configure_logger_raw without calling it.
        _module(
            "miles.utils.logging_utils",
            "its event-logger import needs pydantic 2 (Debian has 1); configure_logger_raw is imported by "
            "miles.utils.http_utils but the dump writers never call it",
            configure_logger=_unavailable("miles.utils.logging_utils.configure_logger"),
            configure_logger_raw=_unavailable("miles.utils.logging_utils.configure_logger_raw"),
            configure_strict_async_warnings=_unavailable("miles.utils.logging_utils.configure_strict_async_warnings"),
        )
    if tracking:
        try:
            from pydantic import TypeAdapter  # noqa: F401,F811
            import miles.utils.tracking_utils  # noqa: F401
        except ImportError:
            # log_rollout_data prints its dict with logger.info (the line a launcher log holds), then hands
            # it to tracking.log for wandb/tensorboard; that module needs pydantic 2. The log line is the
            # product here; the backend call is dropped.
            package = _module(
                "miles.utils.tracking_utils",
                "its backends need pydantic 2 (Debian has 1); log_rollout_data's logger.info line is what "
                "is kept, the tracking.log call after it (wandb/tensorboard) does nothing here",
            )
            package.__path__ = []
            package.tracking = _module(
                "miles.utils.tracking_utils.tracking",
                "see miles.utils.tracking_utils",
                log=lambda *_args, **_kwargs: None,
            )
    return REPLACED


def install_sample_adapter(sample_class):
    """The tree's 31f1ca96 conversion (miles/ray/rollout/train_data_conversion.py) reads `sample.adapter`
    (Multi-LoRA); the newer Sample of sii-avalanche/miles@4d412b5a miles/utils/types.py predates that
    field. Without an adapter the conversion takes its adapter-less branch, as every recipe sample does:
    the class gets `adapter = None`. Nothing is changed where the field exists."""
    if "adapter" in getattr(sample_class, "__dataclass_fields__", {}) or hasattr(sample_class, "adapter"):
        return
    sample_class.adapter = None
    REPLACED.append(
        (
            "miles.utils.types.Sample.adapter",
            "this tree's Sample (sii-avalanche/miles@4d412b5a) predates Multi-LoRA adapters, which the tree's "
            "train_data_conversion.py (31f1ca96) reads; None, the adapter-less branch every recipe sample takes",
        )
    )


def install_adapter_ref(types_module):
    """The newer normalised metrics.py imports `AdapterRef` from miles.utils.types only to annotate its
    rollout keys; sii-avalanche/miles@4d412b5a's types.py predates it (as scripts/oracles/metrics_next_oracle.py)."""
    if hasattr(types_module, "AdapterRef"):
        return
    types_module.AdapterRef = object
    REPLACED.append(
        (
            "miles.utils.types.AdapterRef",
            "this tree's types.py predates Multi-LoRA adapters; the metrics.py given only names it in annotations",
        )
    )


def load_module_from(name, path):
    """A Miles module from a file outside the tree (--metrics-py), under its own module name."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
