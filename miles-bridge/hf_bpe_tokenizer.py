"""A pure-Python Hugging Face-like tokenizer over a byte-level BPE `tokenizer.json` (Qwen3's), for Miles'
session server on CPU where neither transformers nor HF's Rust `tokenizers` is installed.

It follows what HF's Rust tokenizer does with that file (huggingface/tokenizers `tokenizers/src`):
- added tokens (all `normalized: false` in Qwen3's file) are cut out of the raw text first, leftmost and then
  longest match wins (`added_vocabulary.rs`, aho-corasick `LeftmostLongest`), whether special or not;
- each remaining piece is normalized (NFC when the file says so), split by the pre-tokenizer's `Split`
  regex with `Isolated` behaviour (python3-regex runs the same pattern, lookahead included), mapped
  through the GPT-2 byte-to-unicode table (`ByteLevel`, `use_regex: false`), and merged by BPE rank;
- decode maps ids to tokens (added tokens by content, specials dropped with `skip_special_tokens`), each
  token back to bytes (a token with a char outside the byte table keeps its UTF-8 bytes), and the bytes to
  text with invalid UTF-8 replaced by U+FFFD (Rust's `String::from_utf8_lossy`).
The pattern's `\\p{L}` and `\\p{N}` are matched by Unicode 16.0's tables (fixtures/unicode/letter-number-16.0.json),
as Oniguruma in HF's Rust build does: Debian 12's python3-regex knows Unicode 15.0, so letters added in
15.1/16.0 would split differently. (NFC uses Python's `unicodedata`, Unicode 14.0 on Debian 12; the Rust
normalizer is newer, which matters only for compositions added since: none in the test's strings.)

The transformers-side surface Miles calls (`encode`, `decode`, `convert_*`, `all_special_ids`,
`added_tokens_decoder`, `apply_chat_template`, eos/pad) reads `tokenizer_config.json` as
`AutoTokenizer.from_pretrained` does.

Lone surrogates: a Python `str` can hold one (json.loads("\\"\\\\ud800\\"")); transformers hands text to the
Rust tokenizer through PyO3, which refuses it with `UnicodeEncodeError` ("surrogates not allowed"), so
`encode` raises that same error here (the JS and Rust-from-JS tokenizers substitute U+FFFD instead).
"""

import json
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import regex

UNICODE_CLASSES = Path(__file__).resolve().parents[1] / "fixtures" / "unicode" / "letter-number-16.0.json"

# transformers' SPECIAL_TOKENS_ATTRIBUTES order (tokenization_utils_base.py), which all_special_* follow.
SPECIAL_TOKEN_ATTRIBUTES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


def _class_body(ranges) -> str:
    return "".join(f"\\U{a:08X}" if a == b else f"\\U{a:08X}-\\U{b:08X}" for a, b in ranges)


def pin_unicode_classes(pattern: str, classes: dict) -> str:
    """`pattern` with `\\p{L}` / `\\p{N}` spelled out as the given code point ranges (inside a bracket
    class as more members, outside as a class of their own)."""
    bodies = {"L": _class_body(classes["L"]), "N": _class_body(classes["N"])}
    out = []
    in_class = False
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and pattern.startswith(("\\p{L}", "\\p{N}"), i):
            body = bodies[pattern[i + 3]]
            out.append(body if in_class else f"[{body}]")
            i += 5
            continue
        if ch == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class:
            in_class = False
        out.append(ch)
        i += 1
    return "".join(out)


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte table (huggingface/tokenizers `pre_tokenizers/byte_level.rs` `bytes_char`)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    printable += list(range(ord("®"), ord("ÿ") + 1))
    table = {b: chr(b) for b in printable}
    n = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + n)
            n += 1
    return table


@dataclass(frozen=True)
class AddedToken:
    """The fields of transformers' `AddedToken` that callers read (`content`, `special`)."""

    content: str
    special: bool
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = False

    def __str__(self) -> str:
        return self.content


