#!/usr/bin/env python3
"""Runs Miles' own rollout path (radixark/miles) on CPU for `harness differential`: the rollout function
the recipe names (`--rollout-function-path generate.RolloutFn` → `agentic_tool_call.generate` →
`swe_agent_function.run` → `reward_func` → `check_no_aborted`), then what `RolloutManager.generate` does
with its output (`postprocess_rollout_data`, `log_rollout_data` with the trackers' dict captured,
`convert_samples_to_train_data`), against servers the harness started (policy, session server, Harbor).

Miles' args are the recipe's argv parsed with the CLI surface's argparse records (the rest at Miles'
argparse defaults), plus the values `miles_validate_args` and the rollout manager derive at start (each
printed as `derived <dest>=<value>: <where>`). Only what cannot be imported on a Debian machine is
replaced (each printed as `replaced <name>: <why>`, see standins.py).

Reads the request (JSON) from --request; writes the result (JSON) to --out. Exit codes: 0 done (or
--preflight passed), 2 usage, 3 unmet precondition (no checkout, a Debian module missing: the message
names the package), 1 Miles raised (the traceback on stderr).
"""

import argparse
import hashlib
import json
import os
import sys
import time
from argparse import Namespace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import newer_session  # noqa: E402
import qwen3_mode  # noqa: E402
import standins  # noqa: E402

# The recipe's rollout function and agent function live in this example directory (the recipe's PYTHONPATH).
EXAMPLE_DIR = Path("examples/swe-agent-harbor-docker")
ROLLOUT_MODULES = [EXAMPLE_DIR / "generate.py", EXAMPLE_DIR / "swe_agent_function.py"]

# Modules the rollout path needs beyond the session server's: (import name, Debian package).
ROLLOUT_DEBIAN_MODULES = [
    ("tqdm", "python3-tqdm"),
    ("packaging", "python3-packaging"),
    ("torch", "python3-torch"),
    ("yaml", "python3-yaml"),
    ("aiohttp", "python3-aiohttp"),
    ("sympy", "python3-sympy"),
    ("pylatexenc", "python3-pylatexenc"),
]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--miles-root", required=True, help="a radixark/miles checkout")
    parser.add_argument("--request", help="the request JSON file (see harness differential)")
    parser.add_argument("--out", help="where to write the result JSON")
    parser.add_argument("--preflight", action="store_true", help="only check the checkout and the modules")
    parser.add_argument(
        "--tokenizer",
        choices=["toy", "qwen3"],
        default="toy",
        help="with --preflight: also check what the qwen3 mode needs (the request names its own tokenizer)",
    )
    parser.add_argument("--tokenizer-dir", help="with --preflight --tokenizer qwen3: the tokenizer directory")
    return parser.parse_args(argv)


def check_preconditions(miles_root: Path, tokenizer: str = "toy", tokenizer_dir=None) -> None:
    for module in ROLLOUT_MODULES:
        if not (miles_root / module).is_file():
            standins.precondition(f"--miles-root {miles_root}: no {module} (not a radixark/miles checkout)")
    missing = standins.missing_debian_modules() + [
        (name, package) for name, package in ROLLOUT_DEBIAN_MODULES if not standins.importable(name)
    ]
    if tokenizer == "qwen3":
        missing += [(n, p) for n, p in qwen3_mode.QWEN3_DEBIAN_MODULES if not standins.importable(n)]
    if missing:
        standins.precondition(
            "Python modules cannot be imported: "
            + ", ".join(f"{name} (Debian package {package})" for name, package in missing)
        )
    if tokenizer == "qwen3":
        wrong = qwen3_mode.check_tokenizer_dir(Path(tokenizer_dir or qwen3_mode.default_tokenizer_dir()))
        if wrong:
            standins.precondition(f"--tokenizer qwen3: {wrong}")


# --- Miles' args ----------------------------------------------------------------------------------


# The `type`s of the surface's value flags that turn a string default into something else.
DEFAULT_CONVERTERS = {"int": int, "float": float, "json.loads": json.loads}


