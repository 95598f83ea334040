import { expect, test } from 'vitest';
import { problemsOf } from './helpers.ts';

/**
 * Whole problems, every field: what the report prints for each rule (flag, index into the argv, the
 * record's source location, the values involved, hints and suggestions, and the message that states the
 * arity, converter or choices involved). The messages are the drift report's output, so they are fixed
 * here as written; `where` is only required to name the source file the surface records.
 */
const CASES: [string[], unknown[]][] = [
  [
    ['--lr', '1', '--lr', '2'],
    [
      {
        flag: '--lr',
        rule: 'repeated',
        where: expect.stringContaining('megatron/training/arguments.py'),
        index: 2,
        message: '--lr repeats lr (first given at token 0 as 1); argparse keeps only the last',
        values: ['2'],
      },
    ],
  ],
  [
    ['--offload-rollout', '--no-offload-rollout'],
    [
      {
        flag: '--no-offload-rollout',
        rule: 'repeated',
        where: expect.stringContaining('miles/utils/arguments.py'),
        index: 1,
        message:
          '--no-offload-rollout repeats offload_rollout (first given as --offload-rollout at token 0); argparse keeps only the last',
      },
    ],
  ],
  [
    ['--lr', '1', '--lr=1'],
    [
      {
        flag: '--lr',
        rule: 'repeated-same',
        where: expect.stringContaining('megatron/training/arguments.py'),
        index: 2,
        message: '--lr repeats the same value 1 (first at token 0); harmless, but one is enough',
        values: ['1'],
      },
    ],
  ],
  [
    ['--offload-rollout', '--offload-rollout'],
    [
      {
        flag: '--offload-rollout',
        rule: 'repeated-same',
        where: expect.stringContaining('miles/utils/arguments.py'),
        index: 1,
        message: '--offload-rollout repeats the same switch (first at token 0); harmless, but one is enough',
      },
    ],
  ],
  [
    ['--worker-urls', 'a', 'b', '--worker-urls', 'a', 'b'],
    [
      {
        flag: '--worker-urls',
        rule: 'repeated-same',
        where: expect.stringContaining('router_args.py'),
        index: 3,
        message: '--worker-urls repeats the same values a b (first at token 0); harmless, but one is enough',
        values: ['a', 'b'],
      },
    ],
  ],
  [
    ['--worker-urls', '--worker-urls', 'a'],
    [
      {
        flag: '--worker-urls',
        rule: 'repeated',
        where: expect.stringContaining('router_args.py'),
        index: 1,
        message: '--worker-urls repeats worker_urls (first given at token 0); argparse keeps only the last',
        values: ['a'],
      },
    ],
  ],
  [
    ['--rollout-shufle'],
    [
      {
        flag: '--rollout-shufle',
        rule: 'unknown-flag',
        where: null,
        index: 0,
        message: '--rollout-shufle is not an option of train.py at Miles 31f1ca96',
        suggestions: ['--rollout-shuffle'],
      },
    ],
  ],
  [
    ['--rollout-shuffel'],
    [
      {
        flag: '--rollout-shuffel',
        rule: 'unknown-flag',
        where: null,
        index: 0,
        message: '--rollout-shuffel is not an option of train.py at Miles 31f1ca96',
        suggestions: ['--rollout-shuffle'],
      },
    ],
  ],
  [
    ['--lr'],
    [
      {
        flag: '--lr',
        where: expect.stringContaining('megatron/training/arguments.py'),
        index: 0,
        rule: 'missing-value',
        message: '--lr needs exactly one value and got none',
      },
    ],
  ],
  [
    ['--session-server-port'],
    [
      {
        flag: '--session-server-port',
        where: expect.stringContaining('miles/utils/arguments.py'),
        index: 0,
        rule: 'missing-value',
        message: '--session-server-port needs at least 1 value(s) and got none',
      },
    ],
  ],
  [
    ['--rampup-batch-size', '1'],
    [
      {
        flag: '--rampup-batch-size',
        where: expect.stringContaining('megatron/training/training_config.py'),
        index: 0,
        rule: 'nargs',
        message: "--rampup-batch-size takes exactly 3 values (nargs 3); got 1: '1'",
        values: ['1'],
      },
    ],
  ],
  [
    ['--use-session-server', 'v2', 'v1'],
    [
      {
        flag: '--use-session-server',
        where: expect.stringContaining('miles/utils/arguments.py'),
        index: 0,
        rule: 'nargs',
        message: "--use-session-server takes 0 to 1 values (nargs ?); got 2: 'v2' 'v1'",
        values: ['v2', 'v1'],
      },
    ],
  ],
  [
    ['--worker-urls=a', 'b'],
    [
      {
        flag: '--worker-urls',
        where: expect.stringContaining('router_args.py'),
        index: 0,
        rule: 'nargs',
        message:
          "--worker-urls takes any number of values (nargs *); got 2: 'a' 'b' (a --flag=value form takes exactly one)",
        values: ['a', 'b'],
      },
    ],
  ],
  [
    ['--use-session-server', 'v3'],
    [
      {
        flag: '--use-session-server',
        where: expect.stringContaining('miles/utils/arguments.py'),
        index: 0,
        rule: 'not-in-choices',
        message:
          "--use-session-server 'v3' is rejected by Miles' argument validation; it accepts v1, v2 or no value",
        values: ['v3'],
        hint: 'checked at miles/utils/arguments.py (miles_validate_args: use_session_server not in (False, True, "v1", "v2"))',
      },
    ],
  ],
  [
    ['--session-server-port', '1', '2', '3'],
    [
      {
        flag: '--session-server-port',
        where: expect.stringContaining('miles/utils/arguments.py'),
        index: 0,
        rule: 'nargs',
        message:
          "--session-server-port takes at most 2 values in Miles' argument validation; got 3: '1' '2' '3'",
        values: ['1', '2', '3'],
        hint: 'checked at miles/ray/rollout/router_manager.py (_resolve_session_server_ports)',
      },
    ],
  ],
  [
    ['--no-offload-rollout', 'x', 'y'],
    [
      {
        flag: '--no-offload-rollout',
        where: expect.stringContaining('miles/utils/arguments.py'),
        index: 0,
        rule: 'switch-given-value',
        message: "--no-offload-rollout is a switch (boolean_optional) and takes no value; got 'x' 'y'",
        values: ['x', 'y'],
      },
    ],
  ],
  [
    ['x', '--lr', '1', '--', 'y', 'z'],
    [
      {
        flag: 'x',
        rule: 'unexpected-positional',
        where: null,
        message: "'x' comes before any flag; train.py takes no positional arguments",
        index: 0,
      },
      {
        flag: 'y',
        rule: 'unexpected-positional',
        where: null,
        message: "'y' follows '--', so argparse treats it as a positional argument; train.py takes none",
        index: 4,
      },
      {
        flag: 'z',
        rule: 'unexpected-positional',
        where: null,
        message: "'z' follows '--', so argparse treats it as a positional argument; train.py takes none",
        index: 5,
      },
    ],
  ],
  [
    ['--sglang-no-such-option'],
    [
      {
        flag: '--sglang-no-such-option',
        rule: 'unknown-flag',
        where: null,
        index: 0,
        message: '--sglang-no-such-option is not an option of train.py at Miles 31f1ca96',
        hint: 'the --sglang-* family mirrors sglang ServerArgs at sgl-project/sglang@001067ff; a different build may add or drop options',
      },
    ],
  ],
  [
    ['--eval-sglang-tp-size', '2'],
    [
      {
        flag: '--eval-sglang-tp-size',
        rule: 'unknown-flag',
        where: null,
        index: 0,
        message: '--eval-sglang-tp-size is not an option of train.py at Miles 31f1ca96',
        hint: "Miles does not register --eval-sglang-tp-size: 'tp_size' is in the skipped list of the --eval-sglang-* family",
        suggestions: ['--eval-sglang-dp-size', '--eval-sglang-ep-size', '--eval-sglang-pp-size'],
      },
    ],
  ],
  [
    ['--session-server-workers', '3'],
    [
      {
        flag: '--session-server-workers',
        rule: 'unknown-flag',
        where: null,
        index: 0,
        message: '--session-server-workers is not an option of train.py at Miles 31f1ca96',
        hint: 'known to overlay e4178aa9: pass --overlay e4178aa9 to target that Miles',
      },
    ],
  ],
  [
    ['--empty-unused-memory-level', '7'],
    [
      {
        flag: '--empty-unused-memory-level',
        where: expect.stringContaining('megatron/training/training_config.py'),
        index: 0,
        rule: 'not-in-choices',
        message: "--empty-unused-memory-level '7' is not one of its choices: 0, 1, 2",
        values: ['7'],
      },
    ],
  ],
  [
    ['--multi-lora-adapter', 'a'],
    [
      {
        flag: '--multi-lora-adapter',
        where: expect.stringContaining('miles/utils/arguments.py'),
        index: 0,
        rule: 'nargs',
        message: "--multi-lora-adapter takes exactly 2 values (nargs 2); got 1: 'a'",
        values: ['a'],
      },
    ],
  ],
  [
    ['--lr', 'x', '--num-rollout', '1.5'],
    [
      {
        flag: '--lr',
        where: expect.stringContaining('megatron/training/arguments.py'),
        index: 0,
        rule: 'invalid-type',
        message: "--lr converts its value with float(), which rejects 'x'",
        values: ['x'],
      },
      {
        flag: '--num-rollout',
        where: expect.stringContaining('miles/utils/arguments.py'),
        index: 2,
        rule: 'invalid-type',
        message: "--num-rollout converts its value with int(), which rejects '1.5'",
        values: ['1.5'],
      },
    ],
  ],
  [
    ['--warmup-ratio', '0.1'],
    [
      {
        flag: '--warmup-ratio',
        rule: 'out-of-scope',
        where: expect.stringContaining('fsdp'),
        index: 0,
        message: '--warmup-ratio exists only with --train-backend fsdp',
        hint: 'the default Megatron backend does not register it',
      },
    ],
  ],
  [
    ['--max-seq-len', '3'],
    [
      {
        flag: '--max-seq-len',
        rule: 'out-of-scope',
        where: expect.stringContaining('agentic_tool_call'),
        index: 0,
        message:
          '--max-seq-len is added by the generate hook miles.rollout.generate_hub.agentic_tool_call, which this argv does not select',
        hint: 'pass --custom-generate-function-path miles.rollout.generate_hub.agentic_tool_call.generate',
      },
    ],
  ],
  [
    ['--train-backend', 'fsdp', '--offload-rollout', 'x'],
    [
      {
        flag: '--offload-rollout',
        where: expect.stringContaining(''),
        index: 2,
        rule: 'switch-given-value',
        message: "--offload-rollout is a switch (boolean_optional) and takes no value; got 'x'",
        values: ['x'],
      },
    ],
  ],
];

test.each(CASES)('%j', async (argv, problems) => {
  expect(await problemsOf(argv)).toEqual(problems);
});

test('an unknown flag names the overlays applied', async () => {
  expect(await problemsOf(['--nope'], ['e4178aa9', '01562346'])).toEqual([
    {
      flag: '--nope',
      rule: 'unknown-flag',
      where: null,
      index: 0,
      message: '--nope is not an option of train.py at Miles 31f1ca96 with overlays e4178aa9, 01562346',
    },
  ]);
});
