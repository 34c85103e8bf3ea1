// The floor plan, held against the code's own imports by `npm run lint` (dependency-cruiser: it reads every
// import, re-export and dynamic import() of the TypeScript as written). docs/design.md, "The house", draws it;
// docs/development.md says how to read a failure. There is no exceptions list: an import the plan forbids is
// moved to the module that owns what it needs, never allowed here one by one.
//
// Type-only imports count like any other: a type still ties one part to another's words (tsc reads both, a
// change there breaks here), and the floors are about who knows whom, not about what is left at run time.

/** Top to bottom: a floor may import its own and those below it, never one above. */
const FLOORS = [
  {
    floor: 'wiring',
    why: 'the command line, the config and the wiring that builds everything below and hands each part its settings',
    paths: ['^src/(cli|gateway|upstream-factory|child-env)\\.ts$', '^src/gateway/', '^src/config/'],
  },
  {
    floor: 'edge',
    why: 'the request path; handed what it reads (narrow types), it never reaches back into the wiring or the config',
    paths: ['^src/edge/'],
  },
  {
    floor: 'tasks',
    why: 'the Tasks steps: the edge asks them and they never call back (a TaskCall, which McpCall satisfies)',
    paths: ['^src/tasks/'],
  },
  {
    floor: 'legacy-client',
    why: "2025 clients: the edge's adapter for sessions, above the listen streams it relays",
    paths: ['^src/legacy-client/'],
  },
  {
    floor: 'layers',
    why: 'what wraps an upstream and what it tells (the stack, MRTR, notify, telemetry, guardrails); knows no HTTP',
    paths: ['^src/layers/', '^src/mrtr/', '^src/notify/', '^src/telemetry/', '^src/guardrails/'],
  },
  {
    floor: 'router',
    why: '/mcp (names, merged lists), its views and search, and the ops pages: routing knows no wrappers',
    paths: ['^src/aggregate/', '^src/profiles/', '^src/search/', '^src/ops/'],
  },
  {
    floor: 'credentials',
    why: "each caller's own upstream credential: asked by the layers, it knows no stack, edge or config",
    paths: ['^src/credentials/'],
  },
  {
    floor: 'pillars',
    why: 'upstreams, policy and the cache: they import only the ground floor, never src/, never each other',
    paths: ['^bridge/', '^policy/', '^cache/'],
  },
  { floor: 'infra', why: 'shared infrastructure: imports only the vocabulary', paths: ['^infra/'] },
  { floor: 'protocol', why: 'the shared vocabulary: imports nothing of ours', paths: ['^protocol/'] },
];

/** What the gateway ships (package.json "files"): production code, held to every rule below. */
const PRODUCTION = '^(src|bridge|policy|cache|protocol|infra)/';

/**
 * The feature folders: each folder of src/ and of bridge/, and policy/guardrails/, with its subfolders. Each
 * has one face, its index.ts, which says what the folder offers; from outside the folder, only the face is
 * imported. The ground floor (protocol/, infra/) and the roots of bridge/, policy/ and cache/ are the seams
 * every part speaks through: each of their modules is imported on its own (docs/design.md, "The house").
 */
const FEATURE_FOLDER = '(?:src/[^/]+|bridge/[^/]+|policy/guardrails)';
/** Where an importing module stands: its feature folder ($1), or, for a module in none, the module itself. */
const IMPORTER = '^((?:src|bridge)/[^/]+|policy/guardrails|(?:policy|cache|protocol|infra)/[^/]+$)';

const anyOf = (paths) => paths.map((p) => `(?:${p})`).join('|');

const upward = FLOORS.slice(1).map((below, index) => ({
  name: `no-upward-import-from-${below.floor}`,
  comment:
    `${below.floor} imports a floor above it (${FLOORS.slice(0, index + 1)
      .map((above) => above.floor)
      .join(', ')}): move what it needs down to where it belongs, or take it as a narrow type of its own. ` +
    `${below.floor}: ${below.why}`,
  severity: 'error',
  from: { path: anyOf(below.paths) },
  to: { path: anyOf(FLOORS.slice(0, index + 1).flatMap((above) => above.paths)) },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'an import circle between modules: move what both need to the module that owns it',
      severity: 'error',
      from: { path: PRODUCTION },
      to: { circular: true },
    },
    {
      name: 'no-folder-circle',
      comment: 'two folders import each other (through any files): one of them must stand below the other',
      severity: 'error',
      scope: 'folder',
      from: { path: PRODUCTION },
      to: { circular: true },
    },
    ...upward,
    {
      name: 'pillars-import-no-other-pillar',
      comment: 'bridge/, policy/ and cache/ are independent seams: none imports another',
      severity: 'error',
      from: { path: '^(bridge|policy|cache)/' },
      to: { path: '^(bridge|policy|cache)/', pathNot: '^$1/' },
    },
    {
      name: 'only-through-a-folders-face',
      comment:
        "an import from outside a feature folder past its face: import the folder's index.ts, and if what you " +
        'need is not there, add it to that face (a part loaded only on demand as a loader, `() => import(…)`)',
      severity: 'error',
      from: { path: IMPORTER },
      to: { path: `^${FEATURE_FOLDER}/`, pathNot: ['^$1/', `^${FEATURE_FOLDER}/index\\.ts$`] },
    },
    {
      name: 'no-import-of-its-own-face',
      comment:
        "a module imports its own folder's face (index.ts), which imports it back: inside a folder, import the " +
        'module that holds what you need',
      severity: 'error',
      from: { path: `^(${FEATURE_FOLDER})/` },
      to: { path: '^$1/index\\.ts$' },
    },
    {
      name: 'only-src-gateway-ts-imports-the-wiring',
      comment: 'src/gateway/ is the top floor: only src/gateway.ts (which src/cli.ts starts) imports it',
      severity: 'error',
      from: { pathNot: '^src/(gateway/|gateway\\.ts$)' },
      to: { path: '^src/gateway/' },
    },
    {
      name: 'unplaced-module',
      comment: 'a file of production code on no floor: name its folder in FLOORS (.dependency-cruiser.cjs)',
      severity: 'error',
      from: { path: PRODUCTION, pathNot: anyOf(FLOORS.flatMap((f) => f.paths)) },
      to: {},
    },
    {
      name: 'production-imports-no-test-code',
      comment: 'production code imports nothing from test/, bench/ or scripts/',
      severity: 'error',
      from: { path: PRODUCTION },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'production-imports-no-dev-dependency',
      comment: 'a devDependency is not installed with the gateway: production code may not import it',
      severity: 'error',
      from: { path: PRODUCTION },
      to: { dependencyTypes: ['npm-dev'] },
    },
    {
      name: 'no-orphans',
      comment: 'a module nothing imports and that imports nothing: dead, or a scratch file left behind',
      severity: 'error',
      from: { orphan: true, path: PRODUCTION, pathNot: '\\.d\\.ts$' },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    // TypeScript 7 has no JavaScript API for dependency-cruiser's tsc parser; swc reads the source as written,
    // type-only imports included.
    parser: 'swc',
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
