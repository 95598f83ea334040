#!/usr/bin/env python3
"""Reads a real tmux pane through Harbor's own TmuxSession, step by step: an oracle for the engine's
terminal model (fakes/harbor/engine/terminal.ts, tmux-pane.ts).

Input (stdin): {"prompt": "root@…:/app# ", "steps": [["keys", …], …]}. Each step sends its keys the way
Terminus 2 does (`send_keys(keys, block=False)`, one call per command), waits until the shell is idle,
and records `get_incremental_output()` and `capture_pane()`. Output: {"initial": str, "steps":
[{"incremental": str, "visible": str}, …]}. Harbor's code is loaded from HARBOR_SRC at run time.
"""

import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from derive_terminus2_golden import T2, harbor_pane, load, stub_modules  # noqa: E402


async def idle(session, prompt_line: str) -> None:
    deadline = time.time() + 20
    last, stable = None, 0
    while time.time() < deadline:
        screen = await session.capture_pane(capture_entire=True)
        lines = [line for line in screen.split("\n") if line.strip()]
        stable = stable + 1 if screen == last else 0
        if lines and lines[-1].startswith(prompt_line) and stable >= 2:
            return
        last = screen
        await asyncio.sleep(0.15)
    raise TimeoutError(f"pane did not settle: {last!r}")


async def run(spec: dict) -> dict:
    stub_modules()
    tmux_session = load(T2 / "tmux_session.py", "harbor_tmux_session")
    prompt = spec["prompt"]
    async with harbor_pane(tmux_session, prompt) as (session, env):
        await idle(session, prompt.rstrip())
        await env.exec("tmux send-keys -t terminus-2 -- 'clear' Enter")
        await asyncio.sleep(0.3)
        await idle(session, prompt.rstrip())
        out = {"initial": await session.get_incremental_output(), "steps": []}
        for keys in spec["steps"]:
            for key in keys:
                await session.send_keys(key, block=False, min_timeout_sec=0.05)
            await idle(session, prompt.rstrip())
            out["steps"].append(
                {
                    "incremental": await session.get_incremental_output(),
                    "visible": await session.capture_pane(capture_entire=False),
                }
            )
        return out


print(json.dumps(asyncio.run(run(json.load(sys.stdin)))))
