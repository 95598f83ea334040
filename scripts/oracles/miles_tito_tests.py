#!/usr/bin/env python3
"""Runs Miles' own Qwen3 TITO and comparator tests against the launcher's pure-Python Qwen3 tokenizer.

Copies radixark/miles' `tests/fast/utils/chat_template_utils/test_tito_tokenizer.py` and
`test_token_seq_comparator.py` from --miles-root into a temporary directory (nothing of Miles is kept),
with a conftest that sets up what the launcher's `--tokenizer qwen3` mode sets up (qwen3_mode.py) and
answers Miles' `load_tokenizer("Qwen/Qwen3-4B", …)` / `AutoTokenizer.from_pretrained` with
`HFBPETokenizer` over the pinned Qwen3 tokenizer.json. Only Qwen3 cases run (`-k "not glm47"` and
friends): there is no GLM-4.7 tokenizer offline. Other pytest arguments pass through.

    /usr/bin/python3 scripts/oracles/miles_tito_tests.py --miles-root "$MILES_ROOT" [-- -x -q]

Exit status: pytest's.
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[2] / "miles-bridge"
TESTS = Path("tests/fast/utils/chat_template_utils")
FILES = ["test_tito_tokenizer.py", "test_token_seq_comparator.py"]
# Cases that need a tokenizer other than Qwen3's (GLM-4.7, DeepSeek, Inkling checkpoints).
DESELECT = "not glm47 and not glm and not GLM and not DeepSeek and not Inkling and not deepseek and not inkling"

CONFTEST = '''
import sys
from pathlib import Path

sys.path.insert(0, {here!r})
sys.path.insert(0, {miles_root!r})

import qwen3_mode
import standins

_replaced = standins.install_dependency_standins(Path({miles_root!r}))
qwen3_mode.install_qwen3_tokenizer(Path({miles_root!r}), Path({tokenizer_dir!r}), _replaced)

import types

from hf_bpe_tokenizer import HFBPETokenizer
from miles.utils import processing_utils

QWEN3_IDS = {{"Qwen/Qwen3-4B"}}
_launcher_load = processing_utils.load_tokenizer


def _tokenizer_dir(model_id):
    if model_id in QWEN3_IDS:
        return {tokenizer_dir!r}
    raise OSError(f"no offline tokenizer for {{model_id!r}} (only Qwen3's)")


def load_tokenizer(name_or_path, chat_template_path=None, **kwargs):
    return _launcher_load(_tokenizer_dir(name_or_path), chat_template_path=chat_template_path, **kwargs)


processing_utils.load_tokenizer = load_tokenizer


class AutoTokenizer:
    @staticmethod
    def from_pretrained(name_or_path, **_kwargs):
        return HFBPETokenizer.from_pretrained(_tokenizer_dir(name_or_path))


sys.modules["transformers"].AutoTokenizer = AutoTokenizer

# miles.utils.test_utils.mock_sglang_server imports sglang's tool-call parser; the trajectories these tests
# use only need its ProcessFn / ProcessResult types.
_parser = types.ModuleType("sglang.srt.function_call.function_call_parser")


class FunctionCallParser:
    def __init__(self, *_args, **_kwargs):
        raise RuntimeError("sglang's FunctionCallParser is not available on CPU")


_parser.FunctionCallParser = FunctionCallParser
sys.modules.setdefault("sglang.srt.function_call", types.ModuleType("sglang.srt.function_call"))
sys.modules["sglang.srt.function_call.function_call_parser"] = _parser
'''


def main(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--miles-root", required=True)
    parser.add_argument("--tokenizer-dir", default=None)
    parser.add_argument("pytest_args", nargs="*")
    options = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    import qwen3_mode

    miles_root = Path(options.miles_root).resolve()
    tokenizer_dir = Path(options.tokenizer_dir or qwen3_mode.default_tokenizer_dir()).resolve()
    wrong = qwen3_mode.check_tokenizer_dir(tokenizer_dir)
    if wrong:
        print(f"precondition: {wrong}", file=sys.stderr)
        return 3
    with tempfile.TemporaryDirectory(prefix="miles-tito-tests-") as tmp:
        for name in FILES:
            shutil.copyfile(miles_root / TESTS / name, Path(tmp) / name)
        Path(tmp, "conftest.py").write_text(
            CONFTEST.format(here=str(HERE), miles_root=str(miles_root), tokenizer_dir=str(tokenizer_dir)),
            encoding="utf-8",
        )
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-k", DESELECT, *FILES]
        return subprocess.call(command + options.pytest_args, cwd=tmp)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
