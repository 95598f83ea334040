import { describe, expect, it } from 'vitest';
import { captureIo } from '../io.ts';
import { main } from '../main.ts';

// The paths of `harness differential` that need no Miles checkout; the run itself is the `miles` project
// (test/miles/differential.test.ts).
describe('harness differential (usage and preconditions)', () => {
  it('is a usage error (exit 2) without a checkout to name', async () => {
    const io = captureIo({});
    expect(await main(['differential'], io)).toBe(2);
    expect(io.err()).toContain('--miles-root');
  });

  it('is a usage error (exit 2) for a session server it does not know', async () => {
    const io = captureIo({});
    expect(await main(['differential', '--miles-root', '/x', '--session-server', 'real'], io)).toBe(2);
    expect(io.err()).toContain('--session-server must be fake or miles');
  });

  it('is a usage error (exit 2) naming the known tokenizers for one it does not know', async () => {
    const io = captureIo({});
    expect(await main(['differential', '--miles-root', '/x', '--tokenizer', 'bogus'], io)).toBe(2);
    expect(io.err()).toContain('--tokenizer must be toy or qwen3');
    expect(io.out()).toBe('');
  });

  it('exits 3 naming the missing path for a directory that is not a Miles checkout, before starting anything', async () => {
    const io = captureIo({});
    expect(await main(['differential', '--miles-root', '/nonexistent/miles'], io)).toBe(3);
    expect(io.err()).toContain('/nonexistent/miles: no examples/swe-agent-harbor-docker/generate.py');
    // One `[harness]` line, as every error (docs/cli.md "Errors").
    expect(io.err().split('\n')[0]).toMatch(/^\[harness\] --miles-root /);
    expect(io.out()).toBe('');
  });

  it('takes the checkout from MILES_ROOT', async () => {
    const io = captureIo({ MILES_ROOT: '/nonexistent/from-env' });
    expect(await main(['differential', '--json'], io)).toBe(3);
    expect(io.err()).toContain('/nonexistent/from-env');
    expect(io.out()).toBe('');
  });

  it('prints its help', async () => {
    const io = captureIo({});
    expect(await main(['differential', '--help'], io)).toBe(0);
    expect(io.out()).toContain('usage: harness differential [--miles-root PATH]');
  });
});
