// profiles: in the config — what loads, and each mistake refused at load with words that say the fix;
// plus the Profile's own translation rules (globs, renames, describe), which the edge relies on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { Profile } from '../../src/profiles/profile.js';
import { BASE, configError } from '../config-problems.js';

const servers = { github: { command: 'node' }, fs: { command: 'node' } };
const load = (profiles: unknown, rest: Record<string, unknown> = {}) =>
  parseConfig({ servers, profiles, ...rest }, 'test.yaml', BASE, {});

function problems(profiles: unknown, rest: Record<string, unknown> = {}): string[] {
  return configError(() => load(profiles, rest)).problems;
}

test('a profile loads with its defaults; none configured is an empty map', () => {
  assert.deepEqual(parseConfig({ servers }, 'test.yaml', BASE, {}).profiles, {});
  const config = load({
    coding: {
      tools: ['github__*', 'fs__read_*'],
      rename: { fs__read_text_file: 'read_file' },
      describe: { read_file: 'Read a file.' },
    },
  });
  assert.deepEqual(config.profiles.coding, {
    tools: ['github__*', 'fs__read_*'],
    rename: { fs__read_text_file: 'read_file' },
    describe: { read_file: 'Read a file.' },
    search: false,
  });
  assert.equal(load({ s: { search: 'true' } }).profiles.s!.search, true);
});

test('two names renamed onto one public name: refused, naming both and the fix', () => {
  const found = problems({ coding: { rename: { fs__read_text_file: 'read', github__get_file: 'read' } } });
  assert.deepEqual(found, [
    'profiles.coding.rename.github__get_file: fs__read_text_file is renamed to read already; give each its own ' +
      'public name',
  ]);
});

test('a rename onto a name the profile already shows: refused, saying which globs to change', () => {
  const found = problems({ coding: { tools: ['github__*'], rename: { fs__read_text_file: 'github__read' } } });
  assert.equal(found.length, 1);
  assert.equal(
    found[0],
    'profiles.coding.rename.fs__read_text_file: github__read is a name this profile already shows ' +
      '(profiles.coding.tools and profiles.coding.prompts (left out: every one) match it); choose a public name ' +
      'those globs do not match, or narrow them',
  );
  // Not shown when no glob matches it, or when that name is itself renamed away (a swap).
  load({ coding: { tools: ['fs__*'], prompts: [], rename: { fs__read_text_file: 'github__read' } } });
  load({ coding: { tools: ['github__*'], rename: { fs__read_text_file: 'github__read', github__read: 'gh_read' } } });
  // A plain name no server's prefix begins can never be an /mcp name, so every tool left out is no clash.
  load({ coding: { rename: { fs__read_text_file: 'read_file' } } });
});

test('a public name over 64 characters, or with characters hosts refuse: refused with the fix', () => {
  const long = 'x'.repeat(65);
  assert.deepEqual(problems({ p: { rename: { fs__a: long } } }), [
    `profiles.p.rename.fs__a: the public name "${long}" is 65 characters; hosts accept at most 64, so shorten it`,
  ]);
  assert.deepEqual(problems({ p: { rename: { fs__a: 'read file' } } }), [
    'profiles.p.rename.fs__a: the public name "read file" has characters hosts refuse in a tool name; use only A-Z ' +
      'a-z 0-9 _ -',
  ]);
  assert.deepEqual(problems({ p: { rename: { fs__a: '' } } }), [
    'profiles.p.rename.fs__a: the public name is empty; give 1-64 characters of A-Z a-z 0-9 _ -',
  ]);
  load({ p: { rename: { fs__a: 'x'.repeat(64) } } });
});

test('a describe for a name the profile does not show (yet) is fine', () => {
  load({ p: { tools: ['github__*'], describe: { nowhere__tool: 'Appears later, perhaps.' } } });
});

test('search mode keeps its own two names', () => {
  assert.deepEqual(problems({ p: { search: true, rename: { fs__find: 'search_tools' } } }), [
    "profiles.p.rename.fs__find: search_tools is one of search mode's own tools on this profile; choose another " +
      'public name',
  ]);
  load({ p: { rename: { fs__find: 'search_tools' } } });
});

