import fc from 'fast-check';
import type { RecipeInput } from '../../recipe/builder.ts';

/** Pieces that break naive quoting: shell metacharacters, globs, expansions, odd whitespace, unicode. */
const NASTY = [
  ' ',
  '  ',
  '"',
  "'",
  "'\\''",
  '$',
  '$HOME',
  '$' + '{x}', // a parameter expansion, spelled so no one mistakes it for a template
  '$(id)',
  '`id`',
  '\\',
  '*',
  '?',
  '[a]',
  '{a,b}',
  '~',
  '!',
  '#',
  ';',
  '&',
  '|',
  '<',
  '>',
  '(',
  ')',
  '=',
  '%',
  '\t',
  '\v',
  '\f',
  '\x01',
  '\x7f',
  'é',
  '日本',
  '🙂',
  '\u00a0',
  '\u200b',
  '\u2028',
  '/',
  '.',
  '..',
  'a',
  'Z9',
] as const;

/** Any text a recipe text field accepts: no NUL, CR or LF, well-formed Unicode, often hostile to shells. */
export const anyText = fc
  .tuple(
    fc.constantFrom('', '', '-', '--', '~', '='),
    fc.oneof(
      fc.array(fc.constantFrom(...NASTY), { maxLength: 8 }).map((parts) => parts.join('')),
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.string({ unit: 'grapheme', maxLength: 12 }),
    ),
  )
  .map(([lead, body]) => lead + body)
  .filter((s) => !/[\0\n\r]/.test(s) && s.isWellFormed());

const nonEmptyText = anyText.filter((s) => s !== '');

/** Either empty (the field's "derive it" or "omit it" value) or any text. */
export const optionalText = fc.oneof(fc.constant(''), nonEmptyText);

/** A run id in the accepted shape (one path segment). */
export const runId = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/);

/** A path segment `PurePosixPath` keeps as is: no `/`, not empty, not `.`. */
export const pathSegment = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 8 })
  .filter((s) => !s.includes('/') && s !== '.' && !/[\0\n\r]/.test(s) && s.isWellFormed());

/** A path pathlib leaves unchanged: segments joined by single slashes, absolute or relative. */
export const normalizedPath = fc
  .tuple(fc.boolean(), fc.array(pathSegment, { minLength: 1, maxLength: 4 }))
  .map(([absolute, parts]) => (absolute ? '/' : '') + parts.join('/'))
  .filter((p) => !p.startsWith('//'));

/** GPU layouts whose world size the tensor-parallel size 4 divides. */
export const gpuLayout = fc
  .tuple(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 16 }))
  .filter(([nodes, gpus]) => (nodes * gpus) % 4 === 0);

/** Valid inputs with every path and host field (and the env values that reach the argv) arbitrary. */
export const hostileInput = fc.record({
  input: fc.record({
    model_dir: nonEmptyText,
    model_name: nonEmptyText,
    output_dir: nonEmptyText,
    megatron_path: nonEmptyText,
    prompt_data: nonEmptyText,
    hf_checkpoint: optionalText,
    ref_load: optionalText,
    save_dir: optionalText,
    save_traces_dir: optionalText,
    session_server_ip: optionalText,
    router_external_host: optionalText,
    miles_host_ip: optionalText,
    miles_root: anyText.map((s) => `/${s}`),
    run_id: runId,
  }) satisfies fc.Arbitrary<RecipeInput>,
  env: fc.record({ WANDB_API_KEY: nonEmptyText, GITHUB_COMMIT_NAME: anyText }, { requiredKeys: [] }),
});

/** Valid inputs over the numeric, boolean and choice fields (text fields at their defaults). */
export const validShapeInput = fc
  .record({
    layout: gpuLayout,
    rollout_batch_size: fc.integer({ min: 1, max: 64 }),
    n_samples_per_prompt: fc.integer({ min: 1, max: 16 }),
    steps: fc.integer({ min: 1, max: 8 }),
    max_seq_len: fc.integer({ min: 1, max: 1 << 20 }),
    response_fraction: fc.double({ min: 0, max: 1, noNaN: true }),
    num_rollout: fc.integer({ min: 1, max: 10_000 }),
    save_interval: fc.integer({ min: 1, max: 10_000 }),
    agent_trial_timeout: fc.integer({ min: 1, max: 86_400 }),
    prometheus_port: fc.integer({ min: 1, max: 65_535 }),
    use_prometheus: fc.boolean(),
    skip_prepare: fc.boolean(),
    cuda_core_dump: fc.boolean(),
    mode: fc.constantFrom('normal', 'debug_rollout_only'),
    session_server_ip: fc.constantFrom('', '0.0.0.0', '10.1.2.3'),
  })
  .map(({ layout: [num_nodes, num_gpus_per_node], steps, response_fraction, ...rest }) => {
    const samples = rest.rollout_batch_size * rest.n_samples_per_prompt;
    // A global batch that divides the rollout's samples: the largest divisor at most samples / steps.
    let global_batch_size = Math.max(1, Math.floor(samples / steps));
    while (samples % global_batch_size !== 0) global_batch_size--;
    return {
      ...rest,
      num_nodes,
      num_gpus_per_node,
      global_batch_size,
      rollout_max_response_len: Math.max(1, Math.floor(rest.max_seq_len * response_fraction)),
    } satisfies RecipeInput;
  });
