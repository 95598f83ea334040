"""The `default` TITO family of the harness's toy tokenizer, standing in for Miles' `TITOTokenizer`.

Miles' own default family finds an appended suffix by diffing two text renders of a Hugging Face chat
template; the toy is defined on token ids (fixtures/conformance/README.md, "Toy tokenizer used for the
expected files"), so it implements the same contract directly, as fakes/tokenizer/tito.ts does for the
TypeScript fake:
- a prompt is every message rendered, then the generation token 3 (3 and the empty-thinking token 9 when
  `enable_thinking` is false);
- an extension is the parent's snapshot, then the render of the appended messages, then the generation
  prompt (`max_trim_tokens` 0, all four roles appendable);
- the canonical render (`add_generation_prompt=False`, used for `tito_session_mismatch`) closes each
  assistant message with the end token 5.
Miles' real `TokenSeqComparator` compares the two; the append-only check is Miles' own
`assert_messages_append_only_with_allowed_role`.
"""

from miles.utils.chat_template_utils.message_matcher_hub import assert_messages_append_only_with_allowed_role
from miles.utils.chat_template_utils.token_seq_comparator import TokenSeqComparator

from toy_tokenizer import EMPTY_THINK_TOKEN, END_TOKEN, GENERATION_TOKEN

FOUR_ROLES = frozenset({"assistant", "system", "tool", "user"})


def _generation_prompt(template_kwargs):
    if template_kwargs.get("enable_thinking") is False:
        return [GENERATION_TOKEN, EMPTY_THINK_TOKEN]
    return [GENERATION_TOKEN]


def _render(tokenizer, messages, add_generation_prompt, template_kwargs):
    out = []
    for message in messages:
        out += tokenizer.render_message(message)
        if not add_generation_prompt and isinstance(message, dict) and message.get("role") == "assistant":
            out.append(END_TOKEN)
    return out + (_generation_prompt(template_kwargs) if add_generation_prompt else [])


def _render_appended(tokenizer, old_messages, new_messages, allowed_roles, template_kwargs):
    assert_messages_append_only_with_allowed_role(old_messages, new_messages, allowed_roles)
    out = []
    for message in new_messages[len(old_messages) :]:
        out += tokenizer.render_message(message)
    return out + _generation_prompt(template_kwargs)


class ToyTITOTokenizer:
    max_trim_tokens = 0
    trailing_token_ids = frozenset()
    allowed_append_roles = FOUR_ROLES

    def __init__(self, tokenizer, chat_template_kwargs=None):
        self.tokenizer = tokenizer
        self.chat_template_kwargs = dict(chat_template_kwargs or {})

    def clone_with_chat_template_kwargs(self, request_kwargs):
        return type(self)(self.tokenizer, {**self.chat_template_kwargs, **request_kwargs})

    def create_comparator(self):
        # The default family has no assistant start string and auto-detected special ids.
        return TokenSeqComparator(self.tokenizer, assistant_start_str=None)

    def apply_chat_template(self, messages, *, add_generation_prompt, tools=None, tokenize=False):
        if not tokenize:
            raise NotImplementedError("the toy template renders token ids only")
        return _render(self.tokenizer, messages, add_generation_prompt, self.chat_template_kwargs)

    def tokenize_additional_messages(self, old_messages, new_messages, tools=None):
        return _render_appended(
            self.tokenizer, old_messages, new_messages, self.allowed_append_roles, self.chat_template_kwargs
        )

    def merge_tokens(self, old_messages, new_messages, pretokenized_token_ids, tools=None):
        return list(pretokenized_token_ids) + self.tokenize_additional_messages(old_messages, new_messages, tools)


def get_tito_tokenizer(tokenizer, tokenizer_type="default", chat_template_kwargs=None, assistant_start_str=None):
    if str(tokenizer_type) != "default":
        raise ValueError(f"the toy tokenizer has only the default TITO family, not {tokenizer_type!r}")
    return ToyTITOTokenizer(tokenizer, chat_template_kwargs)


def toy_tito_on_base(base):
    """The same toy family for a Miles whose `TITOTokenizer` lives in `tito_tokenizer/base.py` and takes
    `template_args=` (sii-avalanche/miles@4d412b5a; capabilities.py `tito_package`): a subclass of Miles' own
    class, so its request-argument rules, `extract_template_args`, comparator and completion hooks run as
    Miles wrote them; only the rendering to token ids is the toy's. `template_args` is the complete argument
    set when given (base.py `apply_chat_template`), the launch kwargs otherwise."""

    class ToyTITOOnBase(base):
        allowed_append_roles = FOUR_ROLES

        def __init__(self, tokenizer, chat_template_kwargs=None, assistant_start_str=None):
            super().__init__(tokenizer, chat_template_kwargs, assistant_start_str=None)

        def _args(self, template_args):
            return self.chat_template_kwargs if template_args is None else template_args

        def apply_chat_template(self, messages, *, add_generation_prompt, tokenize=False, template_args=None):
            if not tokenize:
                raise NotImplementedError("the toy template renders token ids only")
            return _render(self.tokenizer, messages, add_generation_prompt, self._args(template_args))

        def tokenize_additional_messages(self, old_messages, new_messages, *, template_args=None):
            return _render_appended(
                self.tokenizer, old_messages, new_messages, self.allowed_append_roles, self._args(template_args)
            )

    return ToyTITOOnBase


def get_tito_tokenizer_for(toy_class):
    """`get_tito_tokenizer` for the toy family on Miles' base class (the default family only, as above)."""

    def get_tito_tokenizer(tokenizer, tokenizer_type="default", chat_template_kwargs=None, assistant_start_str=None):
        if str(tokenizer_type) != "default":
            raise ValueError(f"the toy tokenizer has only the default TITO family, not {tokenizer_type!r}")
        return toy_class(tokenizer, chat_template_kwargs)

    return get_tito_tokenizer
