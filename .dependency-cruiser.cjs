/**
 * The layering rule (docs/architecture.md "Layers"), checked by `npm run lint`. A folder may import
 * its own layer and the layers below it, never above: common < contracts < recipe, fakes/tokenizer <
 * fakes/{policy,session,harbor} (not each other) < replay < gpu < cli < bin. Tests, `testing/` helpers and
 * scripts sit outside the product and may import any of it; the product never imports them.
 */
const SUPPORT = '(\\.test\\.ts$|/testing/|^test/|^scripts/)';

/** `from` may import only what `allowed` matches (plus npm packages and Node built-ins). */
function only(name, from, allowed) {
  return {
    name,
    severity: 'error',
    comment: `${from} may import only ${allowed}`,
    from: { path: from, pathNot: SUPPORT },
    to: { pathNot: [`^(${allowed})`, '^node_modules/'], dependencyTypesNot: ['core'] },
  };
}

module.exports = {
  forbidden: [
    only('common-is-the-base', '^common/', 'common/'),
    // The bridge's TypeScript is one module of paths; the Python beside it is run, never imported.
    only('bridge-paths-stand-alone', '^miles-bridge/', 'miles-bridge/entry-points'),
    only('contracts-over-common', '^contracts/', 'common/|contracts/'),
    only('recipe-over-contracts', '^recipe/', 'common/|contracts/|miles-bridge/entry-points|recipe/'),
    only('tokenizer-over-contracts', '^fakes/tokenizer/', 'common/|contracts/|fakes/tokenizer/'),
    only('policy-is-its-own-fake', '^fakes/policy/', 'common/|contracts/|fakes/tokenizer/|fakes/policy/'),
    only('session-is-its-own-fake', '^fakes/session/', 'common/|contracts/|fakes/tokenizer/|fakes/session/'),
    only('harbor-is-its-own-fake', '^fakes/harbor/', 'common/|contracts/|fakes/tokenizer/|fakes/harbor/'),
    only('replay-model-is-plain-data', '^replay/model/', 'common/|contracts/|replay/model/'),
    only('replay-grpo-over-model', '^replay/grpo/', 'common/|contracts/|replay/model/|replay/grpo/'),
    only('replay-metrics-over-model', '^replay/metrics/', 'common/|contracts/|replay/model/|replay/metrics/'),
    only(
      'replay-step-below-checks',
      '^replay/step/',
      'common/|contracts/|replay/model/|replay/grpo/|replay/metrics/|replay/step/',
    ),
    only(
      'replay-below-gpu-and-cli',
      '^replay/',
      'common/|contracts/|miles-bridge/entry-points|recipe/|fakes/|replay/',
    ),
    only(
      'gpu-below-cli',
      '^gpu/',
      'common/|contracts/|miles-bridge/entry-points|recipe/|fakes/|replay/|gpu/',
    ),
    only(
      'cli-below-bin',
      '^cli/',
      'common/|contracts/|miles-bridge/entry-points|recipe/|fakes/|replay/|gpu/|cli/',
    ),
    {
      // Miles' rules and the fakes' speed machinery apart (docs/session-server.md "What it implements"):
      // a rule module declares the interface it works through; only the composition module plugs the
      // fast implementation in. fast/ names the interfaces it implements (type-only imports; see
      // speed-imports-no-rules) and imports no rule module's code.
      name: 'speed-only-through-composition',
      severity: 'error',
      comment: 'fakes/{session,policy}/fast/ is imported only by fast/ itself and the compose.ts beside it',
      from: { pathNot: [SUPPORT, '^fakes/(session|policy)/(fast/|compose\\.ts$)'] },
      to: { path: '^fakes/(session|policy)/fast/' },
    },
    {
      // The other direction: speed code gets Miles' rules it reuses through the composition (compose.ts
      // hands them in: the strict matcher's keys, the merge rules, the plain leaf fields) or from neutral
      // modules (fakes/session/values/, common/), never by importing a rule module. A type-only import
      // names the interface a rule module declares and fast/ implements; it is erased and stays allowed.
      name: 'speed-imports-no-rules',
      severity: 'error',
      comment: 'fakes/{session,policy}/fast/ imports no rule module (values only from values/ and common/)',
      from: { path: '^fakes/(session|policy)/fast/', pathNot: SUPPORT },
      to: {
        path: '^fakes/(session|policy)/',
        pathNot: '^fakes/(session|policy)/(fast|values)/',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'product-never-imports-support',
      severity: 'error',
      from: { pathNot: SUPPORT },
      to: { path: '(^test/|^scripts/|/testing/)' },
    },
    {
      // A type-only back edge (a sub-command naming its dispatcher's interface) is not a runtime cycle.
      name: 'no-cycles',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    // TypeScript 7 has no compiler API; swc parses the sources, type-only imports included.
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|\\.stryker-tmp[^/]*|reports)/' },
  },
};
