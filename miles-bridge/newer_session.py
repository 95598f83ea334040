"""What the launcher does for a checkout whose session server has the newer shape (capabilities.py): each
step keyed to one capability and printed as `adapted <what>: <why>`, each stand-in as `replaced <name>: <why>`.

The newer shape (sii-avalanche/miles@4d412b5a; docs/conformance.md "A newer Miles"):
`SessionServer(SessionServerConfig)` from `compute_session_server_config`, a `tito_tokenizer` package whose
`TITOTokenizer` methods take `template_args=`, sglang imported at the top of `sessions.py`, pydantic 2.
"""

import sys
from argparse import Namespace
from pathlib import Path

from capabilities import Capabilities
from standins import importable, precondition, standin_module, standin_package

PYDANTIC2_HOWTO = (
    "make one from Debian's python3 and the machine's local wheels: python3 -m venv --system-site-packages V && "
    "V/bin/pip install --no-index --find-links <the wheel store, `pip config list`> pydantic==2.13.5 "
    "fastapi==0.142.2 starlette==1.7.0, then pass --python V/bin/python (docs/conformance.md 'A newer Miles')"
)


class Adaptations:
    """The record of what was adapted to and why (printed at start, beside the replacements)."""

    def __init__(self):
        self.items: list[tuple[str, str]] = []

    def add(self, what: str, why: str) -> None:
        self.items.append((what, why))


def require_pydantic2(capabilities: Capabilities) -> None:
    """The newer `session/types.py` uses pydantic 2's `field_validator`; Debian 12's pydantic is 1.10."""
    if not capabilities.needs_pydantic2:
        return
    import pydantic

    if pydantic.VERSION.startswith("1."):
        precondition(
            f"this checkout's miles/rollout/session/types.py needs pydantic 2 (field_validator); {sys.executable} "
            f"has pydantic {pydantic.VERSION}: {PYDANTIC2_HOWTO}"
        )


def detect_inline_system_support(chat_template):
    """sglang python/sglang/srt/parser/template_detection.py `detect_inline_system_support`: False without a
    template, else whether a second, non-leading system message's sentinel survives a render (jinja2's
    sandbox, trim_blocks, lstrip_blocks, loopcontrols; any error is False)."""
    if not chat_template:
        return False
    sentinel = "__sglang_inline_system_sentinel__"
    try:
        import jinja2.ext
        import jinja2.sandbox

        environment = jinja2.sandbox.ImmutableSandboxedEnvironment(
            trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
        )
        messages = [
            {"role": "system", "content": "t"},
            {"role": "user", "content": "t"},
            {"role": "system", "content": sentinel},
            {"role": "user", "content": "t"},
        ]
        return sentinel in environment.from_string(chat_template).render(messages=messages, add_generation_prompt=False)
    except Exception:  # noqa: BLE001 - sglang answers False for any failure of the probe
        return False


class _ChatCompletionResponseStandin:
    """sessions.py validates a backend reply with sglang's model only on the Anthropic route (`/v1/messages`),
    which the harness never calls; the stand-in refuses to be used."""

    @classmethod
    def model_validate_json(cls, *_args, **_kwargs):
        raise RuntimeError("sglang's ChatCompletionResponse is not available in the CPU session-server launcher")


def install_sglang_session_standins(replaced) -> None:
    """The two names `sessions.py` imports from sglang at module level."""
    if not importable("sglang.srt.entrypoints.openai.protocol"):
        import qwen3_mode

        qwen3_mode.install_sglang_tool_models(replaced)
    protocol = sys.modules["sglang.srt.entrypoints.openai.protocol"]
    if not hasattr(protocol, "ChatCompletionResponse"):
        protocol.ChatCompletionResponse = _ChatCompletionResponseStandin
        replaced.add(
            "sglang.srt.entrypoints.openai.protocol.ChatCompletionResponse",
            "sglang is not in Debian; used only by the Anthropic route (/v1/messages), which refuses here",
        )
    if not importable("sglang.srt.parser.template_detection"):
        module = standin_module(
            "sglang.srt.parser.template_detection", detect_inline_system_support=detect_inline_system_support
        )
        standin_package("sglang.srt.parser").template_detection = module
        replaced.add(
            "sglang.srt.parser.template_detection.detect_inline_system_support",
            "sglang is not in Debian; the same probe (a sentinel in a second system message, jinja2's sandbox)",
        )


def install_toy_tito_package(miles_root: Path, chat_template_utils, replaced) -> None:
    """The `tito_tokenizer` package with Miles' own `base.py` (its request-argument rules, `extract_template_args`,
    `postprocess_completion`) and the toy's token rendering on top; its `__init__` (every model family, each
    needing its HF template) is not run."""
    package_dir = miles_root / "miles" / "utils" / "chat_template_utils" / "tito_tokenizer"
    for name in [n for n in sys.modules if n.startswith("miles.utils.chat_template_utils.tito_tokenizer")]:
        sys.modules.pop(name)
    package = standin_module("miles.utils.chat_template_utils.tito_tokenizer")
    package.__path__ = [str(package_dir)]
    chat_template_utils.tito_tokenizer = package
    import importlib

    base = importlib.import_module("miles.utils.chat_template_utils.tito_tokenizer.base")
    import toy_tito

    toy_class = toy_tito.toy_tito_on_base(base.TITOTokenizer)
    package.TITOTokenizer = base.TITOTokenizer
    package.extract_template_args = base.extract_template_args
    package.get_tito_tokenizer = toy_tito.get_tito_tokenizer_for(toy_class)
    chat_template_utils.get_tito_tokenizer = package.get_tito_tokenizer
    replaced.add(
        "miles.utils.chat_template_utils.get_tito_tokenizer",
        "the toy tokenizer's default TITO family over Miles' own tito_tokenizer/base.py TITOTokenizer "
        "(request-argument rules, template args, completion hooks are Miles'; token rendering is the toy's)",
    )


