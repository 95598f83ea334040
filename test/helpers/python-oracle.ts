import { execFileSync } from 'node:child_process';

/**
 * CPython as a test oracle: runs `program` under Debian's /usr/bin/python3 with `input` as JSON on stdin
 * and parses what it prints as JSON. The program reads `json.load(sys.stdin)` and prints one
 * `json.dumps(...)`.
 */
export function pythonJson<T>(program: string, input: unknown): T {
  return JSON.parse(
    execFileSync('/usr/bin/python3', ['-c', program], {
      input: JSON.stringify(input),
      encoding: 'utf8',
      env: { ...process.env, PYTHONIOENCODING: 'utf-8' },
      maxBuffer: 1 << 26,
    }),
  ) as T;
}
