// The floor plan lives in one place, .dependency-cruiser.cjs, and `npm run lint` holds the code to it
// (docs/design.md, "The house"; docs/development.md says how to read a failure). This file holds the rules
// themselves to account: a scratch tree with the arrows the plan allows and one of each kind it forbids (an
// arrow up, type-only, dynamic and re-exported ones included; a circle; two folders importing each other;
// a folder on no floor; an import past a feature folder's face, index.ts, or of its own face from inside; test
// code or a devDependency in production code), cruised with the same configuration, must fail exactly the
// forbidden ones. A rule dropped or loosened fails here, whatever the code of the day happens to import.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult, type IFlattenedRuleSet } from 'dependency-cruiser';
import { tempDir } from '../temp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const config = createRequire(import.meta.url)(path.join(ROOT, '.dependency-cruiser.cjs')) as {
  forbidden: NonNullable<IFlattenedRuleSet['forbidden']>;
  options: Record<string, unknown>;
};

/** The files of the scratch tree: path → text. */
const ALLOWED: Record<string, string> = {
  'protocol/jsonrpc.ts': 'export type Id = string;\n',
  'infra/log.ts': "import type { Id } from '../protocol/jsonrpc.js';\nexport const log = (id: Id) => id;\n",
  'bridge/upstream.ts': "import { log } from '../infra/log.js';\nexport const up = log;\n",
  'policy/guard.ts': "import type { Id } from '../protocol/jsonrpc.js';\nexport const guard = (id: Id) => id;\n",
  'src/credentials/source.ts': "import { up } from '../../bridge/upstream.js';\nexport const source = up;\n",
  // A folder's subfolders are its own: imported past no face.
  'src/credentials/oauth/client.ts': "import { source } from '../source.js';\nexport const client = source;\n",
  'src/credentials/index.ts': "export { client } from './oauth/client.js';\nexport { source } from './source.js';\n",
  'src/aggregate/router.ts': "import { guard } from '../../policy/guard.js';\nexport const route = guard;\n",
  'src/aggregate/index.ts': "export { route } from './router.js';\n",
  'src/layers/stack.ts': [
    "import type { source } from '../credentials/index.js';",
    "import { route } from '../aggregate/index.js';",
    "import { held } from '../mrtr/index.js';",
    'export const stack = (s: typeof source) => [s, route, held];',
  ].join('\n'),
  'src/layers/index.ts': "export { stack } from './stack.js';\n",
  'src/mrtr/held.ts': "import { up } from '../../bridge/upstream.js';\nexport const held = up;\n",
  'src/mrtr/index.ts': "export { held } from './held.js';\n",
  'src/tasks/step.ts': "import { held } from '../mrtr/index.js';\nexport const step = held;\n",
  'src/tasks/index.ts': "export { step } from './step.js';\n",
  'src/edge/call.ts': [
    "import { step } from '../tasks/index.js';",
    "const layers = await import('../layers/index.js');",
    'export const call = [step, layers];',
  ].join('\n'),
  'src/edge/index.ts': "export { call } from './call.js';\n",
  'src/config/config.ts': "import { call } from '../edge/index.js';\nexport const config = call;\n",
  'src/config/index.ts': "export { config } from './config.js';\n",
  'src/gateway/build.ts': "import { config } from '../config/index.js';\nexport const build = config;\n",
  'src/gateway/index.ts': "export { build } from './build.js';\n",
  'src/gateway.ts': "import { build } from './gateway/index.js';\nexport const gateway = build;\n",
  'src/cli.ts':
    "import { gateway } from './gateway.js';\nimport { config } from './config/index.js';\n[gateway, config];\n",
};

