"""The harness's toy tokenizer, in Python, for Miles' session server on CPU (rules:
fixtures/conformance/README.md, "Toy tokenizer used for the expected files").

It stands in for the Hugging Face tokenizer Miles loads from --hf-checkpoint. Same rules as the TypeScript
toy in fakes/tokenizer/toy-tokenizer.ts, so both servers produce the same token ids:
- role tokens system 1, user 2, assistant 3, tool 4, any other role 6; end token 5; generation token 3;
- a word (text split on Python's whitespace) is 1000 + crc32(utf8(word)) % 100000;
- a message renders as its role token, then the words of reasoning_content, content, and the JSON of each
  tool call's `function` (keys sorted, json.dumps default separators);
- decode names special tokens and known words and joins them with single spaces; an unknown word is
  `<tok:ID>`. Words become known when encoded, or from a vocabulary given at start (the words of the traces
  the policy answers with: the TypeScript fake learns a reply's words when it commits it, which Miles never
  tokenizes, so the stand-in is told them up front).
"""

import zlib

WORD_BASE = 1000
WORD_SPAN = 100_000
END_TOKEN = 5
GENERATION_TOKEN = 3
EMPTY_THINK_TOKEN = 9
OTHER_ROLE_TOKEN = 6
ROLE_TOKENS = {"system": 1, "user": 2, "assistant": 3, "tool": 4}
SPECIAL_NAMES = {
    1: "<|system|>",
    2: "<|user|>",
    3: "<|assistant|>",
    4: "<|tool|>",
    5: "<|end|>",
    6: "<|role|>",
    7: "<|user|>",
    8: "<|observation|>",
    9: "<think></think>",
}
VOCAB_CAP = 200_000


def word_id(word: str) -> int:
    return WORD_BASE + zlib.crc32(word.encode("utf-8")) % WORD_SPAN


def _text_of(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " ".join(p["text"] if isinstance(p, dict) and isinstance(p.get("text"), str) else "" for p in value)
    return ""


def _dumps_sorted(value) -> str:
    import json

    return json.dumps(value, sort_keys=True)


class ToyTokenizer:
    """The slice of a Hugging Face tokenizer Miles' session path calls: encode, decode, special ids."""

    all_special_ids = sorted(SPECIAL_NAMES)

    def __init__(self, vocabulary_words=()):
        self._vocab: dict[int, str] = {}
        for word in vocabulary_words:
            # A word with a lone surrogate has no UTF-8 (its encode raises, as Miles' tokenizer would):
            # nothing to know up front.
            if not any("\ud800" <= ch <= "\udfff" for ch in word):
                self._learn(word)

    def _learn(self, word: str) -> int:
        token = word_id(word)
        if len(self._vocab) < VOCAB_CAP:
            self._vocab[token] = word
        return token

    def encode_text(self, text: str) -> list[int]:
        return [self._learn(w) for w in text.split()]

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return self.encode_text(text)

    def role_token(self, role) -> int:
        return ROLE_TOKENS.get(role, OTHER_ROLE_TOKEN) if isinstance(role, str) else OTHER_ROLE_TOKEN

    def render_body(self, message) -> list[int]:
        if not isinstance(message, dict):
            raise TypeError("a chat message must be an object")
        out = self.encode_text(_text_of(message.get("reasoning_content")))
        out += self.encode_text(_text_of(message.get("content")))
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            for call in calls:
                fn = call.get("function") if isinstance(call, dict) else None
                out += self.encode_text(_dumps_sorted(fn))
        return out

    def render_message(self, message) -> list[int]:
        role = message.get("role") if isinstance(message, dict) else None
        return [self.role_token(role), *self.render_body(message)]

    def decode(self, token_ids, skip_special_tokens: bool = False) -> str:
        return " ".join(
            SPECIAL_NAMES.get(t, f"<special:{t}>") if t < WORD_BASE else self._vocab.get(t, f"<tok:{t}>")
            for t in token_ids
        )


def vocabulary_of_traces(traces) -> list[str]:
    """Every word a trace's requests and scripted replies can put into tokens, in file order."""
    words: list[str] = []

    def visit_message(message):
        if not isinstance(message, dict):
            return
        words.extend(_text_of(message.get("reasoning_content")).split())
        words.extend(_text_of(message.get("content")).split())
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            for call in calls:
                fn = call.get("function") if isinstance(call, dict) else None
                words.extend(_dumps_sorted(fn).split())

    for trace in traces:
        for turn in trace.get("turns", []):
            for message in (turn.get("request") or {}).get("messages") or []:
                visit_message(message)
            response = turn.get("response") or {}
            if "message" in response:
                visit_message(response["message"])
    return words