def miles_namespace(surface_path: str, overlays: list, argv: list) -> Namespace:
    """Every dest of the CLI surface at its argparse default, then the argv parsed by the same records."""
    import argparse_oracle

    surface = json.loads(Path(surface_path).read_text(encoding="utf-8"))
    records = argparse_oracle.records_of(surface, overlays)
    values = {}
    for record in records:
        # A default the surface keeps only as source text (an env read, an enum member) names none of the
        # flags the rollout path reads; it stays None.
        values.setdefault(record["dest"], record["default"] if record["default_is_literal"] else None)
        # argparse passes a string default through the argument's type when the flag is not given
        # (--apply-chat-template-kwargs: type=json.loads, default="{}" is {} in Miles' args).
        if record["type"] in DEFAULT_CONVERTERS and isinstance(values[record["dest"]], str):
            values[record["dest"]] = DEFAULT_CONVERTERS[record["type"]](values[record["dest"]])
    parser = argparse_oracle.build_parser(records)
    parser.exit_on_error = False
    namespace, extras = parser.parse_known_args(argv)
    if extras:
        raise SystemExit(f"rollout_driver.py: the recipe argv has tokens the surface does not know: {extras}")
    values.update(vars(namespace))
    return Namespace(**values)


def derive(args: Namespace, request: dict, derived: list) -> None:
    """What `miles_validate_args` and the rollout manager set before the rollout runs (radixark/miles@31f1ca96)."""

    def put(dest, value, where):
        setattr(args, dest, value)
        derived.append(f"derived {dest}={value!r}: {where}")

    if args.colocate and not args.rollout_num_gpus:
        put(
            "rollout_num_gpus",
            args.actor_num_gpus_per_node * args.actor_num_nodes,
            "miles/utils/arguments.py miles_validate_args (colocate: every actor GPU)",
        )
    if args.over_sampling_batch_size is None:
        put("over_sampling_batch_size", args.rollout_batch_size, "miles/utils/arguments.py miles_validate_args")
    policy = request["policy_url"].removeprefix("http://").rstrip("/")
    host, port = policy.rsplit(":", 1)
    put("sglang_router_ip", host, "miles/ray/rollout/rollout_server.py (the router the rollout servers start)")
    put("sglang_router_port", int(port), "miles/ray/rollout/rollout_server.py")
    session = request["session_url"].removeprefix("http://").rstrip("/")
    session_host, session_port = session.rsplit(":", 1)
    put("session_server_ip", session_host, "miles/ray/rollout/router_manager.py start_session_server")
    put("session_server_ports", [int(session_port)], "miles/ray/rollout/router_manager.py start_session_server")
    if request.get("session_server_instance_id"):
        put(
            "session_server_instance_ids",
            {int(session_port): request["session_server_instance_id"]},
            "miles/ray/rollout/router_manager.py start_session_server (the instance id per port)",
        )
    # The recipe writes details and tokenizer dumps under its output dir; nothing is dumped here.
    put("dump_details", None, "the recipe's output directory is not on this machine (nothing is dumped)")
    if request.get("tokenizer") == "qwen3":
        derive_fixed_template(args, put)


def derive_fixed_template(args: Namespace, put) -> None:
    """`miles_validate_args` for a named TITO family (radixark/miles@31f1ca96 miles/utils/arguments.py): the
    family's fixed template becomes --chat-template-path and its kwargs join --apply-chat-template-kwargs,
    read from Miles' own registry (resolve_fixed_chat_template). The recipe passes neither flag."""
    from miles.utils.chat_template_utils import resolve_fixed_chat_template

    # Miles' own refusals, word for word (unreachable with the recipe's argv, which passes neither flag).
    if args.chat_template_path is not None:
        raise ValueError(
            f"--chat-template-path cannot override the template registered for "
            f"--tito-model={args.tito_model}; use --tito-model=default for a custom template"
        )
    path, kwargs = resolve_fixed_chat_template(args.tito_model)
    where = f"miles/utils/arguments.py miles_validate_args (--tito-model {args.tito_model}'s fixed template)"
    if path is not None:
        put("chat_template_path", path, where)
    merged = dict(args.apply_chat_template_kwargs or {})
    for key, value in kwargs.items():
        if key in merged and merged[key] != value:
            raise ValueError(
                f"--apply-chat-template-kwargs {key}={merged[key]!r} conflicts "
                f"with the value registered for --tito-model={args.tito_model}: {value!r}"
            )
        merged[key] = value
    put("apply_chat_template_kwargs", merged, where)


