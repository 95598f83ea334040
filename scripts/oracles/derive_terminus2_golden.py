#!/usr/bin/env python3
"""Derive the wire requests of Harbor's golden Terminus-2 context-summarization scenario.

An oracle independent of the TypeScript engine: the terminal text comes from Harbor's own
`TmuxSession` (tmux_session.py, Harbor 6c9ba3f0) driving a real tmux 160x40 pane, replies are read
with Harbor's own parsers, U0 is Harbor's template file filled with `str.format`, and the prompt
f-strings and helpers (`_limit_output_length`, `_get_completion_confirmation_message`, the summary,
question, answer and handoff prompts) are evaluated from terminus_2.py's source text. Harbor's code
is read from HARBOR_SRC (default /work/ext/harbor) at run time; nothing of it is copied.

The message flow of the scenario (which request holds which messages) follows terminus_2.py
`_run_agent_loop`, `_query_llm` and `_summarize`; the script then checks its result against Harbor's
golden traces under Harbor's own `normalize_traces` (tests/integration/test_utils.py).

Usage: /usr/bin/python3 scripts/oracles/derive_terminus2_golden.py EPISODE.json OUT.json
Needs tmux. Writes [{"status": int, "messages": [...]}, ...] in request order.
"""

import ast
import asyncio
import contextlib
import importlib.util
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

HARBOR = Path(os.environ.get("HARBOR_SRC", "/work/ext/harbor"))
T2 = HARBOR / "src/harbor/agents/terminus_2"


def stub_modules() -> None:
    """Only what tmux_session.py and test_utils.py import from harbor; the rest stays unloaded."""
    names = {
        "harbor": {},
        "harbor.agents": {},
        "harbor.agents.terminus_2": {},
        "harbor.agents.terminus_2.asciinema_handler": {"AsciinemaHandler": object},
        "harbor.environments": {},
        "harbor.environments.base": {"BaseEnvironment": object},
        "harbor.utils": {},
        "harbor.utils.logger": {"logger": logging.getLogger("harbor-oracle")},
        "harbor.utils.traces_utils": {"export_traces": None},
        "harbor.utils.trajectory_utils": {"format_trajectory_json": None},
    }
    for name, attrs in names.items():
        module = types.ModuleType(name)
        module.__dict__.update(attrs)
        sys.modules[name] = module


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class LocalEnvironment:
    """`BaseEnvironment.exec` over a local shell with a private tmux socket directory."""

    def __init__(self, root: Path):
        self.root = root
        self.session_id = "oracle"
        self.env = dict(os.environ, TMUX_TMPDIR=str(root), HOME=str(root))
        self.env.pop("TMUX", None)

    async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None):
        done = subprocess.run(
            ["bash", "-c", command], cwd=self.root / "app", env=self.env, capture_output=True, text=True
        )
        return types.SimpleNamespace(return_code=done.returncode, stdout=done.stdout, stderr=done.stderr)


@contextlib.asynccontextmanager
async def harbor_pane(tmux_session, prompt: str):
    """Harbor's own TmuxSession ("terminus-2", as Terminus 2 names it) started in a private tmux server,
    in a throwaway home whose bash prints `prompt`; yields (session, environment), kills the server after."""
    with tempfile.TemporaryDirectory(prefix="t2-oracle-") as tmp:
        root = Path(tmp)
        (root / "app").mkdir()
        (root / ".bash_profile").write_text(
            f"PS1={json.dumps(prompt)}\nunset PROMPT_COMMAND\nHISTFILE=/dev/null\ncd {root / 'app'}\n"
        )
        env = LocalEnvironment(root)
        session = tmux_session.TmuxSession(
            session_name="terminus-2",
            environment=env,
            logging_path=root / "pane.log",
            local_asciinema_recording_path=None,
            remote_asciinema_recording_path=None,
        )
        try:
            await session.start()
            yield session, env
        finally:
            await env.exec("tmux kill-server")


