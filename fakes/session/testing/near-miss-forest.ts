import fc from 'fast-check';
import { pythonJsonLoads } from '../../../common/python-json/loads.ts';
import type { SessionRecord } from '../record.ts';
import { type AttachIndex, SessionTree, type TrajectoryNode } from '../tree.ts';

/**
 * Session trees and requests whose messages are near misses of each other, for the attach-point search
 * (tests only). A message is drawn from a small space so that random picks collide, and a request
 * re-sends a node's path with each message either as stored, re-spelt in a way the strict matcher
 * ignores (key order, `null`/`""`/`[]`/absent, a tool call's `index`, an extra key, `1`/`1.0`/`true`), or
 * changed in a field it compares. Messages travel as JSON text, so Python reads the same values
 * (`1.0` stays a float) and the fake parses them as its chat route does (`keepFloats`).
 */

interface MessageSpec {
  readonly role: 'user' | 'assistant';
  /** `n1`, `nf`, `nt`: a one-item list `[{"n": 1}]`, with `1.0`, with `true` (equal under Python `==`). */
  readonly content: 'a' | 'b' | 'n1' | 'nf' | 'nt';
  readonly reasoning: 'absent' | 'null' | 'empty' | 'r';
  readonly tools: 'absent' | 'null' | 'empty' | 'c0' | 'c0-index' | 'c1';
  readonly name: boolean;
  readonly reversed: boolean;
}

const messageSpec: fc.Arbitrary<MessageSpec> = fc.record({
  role: fc.constantFrom('user', 'assistant'),
  content: fc.constantFrom('a', 'b', 'n1', 'nf', 'nt'),
  reasoning: fc.constantFrom('absent', 'null', 'empty', 'r'),
  tools: fc.constantFrom('absent', 'null', 'empty', 'c0', 'c0-index', 'c1'),
  name: fc.boolean(),
  reversed: fc.boolean(),
});

/** Re-spellings the strict matcher ignores, then changes it sees. */
const IGNORED: ReadonlyArray<(m: MessageSpec) => MessageSpec> = [
  (m) => ({ ...m, reversed: !m.reversed }),
  (m) => ({ ...m, name: !m.name }),
  (m) => ({ ...m, reasoning: m.reasoning === 'r' ? 'r' : m.reasoning === 'null' ? 'empty' : 'null' }),
  (m) => ({ ...m, tools: m.tools === 'c0' ? 'c0-index' : m.tools === 'c0-index' ? 'c0' : m.tools }),
  (m) => ({ ...m, tools: m.tools === 'absent' ? 'empty' : m.tools === 'empty' ? 'null' : m.tools }),
  (m) => ({ ...m, content: m.content === 'n1' ? 'nf' : m.content === 'nf' ? 'nt' : m.content }),
];
const SEEN: ReadonlyArray<(m: MessageSpec) => MessageSpec> = [
  (m) => ({ ...m, content: m.content === 'a' ? 'b' : 'a' }),
  (m) => ({ ...m, role: m.role === 'user' ? 'assistant' : 'user' }),
  (m) => ({ ...m, reasoning: m.reasoning === 'r' ? 'absent' : 'r' }),
  (m) => ({ ...m, tools: m.tools === 'c1' ? 'c0' : 'c1' }),
  (m) => ({ ...m, tools: m.tools.startsWith('c') ? 'empty' : 'c0' }),
];

const CALL = '{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}';

function messageJson(m: MessageSpec): string {
  const fields: string[] = [`"role": "${m.role}"`];
  const content = { a: '"a"', b: '"b"', n1: '[{"n": 1}]', nf: '[{"n": 1.0}]', nt: '[{"n": true}]' }[
    m.content
  ];
  fields.push(`"content": ${content}`);
  const reasoning = { absent: null, null: 'null', empty: '""', r: '"r"' }[m.reasoning];
  if (reasoning !== null) fields.push(`"reasoning_content": ${reasoning}`);
  const tools = {
    absent: null,
    null: 'null',
    empty: '[]',
    c0: `[${CALL}]`,
    'c0-index': `[{"index": 0, ${CALL.slice(1)}]`,
    c1: `[${CALL.replace('"c"', '"d"')}]`,
  }[m.tools];
  if (tools !== null) fields.push(`"tool_calls": ${tools}`);
  if (m.name) fields.push('"name": "n"');
  if (m.reversed) fields.reverse();
  return `{${fields.join(', ')}}`;
}

