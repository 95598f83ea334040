import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BRIDGE_ENTRY_POINTS } from './entry-points.ts';

const ROOM = dirname(fileURLToPath(import.meta.url));

describe('miles-bridge entry points', () => {
  it.each(Object.entries(BRIDGE_ENTRY_POINTS))('%s exists inside miles-bridge/', (_name, path) => {
    expect(existsSync(path)).toBe(true);
    expect(path.startsWith(`${ROOM}/`)).toBe(true);
  });

  it('every top-level Python program of the room is an entry point or a module one of them imports', () => {
    const entryNames = new Set(Object.values(BRIDGE_ENTRY_POINTS).map((p) => basename(p)));
    const imported = new Set([
      'standins.py',
      'qwen3_mode.py',
      'chat_template_render.py',
      'toy_tito.py',
      'safetensors_format.py',
      'capabilities.py',
      'newer_session.py',
      'dump_frames.py', // convert_dumps.py's answer framing
    ]);
    const loose = readdirSync(ROOM).filter(
      (f) => f.endsWith('.py') && !entryNames.has(f) && !imported.has(f),
    );
    expect(loose).toEqual([]);
  });
});
