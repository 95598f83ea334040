"""Renders a Hugging Face chat template the way transformers does, for Miles on CPU without transformers.

transformers' `render_jinja_template` (huggingface/transformers `src/transformers/utils/chat_template_utils.py`,
which `tokenizer.apply_chat_template` and Miles' `apply_chat_template_from_str` both call) compiles the
template in jinja2's `ImmutableSandboxedEnvironment` with `trim_blocks` and `lstrip_blocks`, the
`loopcontrols` extension and its `{% generation %}` tag, a `tojson` filter that is `json.dumps` with
`ensure_ascii=False` (jinja's own escapes HTML characters), and the globals `raise_exception` and
`strftime_now`; each conversation renders with `messages`, `tools`, `documents`, `add_generation_prompt`
and the caller's keyword arguments. This module does the same with Debian's python3-jinja2.
"""

import json
from datetime import datetime
from functools import lru_cache

import jinja2
import jinja2.ext
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment


class _GenerationTag(jinja2.ext.Extension):
    """`{% generation %}…{% endgeneration %}` renders its body (transformers uses it only for the
    assistant-token mask, which the session path never asks for)."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.Scope(body, lineno=lineno)


def _raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(format):
    return datetime.now().strftime(format)


@lru_cache(maxsize=16)
def compile_chat_template(chat_template: str):
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[_GenerationTag, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env.from_string(chat_template)


def render_jinja_template(
    conversations,
    tools=None,
    documents=None,
    chat_template=None,
    return_assistant_tokens_mask=False,
    continue_final_message=False,
    add_generation_prompt=False,
    **kwargs,
):
    """transformers' signature and result: (one rendered string per conversation, generation indices)."""
    if return_assistant_tokens_mask:
        raise ValueError("return_assistant_tokens_mask is not supported by the CPU launcher's renderer")
    if continue_final_message:
        raise ValueError("continue_final_message is not supported by the CPU launcher's renderer")
    if chat_template is None:
        raise ValueError("no chat template")
    template = compile_chat_template(chat_template)
    tool_schemas = None
    if tools is not None:
        tool_schemas = []
        for tool in tools:
            if not isinstance(tool, dict):
                raise ValueError("Tools should be JSON schemas (the CPU launcher does not derive them from functions)")
            tool_schemas.append(tool)
    rendered = []
    for chat in conversations:
        if hasattr(chat, "messages"):
            chat = chat.messages
        rendered.append(
            template.render(
                messages=chat,
                tools=tool_schemas,
                documents=documents,
                add_generation_prompt=add_generation_prompt,
                **kwargs,
            )
        )
    return rendered, []