class Terminus2Source:
    """Methods and f-strings of terminus_2.py, evaluated from its source text."""

    def __init__(self) -> None:
        self.text = (T2 / "terminus_2.py").read_text()
        tree = ast.parse(self.text)
        cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Terminus2")
        self.methods = {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        summarize = self.methods["_summarize"]
        self.assigns = {}
        for node in ast.walk(summarize):
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                self.assigns.setdefault(node.targets[0].id, node.value)

    def method(self, name: str):
        node = self.methods[name]
        module = ast.Module(body=[node], type_ignores=[])
        namespace: dict = {}
        exec(compile(ast.fix_missing_locations(module), "terminus_2.py", "exec"), namespace)
        return namespace[name]

    def expression(self, variable: str, **values) -> str:
        node = ast.Expression(body=self.assigns[variable])
        return eval(compile(node, "terminus_2.py", "eval"), {}, values)


async def derive(script: dict) -> list[dict]:
    stub_modules()
    tmux_session = load(T2 / "tmux_session.py", "harbor_tmux_session")
    parser_module = load(T2 / f"terminus_{script['parser']}_plain_parser.py", "harbor_parser")
    parser = (
        parser_module.TerminusJSONPlainParser()
        if script["parser"] == "json"
        else parser_module.TerminusXMLPlainParser()
    )
    source = Terminus2Source()
    agent = types.SimpleNamespace(_parser_name=script["parser"])
    limit = source.method("_limit_output_length")
    confirmation = source.method("_get_completion_confirmation_message")
    template = (T2 / f"templates/terminus-{script['parser']}-plain.txt").read_text()
    prompt = script["shell_prompt"]
    instruction = script["instruction"]

    async with harbor_pane(tmux_session, prompt) as (session, env):
        await settle(session, prompt.rstrip(), 1)
        # The pane as Terminus 2 finds it after setup's `clear` (tmux clears screen and history).
        await env.exec("tmux send-keys -t terminus-2 -- 'clear' Enter")
        await settle(session, prompt.rstrip(), 1, cleared=True)
        return await play(script, session, parser, agent, limit, confirmation, template, source, instruction)


async def settle(session, prompt_line: str, prompts: int, cleared: bool = False) -> None:
    """Waits until the shell has answered: `prompts` prompt lines and a stable pane."""
    deadline = time.time() + 20
    last = None
    while time.time() < deadline:
        screen = await session.capture_pane(capture_entire=True)
        lines = [line for line in screen.split("\n") if line.strip()]
        ready = lines and lines[-1] == prompt_line and sum(1 for l in lines if l.startswith(prompt_line)) >= prompts
        if cleared:
            ready = ready and len(lines) == 1
        if ready and screen == last:
            return
        last = screen
        await asyncio.sleep(0.2)
    raise TimeoutError(f"pane did not settle: {last!r}")


async def play(script, session, parser, agent, limit, confirmation, template, source, instruction):
    requests: list[dict] = []
    prompt_line = script["shell_prompt"].rstrip()
    submitted = 1
    initial = limit(agent, await session.get_incremental_output())
    u0 = {"role": "user", "content": template.format(instruction=instruction, terminal_state=initial)}
    history: list[dict] = [u0]
    prompt = None  # U0 is already in history for the first request
    pending_completion = False
    compaction = script["compactions"][0]

    def send(call, messages, reply=None, status=200):
        entry = {"call": call, "status": status, "messages": [dict(m) for m in messages]}
        if reply is not None:
            entry["reply"] = reply
        requests.append(entry)

    for index, turn in enumerate(script["turns"]):
        messages = history + ([{"role": "user", "content": prompt}] if prompt is not None else [])
        if turn.get("context_error"):
            send("main", messages, status=400)
            # _query_llm: unwind (500 tokens a message, limit 7000, target 4000) then _summarize.
            while len(history) > 1 and 7000 - 500 * len(history) < 4000:
                history = history[:-2]
            summary_prompt = source.expression("summary_prompt", original_instruction=instruction)
            summary = compaction["summary"]["content"]
            send("summary", history + [{"role": "user", "content": summary_prompt}], summary)
            screen = await session.capture_pane(capture_entire=False)
            question_prompt = source.expression(
                "question_prompt",
                original_instruction=instruction,
                summary_response=types.SimpleNamespace(content=summary),
                current_screen=screen,
            )
            questions = compaction["questions"]["content"]
            send("questions", [{"role": "user", "content": question_prompt}], questions)
            answer_prompt = source.expression("answer_request_prompt", model_questions=questions)
            answers = compaction["answers"]["content"]
            send(
                "answers",
                history
                + [
                    {"role": "user", "content": summary_prompt},
                    {"role": "assistant", "content": summary},
                    {"role": "user", "content": answer_prompt},
                ],
                answers,
            )
            history = [history[0], {"role": "user", "content": question_prompt}, {"role": "assistant", "content": questions}]
            prompt = source.expression("handoff_prompt", answers_response=types.SimpleNamespace(content=answers))
            messages = history + [{"role": "user", "content": prompt}]
        reply = turn["content"]
        send("main", messages, reply)
        history = messages + [{"role": "assistant", "content": reply}]
        result = parser.parse_response(reply)
        assert not result.error and not result.warning, (index, result)
        for command in result.commands:
            await session.send_keys(command.keystrokes, block=False, min_timeout_sec=min(command.duration, 60))
            submitted += command.keystrokes.count("\n")
        await settle(session, prompt_line, submitted)
        output = limit(agent, await session.get_incremental_output())
        if result.is_task_complete:
            if pending_completion:
                break
            pending_completion = True
            prompt = confirmation(agent, output)
        else:
            pending_completion = False
            prompt = limit(agent, output)
    return requests


def traces_view(requests: list[dict]) -> dict[str, list[list[dict]]]:
    """What Harbor's trace export shows of these requests: main calls with their replies, and the
    sub-agent traces rebuilt from trajectory steps (`steps_to_include = 1 + (n - 1) // 2` of the n
    history messages, terminus_2.py `_summarize`), which leaves out the last assistant message."""
    view: dict[str, list[list[dict]]] = {"main": [], "summary": [], "questions": [], "answers": []}
    for request in requests:
        if request["status"] != 200:
            continue
        messages = request["messages"]
        reply = {"role": "assistant", "content": request["reply"]}
        if request["call"] in ("summary", "answers"):
            tail = 1 if request["call"] == "summary" else 3
            history = messages[:-tail]
            steps = 1 + (len(history) - 1) // 2
            messages = history[: 2 * steps - 1] + messages[-tail:]
        view[request["call"]].append(messages + [reply])
    return view


def check_golden(requests: list[dict], golden_dir: Path) -> None:
    """Compares with Harbor's golden traces under Harbor's own `normalize_traces`."""
    normalize = load(HARBOR / "tests/integration/test_utils.py", "harbor_test_utils").normalize_traces
    view = traces_view(requests)
    files = {
        "main": "hello-world-context-summarization.traces.json",
        "summary": "hello-world-context-summarization.summarization-1-summary.traces.json",
        "questions": "hello-world-context-summarization.summarization-1-questions.traces.json",
        "answers": "hello-world-context-summarization.summarization-1-answers.traces.json",
    }
    for call, name in files.items():
        golden = [e for e in json.loads((golden_dir / name).read_text()) if e.get("trace_source", "main") in ("main", None)]
        ours = normalize([{"conversations": c} for c in view[call]])
        theirs = normalize([{"conversations": e["conversations"]} for e in golden])
        assert ours == theirs, f"{call}: derived requests differ from {name} under normalize_traces"
        print(f"{call}: {len(ours)} trace(s) equal {name} under Harbor's normalize_traces")


def main() -> None:
    episode, out = sys.argv[1], sys.argv[2]
    script = json.loads(Path(episode).read_text())
    requests = asyncio.run(derive(script))
    if script["parser"] == "json":
        check_golden(requests, HARBOR / "tests/golden/terminus_2")
    Path(out).write_text(json.dumps(requests, indent=2, ensure_ascii=False) + "\n")
    print(f"{len(requests)} requests -> {out}")


if __name__ == "__main__":
    main()