test(
  'a bad glob, an unknown key and a bad profile name are each reported, ' + 'with the other profiles still checked',
  () => {
    const found = problems({
      broken: { tools: ['github__{a,b'] },
      typo: { tool: ['x'] },
      'bad name': {},
      ok: { rename: { fs__a: 'x', fs__b: 'x' } },
    });
    assert.ok(
      found.includes(
        'profiles.broken.tools: "github__{a,b" has a { without its }; correct the glob (globs are written as in ' +
          'policies)',
      ),
      found.join('\n'),
    );
    assert.ok(
      found.some((p) => p.startsWith("profiles.typo: unknown key 'tool'")),
      found.join('\n'),
    );
    assert.ok(
      found.some((p) => p.includes('profile names are 1-32 characters')),
      found.join('\n'),
    );
    assert.ok(
      found.includes('profiles.ok.rename.fs__b: fs__a is renamed to x already; give each its own public name'),
      found.join('\n'),
    );
  },
);

test('Profile: globs choose, renames translate both ways, the original name is hidden, describe replaces', () => {
  const profile = new Profile('coding', {
    tools: ['github__*', 'fs__read_*'],
    rename: { fs__read_text_file: 'read_file', other__x: 'x' },
    describe: { read_file: 'Read a UTF-8 file.' },
  });
  assert.equal(profile.inbound('tools', 'read_file'), 'fs__read_text_file');
  assert.equal(profile.inbound('tools', 'fs__read_text_file'), undefined, 'renamed away');
  assert.equal(profile.inbound('tools', 'github__issue'), 'github__issue');
  assert.equal(profile.inbound('tools', 'fs__write_file'), undefined, 'no glob matches');
  assert.equal(profile.inbound('tools', 'x'), undefined, 'a rename never shows a tool its globs leave out');
  assert.equal(profile.outbound('tools', 'other__x'), undefined);
  assert.equal(
    profile.inbound('prompts', 'x'),
    'other__x',
    'prompts are left out, so every prompt shows: the rename applies',
  );
  assert.equal(profile.outbound('tools', 'fs__read_text_file'), 'read_file');
  const items = [
    { name: 'fs__read_text_file', description: 'upstream words', inputSchema: {} },
    { name: 'fs__write_file', inputSchema: {} },
    { name: 'github__issue', inputSchema: {} },
  ];
  const shaped = profile.shapeItems('tools/list', items);
  assert.deepEqual(shaped, [{ name: 'read_file', description: 'Read a UTF-8 file.', inputSchema: {} }, items[2]]);
  assert.equal(items[0]!.name, 'fs__read_text_file', 'the page itself is never rewritten');
  assert.equal(profile.shapeItems('tools/list', items), shaped, 'one page is shaped once');
  const all = new Profile('all', {});
  assert.equal(all.shapeItems('tools/list', items), items, 'nothing hidden: the page as it was');
  assert.equal(new Profile('none', { tools: [] }).shapeItems('tools/list', items).length, 0);
  const docs = new Profile('docs', { resources: ['docs://**'] });
  assert.deepEqual(docs.shapeItems('resources/list', [{ uri: 'docs://a/b' }, { uri: 'file:///etc/passwd' }]), [
    { uri: 'docs://a/b' },
  ]);
});

test('a rename meant for a prompt does not expose the tool of the same name the tools globs leave out', () => {
  const profile = new Profile('p', { tools: ['gh__*'], prompts: ['fs__*'], rename: { fs__summarize: 'summarize' } });
  assert.equal(profile.inbound('prompts', 'summarize'), 'fs__summarize');
  assert.equal(profile.inbound('tools', 'summarize'), undefined);
  assert.equal(profile.inbound('tools', 'fs__summarize'), undefined);
  const tools = [
    { name: 'fs__summarize', inputSchema: {} },
    { name: 'gh__issue', inputSchema: {} },
  ];
  assert.deepEqual(
    profile.shapeItems('tools/list', tools).map((t) => (t as { name: string }).name),
    ['gh__issue'],
  );
  assert.deepEqual(profile.shapeItems('prompts/list', [{ name: 'fs__summarize' }]), [{ name: 'summarize' }]);
});

test('a rename of a name no tools or prompts glob matches: refused, saying where to add it', () => {
  const found = problems({ p: { tools: ['gh__*'], prompts: ['gh__*'], rename: { fs__read: 'read' } } });
  assert.deepEqual(found, [
    'profiles.p.rename.fs__read: neither profiles.p.tools nor profiles.p.prompts matches fs__read, so the rename ' +
      'would show nothing; add fs__read (or a glob matching it) to the one it is',
  ]);
});
