import { HarnessError } from '../../common/errors.ts';
import type { MetricPoint, MetricTable } from '../../replay/run-check/log/metric-table.ts';
import { type Node, parseExpression } from './expression.ts';
import { metricProvenance } from './metric-provenance.ts';

/** What an expression may refer to: plan constants (`rollout_count`) and the metrics from the logs. */
export interface EvaluationContext {
  readonly variables: Readonly<Record<string, number>>;
  readonly metrics: MetricTable;
}

type Value =
  | { readonly type: 'number'; readonly value: number }
  | { readonly type: 'boolean'; readonly value: boolean }
  | { readonly type: 'series'; readonly name: string; readonly points: readonly MetricPoint[] };

export interface Evaluation {
  readonly passed: boolean;
  /** The value of every name, call and index in the expression, keyed by its text: the evidence. */
  readonly observed: Readonly<Record<string, number | boolean>>;
}

/** Renders a node back to text, for evidence keys and error messages. */
function renderNode(node: Node): string {
  switch (node.kind) {
    case 'number':
      return String(node.value);
    case 'boolean':
      return String(node.value);
    case 'name':
      return /^[A-Za-z_][A-Za-z0-9_]*(\/[A-Za-z0-9_]+)*$/.test(node.name) ? node.name : `\`${node.name}\``;
    case 'call':
      return `${node.fn}(${node.args.map(renderNode).join(', ')})`;
    case 'index':
      return `${renderNode(node.target)}[${renderNode(node.index)}]`;
    case 'unary':
      return node.op === '-' ? `-${renderNode(node.operand)}` : `not ${renderNode(node.operand)}`;
    case 'binary':
      return `(${renderNode(node.left)} ${node.op} ${renderNode(node.right)})`;
  }
}

const SERIES_FUNCTIONS: Record<string, (values: number[]) => number> = {
  min: (v) => v.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY),
  max: (v) => v.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY),
  sum: (v) => v.reduce((a, b) => a + b, 0),
  mean: (v) => v.reduce((a, b) => a + b, 0) / v.length,
  first: (v) => v[0]!,
  last: (v) => v[v.length - 1]!,
  count: (v) => v.length,
};

/**
 * Evaluates one threshold expression. Every failure to evaluate (unknown name, a type mismatch, a
 * step that was never logged) throws a `threshold.*` HarnessError whose message names the expression.
 */