# --- Stand-ins the rollout path needs beyond the session server's ---------------------------------


class _PlaceholderFinder:
    """Any `<package>.<sub>` module: its attributes are placeholders that refuse to run (the rollout path
    imports these names for plumbing it never reaches on one CPU process)."""

    def __init__(self, package: str):
        self.package = package

    def find_spec(self, fullname, path=None, target=None):
        import importlib.machinery

        if fullname.startswith(self.package + ".") and fullname not in sys.modules:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return _ray_module(spec.name)

    def exec_module(self, module):
        pass


def _ray_placeholder(name: str):
    def refuse(*_args, **_kwargs):
        raise RuntimeError(f"{name}: ray is not available in the CPU rollout driver")

    return type(name.rsplit(".", 1)[-1], (), {"__init__": refuse, "remote": refuse, "options": refuse})


def _ray_module(name: str):
    import types

    module = types.ModuleType(name)
    module.__path__ = []
    module.__getattr__ = lambda attr: _ray_placeholder(f"{name}.{attr}")
    return module


def install_ray_standin(replaced: "standins.Replacements") -> None:
    if "__file__" in vars(sys.modules.get("ray") or standins.standin_module("ray")):
        return  # the real ray (Miles' own image)
    for name in [n for n in sys.modules if n == "ray" or n.startswith("ray.")]:
        sys.modules.pop(name)
    ray = _ray_module("ray")
    # `@ray.remote` runs at import time on actor classes the rollout path never starts.
    ray.remote = lambda *args, **_kwargs: args[0] if args and callable(args[0]) else (lambda cls: cls)
    sys.modules["ray"] = ray
    sys.meta_path.insert(0, _PlaceholderFinder("ray"))
    replaced.items = [item for item in replaced.items if item[0] != "ray"]
    replaced.add(
        "ray",
        "not in Debian; its names are imported for actors and the object store, never used by one rollout "
        "process (placeholders that raise if called; @ray.remote leaves the class as it is)",
    )


def install_event_logger_standin(replaced: "standins.Replacements") -> None:
    """Miles' audit event logger needs pydantic 2 (TypeAdapter, Discriminator); Debian 12 ships pydantic 1.
    The rollout path only asks whether it is initialised (it is not: no run directory here)."""
    if standins.importable("miles.utils.audit_utils.event_logger.logger"):
        return
    prefix = "miles.utils.audit_utils.event_logger"
    for name in [n for n in sys.modules if n.startswith(prefix + ".")]:
        sys.modules.pop(name)

    def refuse(*_args, **_kwargs):
        raise RuntimeError("the audit event logger is not available in the CPU rollout driver")

    standins.standin_module(
        f"{prefix}.logger",
        is_event_logger_initialized=lambda: False,
        get_event_logger=refuse,
        read_events=refuse,
        event_logger_context=refuse,
    )
    models = standins.standin_module(f"{prefix}.models")
    models.__getattr__ = lambda attr: _ray_placeholder(f"{prefix}.models.{attr}")
    replaced.add(
        f"{prefix}.logger, {prefix}.models",
        "they need pydantic 2 (TypeAdapter); the rollout path only asks is_event_logger_initialized() (False: "
        "no event log is configured) and names the event classes",
    )


# Modules of newer releases than Debian's that the rollout path imports for names it never calls here.
PLACEHOLDER_MODULES = [
    (
        "miles.backends.training_utils.parallel",
        "needs torch 2 (torch.distributed.device_mesh, c10d object collectives); Debian's torch is 1.13. "
        "miles/utils/dumper_utils.py names get_parallel_state, called only when a dumper phase is enabled",
    ),
    (
        "miles.utils.ft_utils.process_group_utils",
        "needs torch 2's c10d object collectives (_get_object_coll_device); Debian's torch is 1.13. "
        "miles/utils/dumper_utils.py names GeneralPGUtil, used only when a dumper phase is enabled",
    ),
]


def install_placeholder_modules(replaced: "standins.Replacements") -> None:
    for name, why in PLACEHOLDER_MODULES:
        if standins.importable(name):
            continue
        sys.modules[name] = _ray_module(name)
        replaced.add(name, why)


