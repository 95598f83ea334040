"""What a Miles checkout can do, read off its files: never off a commit string, so a fork or a later commit
with the same shape is served the same way. The launchers adapt to these and print each adaptation with
its reason (`adapted <what>: <why>`), as they print their stand-ins (`replaced <name>: <why>`).

The facts behind each capability: radixark/miles@31f1ca96 has none of them; the newer session server of
the newer session server (sii-avalanche/miles@4d412b5a over 31f1ca96; docs/conformance.md "A newer Miles") has all of them.
"""

import json
from dataclasses import asdict, dataclass
from pathlib import Path

SESSION = Path("miles/rollout/session")
CHAT_TEMPLATE_UTILS = Path("miles/utils/chat_template_utils")


@dataclass(frozen=True)
class Capabilities:
    # `SessionServer(SessionServerConfig)` built by `compute_session_server_config(args, host=, port=,
    # instance_id=, backend_url=)` (session/config.py), instead of `SessionServer(args, backend_url)`.
    session_server_config: bool
    # `chat_template_utils.tito_tokenizer` is a package; `TITOTokenizer` and `extract_template_args` live in
    # `.base`, whose methods take `template_args=`.
    tito_package: bool
    # `load_function` lives in `miles.utils.function_registry` (was `miles.utils.misc`).
    function_registry: bool
    # The picker hub's modules (v2/picker_hub/*.py): which pickers can be named by path.
    pickers: tuple
    # `session/types.py` validates with pydantic 2 (`field_validator`); Debian 12 ships pydantic 1.
    needs_pydantic2: bool
    # `sessions.py` imports sglang at module level (`ChatCompletionResponse`, `detect_inline_system_support`).
    sessions_import_sglang: bool
    # The Qwen3 TITO family (`class Qwen3TITOTokenizer`, what `--tito-model qwen3` resolves to) is in the
    # checkout: in `tito_tokenizer.py` (31f1ca96) or, where `tito_tokenizer` is a package, in its `qwen.py`
    # (radixark/miles@3abe1f8c). `--tokenizer qwen3` runs Miles' own class, so without it it is refused.
    qwen3_tito_family: bool

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def qwen3_family_file(miles_root: Path) -> Path:
    """Where the checkout's Qwen3 TITO family is defined (or would be)."""
    tito = miles_root / CHAT_TEMPLATE_UTILS / "tito_tokenizer"
    return tito / "qwen.py" if (tito / "base.py").is_file() else tito.with_suffix(".py")


def read_capabilities(miles_root: Path) -> Capabilities:
    picker_hub = miles_root / SESSION / "v2" / "picker_hub"
    pickers = tuple(sorted(p.stem for p in picker_hub.glob("*.py") if not p.stem.startswith("_")))
    return Capabilities(
        session_server_config="def compute_session_server_config" in _text(miles_root / SESSION / "config.py"),
        tito_package=(miles_root / CHAT_TEMPLATE_UTILS / "tito_tokenizer" / "base.py").is_file(),
        function_registry=(miles_root / "miles" / "utils" / "function_registry.py").is_file(),
        pickers=pickers,
        needs_pydantic2="field_validator" in _text(miles_root / SESSION / "types.py"),
        sessions_import_sglang="from sglang" in _text(miles_root / SESSION / "sessions.py"),
        qwen3_tito_family="class Qwen3TITOTokenizer(" in _text(qwen3_family_file(miles_root)),
    )


def default_picker_path(capabilities: Capabilities) -> str:
    """`--session-sample-picker-path`'s default in that Miles: `drop_retries` at 31f1ca96
    (miles/utils/arguments.py), `drop_same_prompt_retries` once the hub has it (sii-avalanche/miles@4d412b5a
    v2/picker_hub/__init__.py exports it; drop_retries.py is gone there)."""
    name = "drop_same_prompt_retries" if "drop_same_prompt_retries" in capabilities.pickers else "drop_retries"
    return f"miles.rollout.session.v2.picker_hub.{name}"