class HFBPETokenizer:
    def __init__(self, tokenizer_json: dict, config: dict | None = None, name_or_path: str = ""):
        config = config or {}
        # Miles reads it to find a checkpoint's config.json (DeepSeek/Inkling detection); none here.
        self.name_or_path = name_or_path
        model = tokenizer_json["model"]
        if model.get("type") != "BPE":
            raise ValueError(f"only BPE models are supported, not {model.get('type')!r}")
        self._vocab: dict[str, int] = dict(model["vocab"])
        self._ranks: dict[tuple[str, str], int] = {}
        for rank, merge in enumerate(model["merges"]):
            a, b = merge if isinstance(merge, list) else merge.split(" ", 1)
            self._ranks[(a, b)] = rank
        self._split = self._pre_tokenizer_split(tokenizer_json.get("pre_tokenizer"))
        self._nfc = self._normalizer(tokenizer_json.get("normalizer"))
        self._byte_char = bytes_to_unicode()
        self._char_byte = {c: b for b, c in self._byte_char.items()}
        self._cache: dict[str, list[int]] = {}

        self.added_tokens_decoder: dict[int, AddedToken] = {}
        for entry in tokenizer_json.get("added_tokens", []):
            if entry.get("normalized") or entry.get("lstrip") or entry.get("rstrip") or entry.get("single_word"):
                raise ValueError(f"added token {entry['content']!r}: only plain non-normalized tokens are supported")
            self.added_tokens_decoder[entry["id"]] = AddedToken(entry["content"], bool(entry["special"]))
        self.added_tokens_decoder = dict(sorted(self.added_tokens_decoder.items()))
        self._added_by_content = {t.content: i for i, t in self.added_tokens_decoder.items()}
        self._id_to_token = {i: t for t, i in self._vocab.items()}
        self._id_to_token.update({i: t.content for i, t in self.added_tokens_decoder.items()})
        # Longest first makes the regex alternation (leftmost-first) pick leftmost-longest.
        contents = sorted(self._added_by_content, key=len, reverse=True)
        self._added_pattern = regex.compile("|".join(regex.escape(c) for c in contents)) if contents else None

        self.chat_template = config.get("chat_template")
        self.special_tokens_map: dict = {}
        for attr in SPECIAL_TOKEN_ATTRIBUTES:
            value = config.get(attr)
            if isinstance(value, dict):
                value = value.get("content")
            setattr(self, attr, value)
            if value is not None:
                self.special_tokens_map[attr] = value
        self.additional_special_tokens = list(config.get("additional_special_tokens") or [])
        if self.additional_special_tokens:
            self.special_tokens_map["additional_special_tokens"] = list(self.additional_special_tokens)
        self.model_max_length = config.get("model_max_length")

    # -- loading -------------------------------------------------------------------------------------------

    @classmethod
    def from_pretrained(cls, directory) -> "HFBPETokenizer":
        directory = Path(directory)
        tokenizer_json = json.loads((directory / "tokenizer.json").read_text(encoding="utf-8"))
        config_path = directory / "tokenizer_config.json"
        config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.is_file() else {}
        return cls(tokenizer_json, config, str(directory))

    @staticmethod
    def _pre_tokenizer_split(spec):
        steps = spec.get("pretokenizers", []) if spec and spec.get("type") == "Sequence" else [spec] if spec else []
        pattern = None
        for step in steps:
            if step["type"] == "Split":
                if step.get("behavior") != "Isolated" or step.get("invert"):
                    raise ValueError("only a non-inverted Isolated Split pre-tokenizer is supported")
                if "Regex" in step["pattern"]:
                    classes = json.loads(UNICODE_CLASSES.read_text(encoding="utf-8"))
                    pattern = regex.compile(pin_unicode_classes(step["pattern"]["Regex"], classes))
                else:
                    pattern = regex.compile(regex.escape(step["pattern"]["String"]))
            elif step["type"] == "ByteLevel":
                if step.get("use_regex", True) or step.get("add_prefix_space"):
                    raise ValueError("only ByteLevel with use_regex false and no prefix space is supported")
            else:
                raise ValueError(f"unsupported pre-tokenizer {step['type']!r}")
        return pattern

    @staticmethod
    def _normalizer(spec) -> bool:
        if spec is None:
            return False
        if spec.get("type") == "NFC":
            return True
        raise ValueError(f"unsupported normalizer {spec.get('type')!r}")

    # -- encoding ------------------------------------------------------------------------------------------

    def _pieces(self, text: str):
        if self._split is None:
            yield text
            return
        at = 0
        for match in self._split.finditer(text):
            if match.start() > at:
                yield text[at : match.start()]
            if match.end() > match.start():
                yield match.group()
            at = match.end()
        if at < len(text):
            yield text[at:]

    def _bpe(self, word: str) -> list[int]:
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        symbols = list(word)
        ranks = self._ranks
        while len(symbols) > 1:
            best_rank = None
            best = None
            for pair in zip(symbols, symbols[1:]):
                rank = ranks.get(pair)
                if rank is not None and (best_rank is None or rank < best_rank):
                    best_rank, best = rank, pair
            if best is None:
                break
            merged = []
            i = 0
            while i < len(symbols):
                if i + 1 < len(symbols) and symbols[i] == best[0] and symbols[i + 1] == best[1]:
                    merged.append(best[0] + best[1])
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        ids = [self._vocab[s] for s in symbols]
        if len(self._cache) < 100_000:
            self._cache[word] = ids
        return ids

    def _encode_plain(self, text: str, out: list[int]) -> None:
        if self._nfc:
            text = unicodedata.normalize("NFC", text)
        table = self._byte_char
        for piece in self._pieces(text):
            out.extend(self._bpe("".join(table[b] for b in piece.encode("utf-8"))))

    def encode(self, text: str, add_special_tokens: bool = True, **_kwargs) -> list[int]:
        # Qwen3 adds no BOS/EOS (ByteLevel post-processor), so add_special_tokens changes nothing here.
        text.encode("utf-8")  # a lone surrogate raises UnicodeEncodeError, as PyO3 does
        out: list[int] = []
        at = 0
        if self._added_pattern is not None:
            for match in self._added_pattern.finditer(text):
                if match.start() > at:
                    self._encode_plain(text[at : match.start()], out)
                out.append(self._added_by_content[match.group()])
                at = match.end()
        if at < len(text):
            self._encode_plain(text[at:], out)
        return out

    def __call__(self, text, add_special_tokens: bool = True, **_kwargs):
        if isinstance(text, list):
            return {"input_ids": [self.encode(t, add_special_tokens) for t in text]}
        return {"input_ids": self.encode(text, add_special_tokens)}

    # -- decoding ------------------------------------------------------------------------------------------

    def decode(self, token_ids, skip_special_tokens: bool = False, **_kwargs) -> str:
        if isinstance(token_ids, int):
            token_ids = [token_ids]
        data = bytearray()
        char_byte = self._char_byte
        for token_id in token_ids:
            token_id = int(token_id)
            added = self.added_tokens_decoder.get(token_id)
            if added is not None and added.special and skip_special_tokens:
                continue
            token = self._id_to_token.get(token_id)
            if token is None:
                continue
            if all(c in char_byte for c in token):
                data.extend(char_byte[c] for c in token)
            else:
                data.extend(token.encode("utf-8"))
        return data.decode("utf-8", errors="replace")

    def batch_decode(self, sequences, skip_special_tokens: bool = False, **kwargs) -> list[str]:
        return [self.decode(s, skip_special_tokens, **kwargs) for s in sequences]

    # -- vocabulary ----------------------------------------------------------------------------------------

    def convert_ids_to_tokens(self, ids, skip_special_tokens: bool = False):
        if isinstance(ids, int):
            return self._id_to_token.get(ids)
        out = []
        for token_id in ids:
            added = self.added_tokens_decoder.get(int(token_id))
            if skip_special_tokens and added is not None and added.special:
                continue
            out.append(self._id_to_token.get(int(token_id)))
        return out

    def _token_to_id(self, token: str):
        found = self._added_by_content.get(token, self._vocab.get(token))
        return found if found is not None else self.unk_token_id

    def convert_tokens_to_ids(self, tokens):
        if tokens is None:
            return None
        if isinstance(tokens, str):
            return self._token_to_id(tokens)
        return [self._token_to_id(t) for t in tokens]

    def get_vocab(self) -> dict[str, int]:
        return {**self._vocab, **self._added_by_content}

    def get_added_vocab(self) -> dict[str, int]:
        return dict(self._added_by_content)

    @property
    def vocab_size(self) -> int:
        return len(self._vocab)

    def __len__(self) -> int:
        return len(self.get_vocab())

    @property
    def all_special_tokens(self) -> list[str]:
        seen: list[str] = []
        for attr in SPECIAL_TOKEN_ATTRIBUTES:
            value = getattr(self, attr)
            if value is not None and value not in seen:
                seen.append(value)
        for value in self.additional_special_tokens:
            if value not in seen:
                seen.append(value)
        return seen

    @property
    def all_special_ids(self) -> list[int]:
        return [self._token_to_id(t) for t in self.all_special_tokens]

    def _id_of(self, attr: str):
        value = getattr(self, attr)
        return None if value is None else self._token_to_id(value)

    @property
    def unk_token_id(self):
        return None if self.unk_token is None else self._added_by_content.get(self.unk_token, self._vocab.get(self.unk_token))

    @property
    def eos_token_id(self):
        return self._id_of("eos_token")

    @property
    def pad_token_id(self):
        return self._id_of("pad_token")

    @property
    def bos_token_id(self):
        return self._id_of("bos_token")

    # -- chat template -------------------------------------------------------------------------------------

    def apply_chat_template(
        self,
        conversation,
        tools=None,
        documents=None,
        chat_template=None,
        add_generation_prompt=False,
        continue_final_message=False,
        tokenize=True,
        padding=False,
        truncation=False,
        max_length=None,
        return_tensors=None,
        return_dict=False,
        return_assistant_tokens_mask=False,
        tokenizer_kwargs=None,
        **kwargs,
    ):
        """transformers' `PreTrainedTokenizerBase.apply_chat_template` for what this tokenizer can do:
        renders with the special-tokens map and the caller's kwargs, tokenizes without special tokens."""
        from chat_template_render import render_jinja_template

        if return_tensors is not None or padding or truncation:
            raise ValueError("tensors, padding and truncation are not supported by the CPU launcher's tokenizer")
        template = chat_template if chat_template is not None else self.chat_template
        if template is None:
            raise ValueError("Cannot use chat template functions because tokenizer.chat_template is not set")
        batched = isinstance(conversation, (list, tuple)) and (
            isinstance(conversation[0], (list, tuple)) or hasattr(conversation[0], "messages")
        )
        conversations = conversation if batched else [conversation]
        rendered, _ = render_jinja_template(
            conversations=conversations,
            tools=tools,
            documents=documents,
            chat_template=template,
            return_assistant_tokens_mask=return_assistant_tokens_mask,
            continue_final_message=continue_final_message,
            add_generation_prompt=add_generation_prompt,
            **{**self.special_tokens_map, **kwargs},
        )
        if not batched:
            rendered = rendered[0]
        if not tokenize:
            return rendered
        ids = [self.encode(r, add_special_tokens=False) for r in rendered] if batched else self.encode(rendered, False)
        return {"input_ids": ids} if return_dict else ids


def _batch(argv) -> int:
    """`hf_bpe_tokenizer.py DIR < {"encode": [text...], "decode": [[id...]...]}`: one JSON answer on stdout,
    `{"encode": [ids or {"error": "UnicodeEncodeError: ..."}...], "decode": [text...], "load_s": float}`
    (the differential test against HF's Rust tokenizer runs every case through one process)."""
    import sys
    import time

    started = time.perf_counter()
    tokenizer = HFBPETokenizer.from_pretrained(argv[0])
    load_s = time.perf_counter() - started
    request = json.loads(sys.stdin.read())
    encoded = []
    for text in request.get("encode", []):
        try:
            encoded.append(tokenizer.encode(text, add_special_tokens=False))
        except UnicodeEncodeError as error:
            encoded.append({"error": f"UnicodeEncodeError: {error}"})
    decoded = [tokenizer.decode(ids, skip_special_tokens=False) for ids in request.get("decode", [])]
    # Lone surrogates from a replaced decode cannot occur (U+FFFD); ensure_ascii keeps the pipe ASCII.
    sys.stdout.write(json.dumps({"encode": encoded, "decode": decoded, "load_s": load_s}))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(_batch(sys.argv[1:]))