export interface ForestCase {
  /** Nodes in commit order: the parent's index (-1 for a root) and the delta messages as JSON text. */
  readonly nodes: ReadonlyArray<{ readonly parent: number; readonly delta: readonly string[] }>;
  /** Requests as lists of JSON message texts. */
  readonly requests: ReadonlyArray<readonly string[]>;
}

interface NodeSpec {
  readonly parent: number;
  readonly delta: readonly MessageSpec[];
}

function pathSpecs(nodes: readonly NodeSpec[], index: number): MessageSpec[] {
  const out: MessageSpec[][] = [];
  for (let k = index; k >= 0; k = nodes[k]!.parent) out.push([...nodes[k]!.delta]);
  return out.reverse().flat();
}

const edit = fc.oneof(
  { weight: 6, arbitrary: fc.constant(null) },
  { weight: 3, arbitrary: fc.nat(IGNORED.length - 1).map((k) => IGNORED[k]!) },
  { weight: 1, arbitrary: fc.nat(SEEN.length - 1).map((k) => SEEN[k]!) },
);

export const forestCase: fc.Arbitrary<ForestCase> = fc
  .array(
    fc.record({
      parent: fc.nat(),
      root: fc.boolean(),
      delta: fc.array(messageSpec, { minLength: 1, maxLength: 3 }),
    }),
    { minLength: 1, maxLength: 14 },
  )
  .chain((raw) => {
    // Most nodes extend an earlier node (a re-sent history grows a chain); some start a new root.
    const nodes: NodeSpec[] = raw.map((n, i) => ({
      parent: i === 0 || (n.root && i % 4 === 0) ? -1 : i - 1 - (n.parent % Math.min(i, 3)),
      delta: n.delta,
    }));
    const request = fc
      .record({
        node: fc.nat(nodes.length - 1),
        cut: fc.nat(3),
        edits: fc.array(edit, { maxLength: 24 }),
        extra: fc.array(messageSpec, { maxLength: 2 }),
      })
      .map(({ node, cut, edits, extra }) => {
        const path = pathSpecs(nodes, node);
        const kept = path.slice(0, Math.max(0, path.length - (cut === 3 ? 1 : 0)));
        return [...kept.map((m, i) => (edits[i] ?? ((x: MessageSpec) => x))(m)), ...extra].map(messageJson);
      });
    return fc.record({
      nodes: fc.constant(nodes.map((n) => ({ parent: n.parent, delta: n.delta.map(messageJson) }))),
      requests: fc.array(request, { minLength: 1, maxLength: 6 }),
    });
  });

/** Parses a message as the chat route does. */
export function parseMessage(text: string): unknown {
  return pythonJsonLoads(text, { keepFloats: true });
}

/** The case's tree, built through `createNode` as commits build it (searched through `index` when given). */
export function buildForest(
  forest: ForestCase,
  index: AttachIndex | null = null,
): { tree: SessionTree; nodes: TrajectoryNode[] } {
  const tree = new SessionTree(undefined, index);
  const nodes: TrajectoryNode[] = [];
  for (const spec of forest.nodes) {
    const parent = spec.parent === -1 ? null : nodes[spec.parent]!;
    nodes.push(
      tree.createNode({
        parent,
        deltaMessages: spec.delta.map(parseMessage),
        tokenIds: [tree.size],
        completionSpan: [0, 1],
        committedAt: tree.size,
        responseId: `r${tree.size}`,
        record: {} as SessionRecord,
        finishReason: 'stop',
      }),
    );
  }
  return { tree, nodes };
}