/** One of each forbidden kind, with what the check must say of it. */
const FORBIDDEN: { files: Record<string, string>; says: string[] }[] = [
  {
    files: { 'src/tasks/up.ts': "import type { call } from '../edge/index.js';\nexport type C = typeof call;\n" },
    // The edge imports the tasks, so an arrow back is a circle of the two folders too.
    says: [
      'no-upward-import-from-tasks: src/tasks/up.ts → src/edge/index.ts',
      'no-folder-circle: src/edge → src/tasks',
      'no-folder-circle: src/tasks → src/edge',
    ],
  },
  {
    files: { 'src/credentials/up.ts': "export const c = await import('../config/index.js');\n" },
    says: [
      'no-upward-import-from-credentials: src/credentials/up.ts → src/config/index.ts',
      'no-folder-circle: src/config → src/edge',
      'no-folder-circle: src/credentials → src/config',
      'no-folder-circle: src/edge → src/layers',
      'no-folder-circle: src/layers → src/credentials',
    ],
  },
  {
    files: { 'src/credentials/stack.ts': "export { stack } from '../layers/index.js';\n" },
    says: [
      'no-upward-import-from-credentials: src/credentials/stack.ts → src/layers/index.ts',
      'no-folder-circle: src/credentials → src/layers',
      'no-folder-circle: src/layers → src/credentials',
    ],
  },
  {
    files: { 'protocol/up.ts': "export { log } from '../infra/log.js';\n" },
    says: ['no-upward-import-from-protocol: protocol/up.ts → infra/log.ts'],
  },
  {
    files: { 'infra/up.ts': "import { up } from '../bridge/upstream.js';\nexport const x = up;\n" },
    says: ['no-upward-import-from-infra: infra/up.ts → bridge/upstream.ts'],
  },
  {
    files: { 'bridge/src.ts': "import { held } from '../src/mrtr/index.js';\nexport const x = held;\n" },
    says: ['no-upward-import-from-pillars: bridge/src.ts → src/mrtr/index.ts', 'no-folder-circle: src/mrtr → bridge'],
  },
  {
    files: { 'policy/cache.ts': "import { up } from '../bridge/upstream.js';\nexport const x = up;\n" },
    says: ['pillars-import-no-other-pillar: policy/cache.ts → bridge/upstream.ts'],
  },
  {
    files: { 'src/edge/wiring.ts': "import { build } from '../gateway/index.js';\nexport const x = build;\n" },
    says: [
      'no-upward-import-from-edge: src/edge/wiring.ts → src/gateway/index.ts',
      'only-src-gateway-ts-imports-the-wiring: src/edge/wiring.ts → src/gateway/index.ts',
      'no-folder-circle: src/config → src/edge',
      'no-folder-circle: src/edge → src/gateway',
      'no-folder-circle: src/gateway → src/config',
    ],
  },
  {
    files: { 'src/config/wiring.ts': "import { build } from '../gateway/index.js';\nexport const x = build;\n" },
    says: [
      'only-src-gateway-ts-imports-the-wiring: src/config/wiring.ts → src/gateway/index.ts',
      'no-folder-circle: src/config → src/gateway',
      'no-folder-circle: src/gateway → src/config',
    ],
  },
  {
    files: { 'src/aggregate/wrap.ts': "import { held } from '../mrtr/index.js';\nexport const x = held;\n" },
    // The whiteboard's "routing knows no wrappers": the layers' floor stands above the router's.
    says: ['no-upward-import-from-router: src/aggregate/wrap.ts → src/mrtr/index.ts'],
  },
  {
    files: {
      'src/edge/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'src/edge/b.ts': "import type { a } from './a.js';\nexport const b = (x?: typeof a) => x;\n",
    },
    says: ['no-circular: src/edge/a.ts → src/edge/b.ts'],
  },
  {
    files: { 'src/mrtr/back.ts': "import { stack } from '../layers/index.js';\nexport const x = stack;\n" },
    says: ['no-folder-circle: src/layers → src/mrtr', 'no-folder-circle: src/mrtr → src/layers'],
  },
  {
    files: { 'src/newroom/x.ts': "import type { Id } from '../../protocol/jsonrpc.js';\nexport type X = Id;\n" },
    says: ['unplaced-module: src/newroom/x.ts → protocol/jsonrpc.ts'],
  },
  {
    files: {
      'test/helper.ts': 'export const helper = 1;\n',
      'src/edge/helped.ts': "import { helper } from '../../test/helper.js';\nexport const x = helper;\n",
    },
    says: ['production-imports-no-test-code: src/edge/helped.ts → test/helper.ts'],
  },
  {
    files: { 'src/edge/dev.ts': "import fc from 'fast-check';\nexport const x = fc;\n" },
    says: ['production-imports-no-dev-dependency: src/edge/dev.ts → node_modules/fast-check'],
  },
  {
    files: { 'src/layers/past.ts': "import { held } from '../mrtr/held.js';\nexport const x = held;\n" },
    says: ['only-through-a-folders-face: src/layers/past.ts → src/mrtr/held.ts'],
  },
  {
    files: { 'src/edge/later.ts': "export const later = () => import('../layers/stack.js');\n" },
    says: ['only-through-a-folders-face: src/edge/later.ts → src/layers/stack.ts'],
  },
  {
    files: {
      'src/upstream-factory.ts':
        "import type { source } from './credentials/oauth/client.js';\nexport type S = typeof source;\n",
    },
    // A module in no feature folder (here src/'s root) goes through the face too.
    says: ['only-through-a-folders-face: src/upstream-factory.ts → src/credentials/oauth/client.ts'],
  },
  {
    files: {
      'policy/guardrails/rules.ts': "import { guard } from '../guard.js';\nexport const rules = guard;\n",
      'policy/guardrails/index.ts': "export { rules } from './rules.js';\n",
      'policy/security.ts': "import { rules } from './guardrails/rules.js';\nexport const security = rules;\n",
    },
    // A seam's module (policy/'s root) and a feature folder inside the same pillar.
    says: ['only-through-a-folders-face: policy/security.ts → policy/guardrails/rules.ts'],
  },
  {
    files: { 'src/mrtr/self.ts': "import { held } from './index.js';\nexport const x = held;\n" },
    says: ['no-import-of-its-own-face: src/mrtr/self.ts → src/mrtr/index.ts'],
  },
  {
    files: { 'src/edge/lonely.ts': 'export const lonely = 1;\n' },
    says: ['no-orphans: src/edge/lonely.ts → src/edge/lonely.ts'],
  },
];