def install_httpx_socket_options_shim(replaced: "standins.Replacements") -> None:
    """swe_agent_function's agent-server client passes TCP keepalive socket_options (httpx >= 0.24)."""
    import inspect

    import httpx

    if "socket_options" in inspect.signature(httpx.AsyncHTTPTransport.__init__).parameters:
        return
    original = httpx.AsyncHTTPTransport.__init__

    def __init__(self, *args, socket_options=None, **kwargs):
        original(self, *args, **kwargs)

    httpx.AsyncHTTPTransport.__init__ = __init__
    replaced.add(
        "httpx.AsyncHTTPTransport(socket_options=...)",
        f"httpx {httpx.__version__} has no socket_options; swe_agent_function passes only TCP keepalive "
        "timings for long idle trials, which loopback calls of seconds do not need (dropped)",
    )


def install_rollout_standins(replaced: "standins.Replacements", chat_request_fields: list) -> None:
    install_httpx_socket_options_shim(replaced)
    install_ray_standin(replaced)
    install_event_logger_standin(replaced)
    install_placeholder_modules(replaced)
    if not standins.importable("sglang_router"):
        # requirements.txt: sglang-router>=0.2.3; the version decides the router's worker-list route.
        standins.standin_module("sglang_router", __version__="0.2.3")
        replaced.add(
            "sglang_router",
            "not in Debian; only __version__ is read (get_worker_urls: >0.2.1 lists GET /workers), "
            "given as requirements.txt's floor 0.2.3",
        )
    protocol_name = "sglang.srt.entrypoints.openai.protocol"
    if not standins.importable(protocol_name) or "__file__" not in vars(sys.modules[protocol_name]):
        # The qwen3 mode's stand-in protocol module (its Tool and Function models) is kept in the new one.
        previous = vars(sys.modules[protocol_name]) if protocol_name in sys.modules else {}
        kept = {key: previous[key] for key in ("Tool", "Function") if key in previous}
        for name in [n for n in sys.modules if n == "sglang" or n.startswith("sglang.")]:
            sys.modules.pop(name)

        class ChatCompletionRequest:
            """Only `model_fields` is read (build_chat_request_kwargs keeps the keys it names)."""

            model_fields = {name: None for name in chat_request_fields}

        sys.modules["sglang"] = _ray_module("sglang")
        sys.meta_path.insert(0, _PlaceholderFinder("sglang"))
        import sglang.srt.entrypoints.openai.protocol as protocol

        protocol.ChatCompletionRequest = ChatCompletionRequest
        for key, value in kept.items():
            setattr(protocol, key, value)
        import sglang.srt.debug_utils.dumper as dumper

        class DumperConfig:
            @staticmethod
            def _kv_pairs_to_dict(pairs):
                # Reached with the recipe's --dumper-<phase> value; the recipe passes none.
                if pairs:
                    raise RuntimeError(f"dumper settings {pairs!r} need SGLang's DumperConfig")
                return {}

        dumper.DumperConfig = DumperConfig
        replaced.add(
            "sglang",
            "not in Debian; the rollout path imports names of its dumper (configure_sglang reads "
            "DumperConfig._kv_pairs_to_dict of the recipe's --dumper-inference, none: {}) and ChatCompletionRequest, of which only model_fields is read: the "
            f"sampling keys the harness's /run body carries ({', '.join(chat_request_fields)})",
        )
    from miles.utils import processing_utils

    processing_utils.load_processor = lambda *_args, **_kwargs: None
    replaced.add(
        "miles.utils.processing_utils.load_processor", "no model checkpoint; text-only prompts have no processor"
    )


class RefillExceeded(Exception):
    def __init__(self, drawn: int):
        super().__init__(f"{drawn} groups drawn in one step")
        self.drawn = drawn


