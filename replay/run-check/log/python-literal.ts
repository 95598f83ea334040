/**
 * A reader for the Python literals Miles prints in its metric log lines (`logger.info(f"step {n}:
 * {log_dict}")` prints a dict's repr). Covers what those dicts hold: numbers (with `nan`, `inf`),
 * `True`/`False`/`None`, quoted strings, lists, tuples, nested dicts, and numpy scalar reprs such as
 * `np.float64(0.5)`, which unwrap to their argument. Anything else makes the whole literal unreadable
 * (`undefined`) rather than half-read.
 */
export type PyValue = number | boolean | null | string | PyValue[] | { [key: string]: PyValue };

export function parsePythonLiteral(text: string): PyValue | undefined {
  let i = 0;
  const skip = (): void => {
    while (i < text.length && /\s/.test(text[i]!)) i += 1;
  };
  const fail = (): never => {
    throw new SyntaxError(`bad python literal at ${i}`);
  };

  const value = (): PyValue => {
    skip();
    const ch = text[i];
    if (ch === '{') return dict();
    if (ch === '[' || ch === '(') return sequence(ch === '[' ? ']' : ')');
    if (ch === "'" || ch === '"') return string();
    const num = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf|nan)/.exec(text.slice(i));
    if (num) {
      i += num[0].length;
      const raw = num[0];
      if (raw.endsWith('inf')) return raw.startsWith('-') ? -Infinity : Infinity;
      if (raw.endsWith('nan')) return Number.NaN;
      return Number(raw);
    }
    const word = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(text.slice(i));
    if (!word) return fail();
    i += word[0].length;
    if (word[0] === 'True') return true;
    if (word[0] === 'False') return false;
    if (word[0] === 'None') return null;
    skip();
    if (text[i] !== '(') return fail();
    // A constructor repr like np.float64(0.5): keep the single argument.
    const args = sequence(')');
    if (args.length !== 1) return fail();
    return args[0]!;
  };

  const sequence = (close: string): PyValue[] => {
    i += 1;
    const items: PyValue[] = [];
    skip();
    while (text[i] !== close) {
      items.push(value());
      skip();
      if (text[i] === ',') {
        i += 1;
        skip();
      } else if (text[i] !== close) fail();
    }
    i += 1;
    return items;
  };

  const dict = (): { [key: string]: PyValue } => {
    i += 1;
    const out: { [key: string]: PyValue } = {};
    skip();
    while (text[i] !== '}') {
      const key = value();
      skip();
      if (text[i] !== ':') fail();
      i += 1;
      out[String(key)] = value();
      skip();
      if (text[i] === ',') {
        i += 1;
        skip();
      } else if (text[i] !== '}') fail();
    }
    i += 1;
    return out;
  };

  const string = (): string => {
    const quote = text[i]!;
    i += 1;
    let out = '';
    while (i < text.length && text[i] !== quote) {
      if (text[i] === '\\' && i + 1 < text.length) {
        const esc = text[i + 1]!;
        out += esc === 'n' ? '\n' : esc === 't' ? '\t' : esc;
        i += 2;
      } else {
        out += text[i];
        i += 1;
      }
    }
    if (i >= text.length) fail();
    i += 1;
    return out;
  };

  try {
    const result = value();
    skip();
    return i === text.length ? result : undefined;
  } catch {
    return undefined;
  }
}