/** The scratch tree with `files` laid out, cruised as `npm run lint` cruises the repository. */
async function violations(files: Record<string, string>): Promise<string[]> {
  const dir = tempDir('layering-');
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ type: 'module', devDependencies: { 'fast-check': '*' } }),
  );
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const { output } = await cruise(
    ['src', 'bridge', 'policy', 'cache', 'protocol', 'infra'].filter((top) =>
      Object.keys(files).some((f) => f.startsWith(`${top}/`)),
    ),
    { ...config.options, baseDir: dir, validate: true, ruleSet: { forbidden: config.forbidden } },
  );
  const result = output as ICruiseResult;
  return result.summary.violations
    .map((v) => `${v.rule.name}: ${v.from} → ${v.to.replace(/^.*node_modules\/([^/]+).*$/, 'node_modules/$1')}`)
    .sort();
}

test('the arrows the plan allows pass: each floor importing those below, type-only and dynamic ones too', async () => {
  assert.deepEqual(await violations(ALLOWED), []);
});

for (const { files, says } of FORBIDDEN) {
  const file = says[0]!.split(': ')[1]!.split(' → ')[0];
  const rules = [...new Set(says.map((line) => line.split(':')[0]))];
  test(`the check fails ${file}: ${rules.join(', ')}`, async () => {
    assert.deepEqual(await violations({ ...ALLOWED, ...files }), [...says].sort());
  });
}

test('every rule fails the lint: none is a mere warning, and no rule allows what another forbids', () => {
  for (const rule of config.forbidden) assert.equal(rule.severity, 'error', `${rule.name} must be an error`);
  assert.deepEqual(Object.keys(config).sort(), ['forbidden', 'options']);
});