def install_index_stamp(replaced: "standins.Replacements", guard_groups: int):
    """A data source that is Miles' RolloutDataSourceWithBuffer, stamping each copy's sample index into its
    metadata: Miles' `/run` body carries only the metadata, and the Harbor mock picks the variant by it.
    It also counts the groups drawn in a step: Miles' loop draws new prompts for dropped groups without
    bound, so past `guard_groups` the step stops (the differential reports it)."""
    from miles.rollout.data_source import RolloutDataSourceWithBuffer

    class IndexStampingDataSource(RolloutDataSourceWithBuffer):
        drawn_in_step = 0

        def get_samples(self, num_samples):
            if self.drawn_in_step + num_samples > guard_groups:
                raise RefillExceeded(self.drawn_in_step + num_samples)
            self.drawn_in_step += num_samples
            groups = super().get_samples(num_samples)
            for group in groups:
                for sample in group:
                    sample.metadata = {**sample.metadata, "harness_sample_index": sample.index}
            return groups

    replaced.add(
        "--data-source-path",
        "RolloutDataSourceWithBuffer with metadata.harness_sample_index = sample.index on each copy "
        "(Miles' /run body carries only metadata; the Harbor mock picks the variant by sample index); a step "
        f"stops once it would draw more than {guard_groups} groups (Miles' refill has no bound)",
    )
    return IndexStampingDataSource


class TrackingCapture:
    """What `log_rollout_data` hands the trackers (`tracking.log(args, log_dict, step_key=...)`)."""

    def __init__(self):
        self.logged: list[dict] = []

    def log(self, _args, metrics, step_key):
        self.logged.append({"step_key": step_key, "metrics": dict(metrics)})


# --- The result ---------------------------------------------------------------------------------------


def as_number(value):
    if hasattr(value, "item"):
        return value.item()
    return value


def digest(values) -> str:
    """sha256 of the ids written as decimal numbers joined by commas (the harness computes the same)."""
    return hashlib.sha256(",".join(str(int(v)) for v in values).encode()).hexdigest()


def sample_record(sample) -> dict:
    metadata = sample.metadata or {}
    harness = ((metadata.get("agent_metrics") or {}).get("harness")) or {}
    return {
        "group_index": sample.group_index,
        "index": sample.index,
        "rollout_id": sample.rollout_id,
        "instance_id": metadata.get("instance_id"),
        "harness_sample_index": metadata.get("harness_sample_index"),
        "variant": harness.get("variant"),
        "status": sample.status.value,
        "reward": as_number(sample.reward) if not isinstance(sample.reward, dict) else sample.reward,
        "tokens": len(sample.tokens),
        "tokens_digest": digest(sample.tokens),
        "response_length": sample.response_length,
        "loss_mask": list(sample.loss_mask) if sample.loss_mask is not None else None,
        "remove_sample": sample.remove_sample,
        "leaf_node_id": (metadata.get("leaf") or {}).get("node_id"),
    }


def train_record(train_data: dict) -> dict:
    keys = ["rewards", "raw_reward", "truncated", "sample_indices", "rollout_ids", "rollout_mask_sums",
            "response_lengths"]
    out = {key: [as_number(v) for v in train_data[key]] for key in keys if key in train_data}
    out["tokens"] = [len(t) for t in train_data["tokens"]]
    out["loss_mask_sums"] = [int(sum(m)) for m in train_data["loss_masks"]]
    return out


def refill_step(rollout_id: int, drawn: int, start: float) -> dict:
    return {"rollout_id": rollout_id, "samples": [], "train": None, "metrics": {}, "refill_exceeded": drawn,
            "error": None, "wall_s": time.time() - start}


