import { expect, test } from 'vitest';
import { checkArgv } from '../../recipe/drift/check-argv.ts';
import { index, problemsOf } from './helpers.ts';

const MODULE = 'miles.rollout.generate_hub.agentic_tool_call';

test('under --train-backend fsdp a name takes its FSDP record (kind and source)', async () => {
  const [megatron] = await problemsOf(['--fp16', 'x']);
  expect(megatron).toMatchObject({
    rule: 'switch-given-value',
    message: expect.stringContaining('(store_true)'),
  });
  expect(megatron?.where).not.toContain('fsdp_utils');
  const [fsdp] = await problemsOf(['--train-backend', 'fsdp', '--fp16', 'x']);
  expect(fsdp).toMatchObject({
    rule: 'switch-given-value',
    message: expect.stringContaining('(boolean_optional)'),
    where: expect.stringContaining('miles/backends/fsdp_utils/arguments.py'),
  });
});

test('a hook is selected by its module path or anything under it, not by a longer name', async () => {
  expect(await problemsOf(['--custom-generate-function-path', MODULE, '--max-seq-len', '8'])).toEqual([]);
  expect(
    await problemsOf(['--custom-generate-function-path', `${MODULE}.generate`, '--max-seq-len', '8']),
  ).toEqual([]);
  expect(
    (await problemsOf(['--custom-generate-function-path', `${MODULE}x.generate`, '--max-seq-len', '8'])).map(
      (p) => p.rule,
    ),
  ).toEqual(['out-of-scope']);
});

test('an empty MILES_USE_LEGACY_ROLLOUT_V1 leaves hooks on; a set one says it turned them off', async () => {
  const idx = await index();
  const argv = ['--custom-generate-function-path', `${MODULE}.generate`, '--max-seq-len', '8'];
  expect(checkArgv(argv, idx, { env: { MILES_USE_LEGACY_ROLLOUT_V1: '' } })).toEqual([]);
  expect(checkArgv(argv, idx, { env: { MILES_USE_LEGACY_ROLLOUT_V1: '1' } })).toEqual([
    expect.objectContaining({
      rule: 'out-of-scope',
      hint: 'MILES_USE_LEGACY_ROLLOUT_V1 is set, which disables generate hooks',
    }),
  ]);
});