export function evaluateExpression(source: string, context: EvaluationContext): Evaluation {
  const tree = parseExpression(source);
  const observed: Record<string, number | boolean> = {};
  const fail = (
    code:
      | 'threshold.missing_step'
      | 'threshold.not_boolean'
      | 'threshold.type'
      | 'threshold.unknown_name'
      | 'threshold.unknown_function'
      | 'threshold.metric_missing',
    what: string,
  ): HarnessError =>
    new HarnessError(code, `threshold '${source}': ${what}`, { details: { expression: source } });

  const asNumber = (v: Value, node: Node): number => {
    if (v.type === 'number') return v.value;
    if (v.type === 'series') return v.points[v.points.length - 1]!.value;
    throw fail('threshold.type', `${renderNode(node)} is a boolean where a number is needed`);
  };
  const asBoolean = (v: Value, node: Node): boolean => {
    if (v.type === 'boolean') return v.value;
    throw fail('threshold.type', `${renderNode(node)} is a number where a condition is needed`);
  };
  const recordValue = (node: Node, v: Value): Value => {
    observed[renderNode(node)] =
      v.type === 'series' ? v.points[v.points.length - 1]!.value : (v.value as number | boolean);
    return v;
  };

  /** `quiet`: a metric handed whole to a function is not evidence by itself (its reduction is). */
  const evaluate = (node: Node, quiet = false): Value => {
    const record = quiet ? (_: Node, v: Value) => v : recordValue;
    switch (node.kind) {
      case 'number':
        return { type: 'number', value: node.value };
      case 'boolean':
        return { type: 'boolean', value: node.value };
      case 'name': {
        if (Object.hasOwn(context.variables, node.name))
          return record(node, { type: 'number', value: context.variables[node.name]! });
        const points = context.metrics.get(node.name);
        if (!points || points.length === 0) {
          // A name with a `/` is a metric, as Miles names them: say it was not logged, and by which Miles
          // it would be, rather than calling it unknown.
          if (node.name.includes('/')) {
            const needs = metricProvenance(node.name);
            throw fail(
              'threshold.metric_missing',
              `metric '${node.name}' was never logged${needs ? ` (${needs})` : ''}`,
            );
          }
          throw fail('threshold.unknown_name', `'${node.name}' is neither a plan value nor a logged metric`);
        }
        return record(node, { type: 'series', name: node.name, points });
      }
      case 'index': {
        const target = evaluate(node.target);
        if (target.type !== 'series')
          throw fail('threshold.type', `${renderNode(node.target)} is not a metric, so it cannot be indexed`);
        const step = asNumber(evaluate(node.index), node.index);
        const hit = target.points.filter((p) => p.step === step).at(-1);
        if (!hit) throw fail('threshold.missing_step', `'${target.name}' was not logged at step ${step}`);
        return record(node, { type: 'number', value: hit.value });
      }
      case 'call':
        return recordValue(node, call(node));
      case 'unary': {
        const operand = evaluate(node.operand);
        return node.op === '-'
          ? { type: 'number', value: -asNumber(operand, node.operand) }
          : { type: 'boolean', value: !asBoolean(operand, node.operand) };
      }
      case 'binary':
        return binary(node);
    }
  };

  const call = (node: Extract<Node, { kind: 'call' }>): Value => {
    if (node.fn === 'has') {
      const [arg] = node.args;
      if (node.args.length !== 1 || arg?.kind !== 'name')
        throw fail('threshold.type', 'has() takes one metric name');
      return { type: 'boolean', value: (context.metrics.get(arg.name)?.length ?? 0) > 0 };
    }
    if (node.fn === 'abs') {
      const [arg] = node.args;
      if (node.args.length !== 1 || !arg) throw fail('threshold.type', 'abs() takes one argument');
      return { type: 'number', value: Math.abs(asNumber(evaluate(arg), arg)) };
    }
    const reduce = Object.hasOwn(SERIES_FUNCTIONS, node.fn) ? SERIES_FUNCTIONS[node.fn] : undefined;
    if (!reduce)
      throw fail(
        'threshold.unknown_function',
        `unknown function '${node.fn}' (known: ${[...Object.keys(SERIES_FUNCTIONS), 'abs', 'has'].join(', ')})`,
      );
    if (node.args.length === 0) throw fail('threshold.type', `${node.fn}() needs an argument`);
    const args = node.args.map((a) => ({ node: a, value: evaluate(a, a.kind === 'name') }));
    const first = args[0]!;
    // One metric argument reduces its whole series; otherwise the arguments themselves are reduced.
    const values =
      args.length === 1 && first.value.type === 'series'
        ? first.value.points.map((p) => p.value)
        : args.map((a) => asNumber(a.value, a.node));
    return { type: 'number', value: reduce(values) };
  };

  const binary = (node: Extract<Node, { kind: 'binary' }>): Value => {
    if (node.op === 'and' || node.op === 'or') {
      // Short-circuit, so `has(m) and m > 0` does not fail when `m` was never logged.
      const left = asBoolean(evaluate(node.left), node.left);
      if (node.op === 'and' && !left) return { type: 'boolean', value: false };
      if (node.op === 'or' && left) return { type: 'boolean', value: true };
      return { type: 'boolean', value: asBoolean(evaluate(node.right), node.right) };
    }
    const l = asNumber(evaluate(node.left), node.left);
    const r = asNumber(evaluate(node.right), node.right);
    switch (node.op) {
      case '+':
        return { type: 'number', value: l + r };
      case '-':
        return { type: 'number', value: l - r };
      case '*':
        return { type: 'number', value: l * r };
      case '/':
        return { type: 'number', value: l / r };
      case '%':
        return { type: 'number', value: l % r };
      case '<':
        return { type: 'boolean', value: l < r };
      case '<=':
        return { type: 'boolean', value: l <= r };
      case '>':
        return { type: 'boolean', value: l > r };
      case '>=':
        return { type: 'boolean', value: l >= r };
      case '==':
        return { type: 'boolean', value: l === r };
      case '!=':
        return { type: 'boolean', value: l !== r };
    }
  };

  const result = evaluate(tree);
  if (result.type !== 'boolean')
    throw fail('threshold.not_boolean', 'the expression is a number, not a condition (add a comparison)');
  return { passed: result.value, observed };
}
