import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageTrie } from '../../fakes/session/compose.ts';
import { buildForest, forestCase, parseMessage } from '../../fakes/session/testing/near-miss-forest.ts';
import { milesGate } from './gate.ts';

// The fake's attach-point search, both the rule (fakes/session/tree.ts `milesAttachWalk`) and the
// server's index (fakes/session/fast/message-trie.ts: a trie over strict-matcher keys, with a shortcut
// that compares a re-sent message with the newest stored one), against Miles' own
// `SessionTree.find_attach_point` from MILES_ROOT (tree_trajectory.py and the strict matcher; pydantic
// for the record type, nothing else of the package).
const gate = await milesGate({});
const ready = gate.unmet.length === 0;
if (!ready && !gate.required)
  console.warn(
    `[skip] miles attach point: ${gate.unmet.join('; ')} (HARNESS_MILES_REQUIRED=1 fails instead)`,
  );

const MILES_ATTACH = `
import importlib, json, sys, types
root = sys.argv[1]
hub_name = 'miles.utils.chat_template_utils.message_matcher_hub'
for name, path in [('miles', None), ('miles.utils', None), ('miles.utils.chat_template_utils', None),
                   (hub_name, root + '/miles/utils/chat_template_utils/message_matcher_hub'),
                   ('miles.rollout', None), ('miles.rollout.session', root + '/miles/rollout/session'),
                   ('miles.rollout.session.v2', root + '/miles/rollout/session/v2')]:
    m = types.ModuleType(name); m.__path__ = [path] if path else []; sys.modules[name] = m
funcs = importlib.import_module(hub_name + '.funcs')
hub = sys.modules[hub_name]
hub.strict_message_matches = funcs.strict_message_matches
hub.SessionMessageMatcher = importlib.import_module(hub_name + '.utils').SessionMessageMatcher
tree_mod = importlib.import_module('miles.rollout.session.v2.tree_trajectory')
out = []
for case in json.load(sys.stdin):
    tree = tree_mod.SessionTree(); nodes = []
    for spec in case['nodes']:
        parent = None if spec['parent'] == -1 else nodes[spec['parent']]
        nodes.append(tree.create_node(parent, delta_messages=[json.loads(t) for t in spec['delta']],
            token_ids=[], completion_span=(0, 0), committed_at=0.0, response_id='', record=None, finish_reason='stop'))
    for request in case['requests']:
        found = tree.find_attach_point([json.loads(t) for t in request])
        out.append([None if found.node is None else found.node.seq, found.matched_messages])
print(json.dumps(out))
`;

describe.skipIf(!ready && !gate.required)('attach-point search against Miles', () => {
  it('finds the node and matched count find_attach_point finds, on trees of near-miss messages', () => {
    const cases = fc.sample(forestCase, { numRuns: 300, seed: 17 });
    const expected = JSON.parse(
      execFileSync(gate.python, ['-c', MILES_ATTACH, gate.milesRoot], {
        input: JSON.stringify(cases),
        encoding: 'utf8',
        maxBuffer: 1 << 26,
      }),
    ) as Array<[number | null, number]>;
    // The rule (tree.ts `milesAttachWalk`) and the server's index over it (fast/message-trie.ts).
    const actual = (index: () => ReturnType<typeof messageTrie> | null) =>
      cases.flatMap((forest) => {
        const { tree } = buildForest(forest, index());
        return forest.requests.map((texts) => {
          const found = tree.findAttachPoint(texts.map(parseMessage));
          return [found.node?.seq ?? null, found.matched];
        });
      });
    expect(actual(() => null)).toEqual(expected);
    expect(actual(() => messageTrie())).toEqual(expected);
    // Deep matches and misses both came up.
    expect(expected.filter(([, matched]) => matched >= 3).length).toBeGreaterThan(150);
    expect(expected.filter(([seq]) => seq === null).length).toBeGreaterThan(50);
  });
});
