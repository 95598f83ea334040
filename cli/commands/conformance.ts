import { relative, resolve } from 'node:path';
import { parseFlags, switchFlag } from '../../common/cli-flags.ts';
import { isHarnessError } from '../../common/errors.ts';
import { EXIT } from '../../common/exit-codes.ts';
import { type ConformanceReport, runConformance } from '../../replay/conformance/run-conformance.ts';
import type { CliCommand, CliIo } from '../io.ts';
import { milesCheckoutFlags, milesRootOf } from './miles-checkout-flags.ts';
import { tokenizerFlag } from './serve/options.ts';

const SPEC = {
  command: 'conformance',
  operands: '[TRACE...]',
  about: `Starts Miles' real session server v2 from a checkout on CPU (miles-bridge/session_server.py: Miles'
own modules, with only what cannot be imported replaced and the toy tokenizer) and the fake session
server, both in front of one scripted fake policy; replays the traces (default: the bundled
fixtures/conformance/session-v2) against both and compares every answer: statuses, content types,
bodies byte for byte, samples replies tensor by tensor; then a fixed set of raw requests (unknown ids,
malformed bodies, 405s, proxy fall-throughs, samples-op refusals). Session ids and clocks are masked.`,
  flags: {
    ...milesCheckoutFlags("Debian's fastapi, uvicorn, httpx, pydantic, numpy, setproctitle"),
    tokenizer: tokenizerFlag(
      "toy (default) or qwen3: both servers on Qwen3's real tokenizer (the fake's qwen3\nfamily; the launcher gets --tokenizer qwen3 and runs Miles' Qwen3TITOTokenizer)",
    ),
    json: switchFlag(
      'one JSON document: {"miles_root", "miles_profile": {"name", "commits"}, "replacements",\n"adaptations", "traces": [{"trace",\n"exchanges", "differences": [{"step", "what", "fake", "miles"}]}], "agree", "total",\n"raw_requests": {"exchanges", "differences"}}',
    ),
  },
  footer: `Exit status: 0 every trace agrees, 1 differences (listed), 2 usage, 3 unmet precondition (no checkout,
a Python module that cannot be imported: the message names its Debian package). Docs: docs/conformance.md`,
};

function renderText(report: ConformanceReport, cwd: string): string {
  const lines = [
    `miles profile: ${report.profile.name} (${report.profile.commits.join(', ')})`,
    ...report.replacements.map((r) => `miles: ${r}`),
    ...report.adaptations.map((a) => `miles: ${a}`),
  ];
  for (const t of [...report.traces, report.rawRequests]) {
    const name = t === report.rawRequests ? 'raw requests' : relative(cwd, t.trace);
    if (t.differences.length === 0) {
      lines.push(`${name}: agrees (${t.exchanges} exchanges)`);
      continue;
    }
    lines.push(`${name}: ${t.differences.length} difference(s)`);
    for (const d of t.differences) {
      lines.push(`  ${d.step}: ${d.what}`, `    fake:  ${d.fake}`, `    miles: ${d.miles}`);
    }
  }
  lines.push(`${report.agree}/${report.traces.length} traces agree`);
  return `${lines.join('\n')}\n`;
}

export const command: CliCommand = {
  summary: "compare the fake session server with Miles' real one on CPU, trace by trace",
  async run(argv: readonly string[], io: CliIo): Promise<number> {
    const parsed = parseFlags(argv, SPEC, io);
    if (parsed === undefined) return EXIT.ok;
    const options = parsed.values;
    const milesRoot = milesRootOf(options.miles_root, io.env, 'conformance');
    try {
      const report = await runConformance({
        milesRoot: resolve(io.cwd, milesRoot),
        python: options.python,
        traces: parsed.positionals.map((t) => resolve(io.cwd, t)),
        tokenizer: options.tokenizer,
        signal: io.signal,
      });
      if (options.json) {
        io.stdout.write(
          `${JSON.stringify({
            miles_root: report.milesRoot,
            miles_profile: report.profile,
            replacements: report.replacements,
            adaptations: report.adaptations,
            traces: report.traces,
            agree: report.agree,
            total: report.traces.length,
            raw_requests: report.rawRequests,
          })}\n`,
        );
      } else {
        io.stdout.write(renderText(report, io.cwd));
      }
      const allAgree = report.agree === report.traces.length && report.rawRequests.differences.length === 0;
      return allAgree ? EXIT.ok : EXIT.failed;
    } catch (error) {
      if (isHarnessError(error) && error.code.startsWith('precondition.')) {
        io.stderr.write(`${error.message}\n`);
        return EXIT.precondition;
      }
      throw error;
    }
  },
};