def newer_session_args(args: Namespace, capabilities: Capabilities, adapted: Adaptations) -> Namespace:
    """The flags `compute_session_server_config` reads that 31f1ca96's arguments.py lacks, at their defaults
    in the newer Miles (sii-avalanche/miles@4d412b5a miles/utils/rollout_topk_logprobs.py: width 0, mode
    `selected`; session/config.py: temperature 1.0 when unset)."""
    added = {
        "rollout_top_logprobs_num": 0,
        "rollout_sampling_logprobs_mode": "selected",
        "use_sampling_support_replay": False,
        "rollout_temperature": 1.0,
        "num_layers": None,
        "moe_router_topk": None,
    }
    for key, value in added.items():
        if not hasattr(args, key):
            setattr(args, key, value)
    adapted.add(
        "SessionServer(SessionServerConfig)",
        "this checkout's session/config.py has compute_session_server_config; its new fields at the newer "
        "defaults: " + ", ".join(f"{k}={v!r}" for k, v in added.items()),
    )
    return args


def build_newer_session_server(args: Namespace, host: str, port: int, backend_url: str):
    from miles.rollout.session.config import compute_session_server_config
    from miles.rollout.session.server import SessionServer

    config = compute_session_server_config(
        args, host=host, port=port, instance_id=args.session_server_instance_id, backend_url=backend_url
    )
    return SessionServer(config)


def install_qwen3_family_without_package_init(miles_root: Path, why: str, adapted: Adaptations):
    """`--tokenizer qwen3` where the `tito_tokenizer` package's `__init__` does not import here (it imports
    every model family, and a family module or one of its imports may be missing from the tree): Miles' own
    `base.py` and `qwen.py` are imported directly under the package, without its `__init__` nor that of
    `chat_template_utils`, and the two names the session path takes from it are provided as the package
    defines them (radixark/miles@3abe1f8c tito_tokenizer/__init__.py): `get_tito_tokenizer` builds the
    family's class with `chat_template_kwargs` (and `assistant_start_str` when given);
    `resolve_fixed_chat_template` is the class's `FIXED_TEMPLATE` file under `base.TEMPLATE_DIR` and a copy of
    its `extra_kwargs`. Returns that `resolve_fixed_chat_template`."""
    import importlib

    chat_dir = miles_root / "miles" / "utils" / "chat_template_utils"
    for name in [n for n in sys.modules if n.startswith("miles.utils.chat_template_utils")]:
        sys.modules.pop(name)
    chat_template_utils = standin_module("miles.utils.chat_template_utils")
    chat_template_utils.__path__ = [str(chat_dir)]
    package = standin_module("miles.utils.chat_template_utils.tito_tokenizer")
    package.__path__ = [str(chat_dir / "tito_tokenizer")]
    chat_template_utils.tito_tokenizer = package
    base = importlib.import_module("miles.utils.chat_template_utils.tito_tokenizer.base")
    qwen = importlib.import_module("miles.utils.chat_template_utils.tito_tokenizer.qwen")
    families = {"default": base.TITOTokenizer, "qwen3": qwen.Qwen3TITOTokenizer}

    def family(name):
        if str(name) not in families:
            raise ValueError(f"only the {sorted(families)} TITO families are loaded here, not {name!r}")
        return families[str(name)]

    def get_tito_tokenizer(tokenizer, tokenizer_type="default", chat_template_kwargs=None, assistant_start_str=None):
        kwargs = {"chat_template_kwargs": chat_template_kwargs}
        if assistant_start_str is not None:
            kwargs["assistant_start_str"] = assistant_start_str
        return family(tokenizer_type)(tokenizer, **kwargs)

    def resolve_fixed_chat_template(tito_model):
        fixed = family(tito_model).FIXED_TEMPLATE
        return (str(base.TEMPLATE_DIR / fixed.template) if fixed.template else None, dict(fixed.extra_kwargs))

    package.TITOTokenizer = base.TITOTokenizer
    package.extract_template_args = base.extract_template_args
    package.get_tito_tokenizer = chat_template_utils.get_tito_tokenizer = get_tito_tokenizer
    package.resolve_fixed_chat_template = chat_template_utils.resolve_fixed_chat_template = resolve_fixed_chat_template
    adapted.add(
        "tito_tokenizer/__init__.py",
        f"does not import here ({why}); Miles' own tito_tokenizer/base.py and qwen.py loaded directly, the "
        "package's factory and fixed-template lookup given for the default and qwen3 families",
    )
    return resolve_fixed_chat_template