def run_steps(args: Namespace, request: dict, capture: TrackingCapture, data_source_cls) -> list:
    from miles.ray.rollout.metrics import log_rollout_data
    from miles.ray.rollout.rollout_data_conversion import postprocess_rollout_data
    from miles.ray.rollout.train_data_conversion import convert_samples_to_train_data
    from miles.rollout.base_types import RolloutFnConstructorInput, RolloutFnTrainInput
    from miles.rollout.inference_rollout.compatibility import call_rollout_function, load_rollout_function
    from miles.utils.misc import load_function

    data_source = data_source_cls(args)
    rollout_fn = load_rollout_function(
        RolloutFnConstructorInput(args=args, data_source=data_source), args.rollout_function_path
    )
    reward_post = load_function(args.custom_reward_post_process_path) if args.custom_reward_post_process_path else None
    convert = (
        load_function(args.custom_convert_samples_to_train_data_path)
        if args.custom_convert_samples_to_train_data_path
        else None
    )
    steps = []
    for rollout_id in request["rollout_ids"]:
        # RolloutManager.generate: time from the start of the step to log_rollout_data.
        start = time.time()
        data_source.drawn_in_step = 0
        try:
            output = call_rollout_function(
                rollout_fn, RolloutFnTrainInput(rollout_id=rollout_id, weight_version=None)
            )
        except RefillExceeded as stop:
            steps.append(refill_step(rollout_id, stop.drawn, start))
            break
        metrics = output.metrics
        groups = output.samples
        data, metadata = postprocess_rollout_data(args, groups, train_parallel_config=None)
        capture.logged.clear()
        log_rollout_data(rollout_id, args, data, metrics, time.time() - start)
        samples = [sample_record(s) for s in data]
        train = convert_samples_to_train_data(
            args,
            data,
            metadata=metadata,
            custom_convert_samples_to_train_data_func=convert,
            custom_reward_post_process_func=reward_post,
        )
        logged = {}
        for entry in capture.logged:
            logged.update({k: as_number(v) for k, v in entry["metrics"].items()})
        steps.append(
            {
                "rollout_id": rollout_id,
                "samples": samples,
                "train": train_record(train),
                "metrics": logged,
                "refill_exceeded": None,
                "error": None,
                "wall_s": time.time() - start,
            }
        )
    return steps


def main(argv) -> int:
    options = parse_args(argv)
    miles_root = Path(options.miles_root).resolve()
    check_preconditions(miles_root, options.tokenizer, options.tokenizer_dir)
    if options.preflight:
        print("ok", flush=True)
        return 0
    if not options.request or not options.out:
        print("rollout_driver.py: --request and --out are required", file=sys.stderr)
        return 2
    request = json.loads(Path(options.request).read_text(encoding="utf-8"))
    tokenizer = request.get("tokenizer", "toy")
    check_preconditions(miles_root, tokenizer, request.get("tokenizer_dir"))

    for key, value in request["env"].items():
        os.environ[key] = value
    # The recipe's PYTHONPATH names the example directory inside its image's checkout; here, this checkout's.
    sys.path.insert(0, str(miles_root / EXAMPLE_DIR))

    replaced = standins.install_dependency_standins(miles_root)
    if tokenizer == "qwen3":
        # Miles' load_tokenizer over args.hf_checkpoint (the argv names the tokenizer directory) gives the
        # HF-equal tokenizer; Miles' own chat_template_utils (its qwen3 family and template) is imported.
        # The rollout side is 31f1ca96's tree (its TITO family a module, not the newer package): nothing adapted.
        adapted = newer_session.Adaptations()
        qwen3_mode.install_qwen3_tokenizer(miles_root, Path(request["tokenizer_dir"]), replaced, adapted)
        for what, why in adapted.items:
            print(f"adapted {what}: {why}", file=sys.stderr, flush=True)
    else:
        standins.install_toy_tokenizer(miles_root, request.get("vocabulary", []), replaced)
    install_rollout_standins(replaced, request["chat_request_fields"])
    data_source_cls = install_index_stamp(replaced, int(request["refill_guard_groups"]))
    capture = TrackingCapture()
    from miles.utils.tracking_utils import tracking

    tracking.log = capture.log
    replaced.add("miles.utils.tracking_utils.tracking.log", "captured: the dict log_rollout_data logs is the result")

    args = miles_namespace(request["surface"], request["overlays"], request["argv"])
    derived: list = []
    derive(args, request, derived)
    for name, why in replaced.items:
        print(f"replaced {name}: {why}", file=sys.stderr, flush=True)
    for line in derived:
        print(line, file=sys.stderr, flush=True)

    from miles.utils.http_utils import init_http_client

    init_http_client(args)
    steps = run_steps(args, request, capture, data_source_cls)
    Path(options.out).write_text(
        json.dumps(
            {
                "replacements": [f"replaced {n}: {w}" for n, w in replaced.items],
                "derived": derived,
                "steps": steps,
            },
            allow_nan=True,
        ),
        encoding="utf-8",
    )
    # Miles' agent-server client and event loop thread are process-wide; leave without waiting on them.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
