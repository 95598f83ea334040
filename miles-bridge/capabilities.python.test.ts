import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { parseJson } from '../common/python-json/loads.ts';
import { MilesCapabilitiesSchema } from '../replay/conformance/miles-capabilities.ts';

// The launcher's reading of a checkout's shape (capabilities.py), on checkouts made of the marker files
// alone: the 31f1ca96 shape and the newer one (sii-avalanche/miles@4d412b5a), one capability at a time.
const HERE = dirname(new URL(import.meta.url).pathname);
const PYTHON = '/usr/bin/python3';
const made: string[] = [];

const OLD_SHAPE: Record<string, string> = {
  'miles/rollout/session/server.py': 'class SessionServer: ...\n',
  'miles/rollout/session/types.py': 'from pydantic import BaseModel, validator\n',
  'miles/rollout/session/sessions.py': 'from fastapi import Request\n',
  'miles/rollout/session/v2/picker_hub/__init__.py': '',
  'miles/rollout/session/v2/picker_hub/drop_retries.py': 'def drop_retries(s, m): return s\n',
  'miles/utils/chat_template_utils/tito_tokenizer.py': 'class TITOTokenizer: ...\n',
};
const NEWER_SHAPE: Record<string, string> = {
  'miles/rollout/session/server.py': 'class SessionServer: ...\n',
  'miles/rollout/session/config.py': 'def compute_session_server_config(args, *, host, port): ...\n',
  'miles/rollout/session/types.py': 'from pydantic import BaseModel, field_validator\n',
  'miles/rollout/session/sessions.py':
    'from sglang.srt.entrypoints.openai.protocol import ChatCompletionResponse\n',
  'miles/rollout/session/v2/picker_hub/__init__.py': '',
  'miles/rollout/session/v2/picker_hub/drop_same_prompt_retries.py': 'def f(s, m): return s\n',
  'miles/rollout/session/v2/picker_hub/drop_rolled_back_leaves.py': 'def f(s, m): return s\n',
  'miles/utils/chat_template_utils/tito_tokenizer/base.py': 'class TITOTokenizer: ...\n',
  'miles/utils/chat_template_utils/tito_tokenizer/qwen.py': 'class Qwen3TITOTokenizer(TITOTokenizer): ...\n',
  'miles/utils/function_registry.py': 'def load_function(path): ...\n',
};

async function checkout(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'miles-shape-'));
  made.push(root);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

async function read(root: string): Promise<{ capabilities: unknown; picker: string }> {
  const script = [
    'import sys',
    `sys.path.insert(0, ${JSON.stringify(HERE)})`,
    'from pathlib import Path',
    'from capabilities import read_capabilities, default_picker_path',
    'c = read_capabilities(Path(sys.argv[1]))',
    'print(c.to_json())',
    'print(default_picker_path(c))',
  ].join('\n');
  const { stdout } = await execa(PYTHON, ['-c', script, root], { env: { PYTHONDONTWRITEBYTECODE: '1' } });
  const [json, picker] = stdout.trim().split('\n');
  return { capabilities: MilesCapabilitiesSchema.parse(parseJson(json as string)), picker: picker as string };
}

afterAll(async () => {
  for (const root of made) await rm(root, { recursive: true, force: true });
});

describe('miles-bridge/capabilities.py', () => {
  it('reads the 31f1ca96 shape as no capability and drop_retries as the default picker', async () => {
    const { capabilities, picker } = await read(await checkout(OLD_SHAPE));
    expect(capabilities).toEqual({
      session_server_config: false,
      tito_package: false,
      function_registry: false,
      pickers: ['drop_retries'],
      needs_pydantic2: false,
      sessions_import_sglang: false,
      qwen3_tito_family: false,
    });
    expect(picker).toBe('miles.rollout.session.v2.picker_hub.drop_retries');
  });

  it('reads the newer shape as every capability and drop_same_prompt_retries as the default picker', async () => {
    const { capabilities, picker } = await read(await checkout(NEWER_SHAPE));
    expect(capabilities).toEqual({
      session_server_config: true,
      tito_package: true,
      function_registry: true,
      pickers: ['drop_rolled_back_leaves', 'drop_same_prompt_retries'],
      needs_pydantic2: true,
      sessions_import_sglang: true,
      qwen3_tito_family: true,
    });
    expect(picker).toBe('miles.rollout.session.v2.picker_hub.drop_same_prompt_retries');
  });

  it("looks for the Qwen3 family in the package's qwen.py, not in a module beside it", async () => {
    const withoutQwen = { ...NEWER_SHAPE };
    delete withoutQwen['miles/utils/chat_template_utils/tito_tokenizer/qwen.py'];
    withoutQwen['miles/utils/chat_template_utils/tito_tokenizer.py'] =
      'class Qwen3TITOTokenizer(TITOTokenizer): ...\n';
    const { capabilities } = await read(await checkout(withoutQwen));
    expect(capabilities).toMatchObject({ tito_package: true, qwen3_tito_family: false });
  });

  it('reads each capability on its own (one marker moved onto the old shape at a time)', async () => {
    const moved: Array<[string, string, string]> = [
      [
        'miles/rollout/session/config.py',
        'def compute_session_server_config(args): ...\n',
        'session_server_config',
      ],
      ['miles/utils/chat_template_utils/tito_tokenizer/base.py', '', 'tito_package'],
      ['miles/rollout/session/types.py', 'from pydantic import field_validator\n', 'needs_pydantic2'],
      ['miles/rollout/session/sessions.py', 'from sglang.srt.parser import x\n', 'sessions_import_sglang'],
      [
        'miles/utils/chat_template_utils/tito_tokenizer.py',
        'class Qwen3TITOTokenizer(TITOTokenizer): ...\n',
        'qwen3_tito_family',
      ],
    ];
    for (const [path, text, name] of moved) {
      const { capabilities } = await read(await checkout({ ...OLD_SHAPE, [path]: text }));
      const on = Object.entries(capabilities as Record<string, unknown>).filter(([, v]) => v === true);
      expect(on.map(([k]) => k)).toEqual([name]);
    }
  });
});
