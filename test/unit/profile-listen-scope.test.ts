// Which upstreams' list changes a listen stream on a profile may hear of: a glob may show something of an
// upstream when it may match a name beginning with the upstream's `<prefix><separator>`; resources only
// when the profile's resource globs are not `[]`; the search endpoint hears of every upstream.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mayMatchBeginning } from '../../policy/globs.js';
import { Profile, SEARCH_PROFILE, shownOf } from '../../src/profiles/profile.js';

describe('mayMatchBeginning: may a glob match some name beginning with a head', () => {
  const cases: [glob: string, head: string, may: boolean][] = [
    ['github__*', 'github__', true], // the head is the glob's literal start
    ['github__issues_*', 'github__', true], // the literal start goes past the head
    ['git*', 'github__', true], // the literal start stops short of the head
    ['*', 'github__', true],
    ['*__search', 'github__', true], // any server's `search`
    ['gitlab__*', 'github__', false],
    ['gh*', 'github__', false],
    ['github*', 'git__', false], // `git__` is not how any `github…` name begins
    ['github__create_issue', 'github__', true], // an exact name of the upstream
    ['github', 'github__', false], // an exact name shorter than the head is no name of it
    ['gitlab__create_issue', 'github__', false],
    ['{gitlab,github}__*', 'github__', true], // each alternative of a brace is a glob of its own
    ['{gitlab,jira}__*', 'github__', false],
    ['{git,gh}*', 'github__', true],
    ['?', 'gh__', false], // a name of one character cannot begin with four
    ['gh_?', 'gh__', true],
    ['gh?_x', 'gh__', true], // `gh__x`
    ['gh?x*', 'gh__', false], // read past its wildcard, the glob wants `x` where the head has `_`
    ['g?t*', 'github__', true],
    ['**', 'github__', true],
    ['', 'github__', false],
  ];
  for (const [glob, head, may] of cases) {
    test(`${JSON.stringify(glob)} and ${head}: ${may}`, () => assert.equal(mayMatchBeginning([glob], head), may));
  }

  test('globs left out mean every name; [] means none; a list, any of its globs', () => {
    assert.equal(mayMatchBeginning(undefined, 'a__'), true);
    assert.equal(mayMatchBeginning([], 'a__'), false);
    assert.equal(mayMatchBeginning(['b__*', 'c__x', 'a__y'], 'a__'), true);
    assert.equal(mayMatchBeginning(['b__*', 'c__x'], 'a__'), false);
  });

  test('the empty head (every name begins with it): any glob that matches anything', () => {
    assert.equal(mayMatchBeginning(['x'], ''), true);
    assert.equal(mayMatchBeginning(['x?y*'], ''), true);
  });
});

describe('shownOf: per kind, whether a profile may show anything of an upstream', () => {
  test('tools and prompts by their own globs; resources unless [] (URIs name no upstream)', () => {
    const setting = { tools: ['alpha__*'], prompts: ['beta__greet'] };
    assert.deepEqual(shownOf(setting, 'alpha__'), { tools: true, prompts: false, resources: true });
    assert.deepEqual(shownOf(setting, 'beta__'), { tools: false, prompts: true, resources: true });
    assert.deepEqual(shownOf({ ...setting, resources: [] }, 'alpha__'), {
      tools: true,
      prompts: false,
      resources: false,
    });
    assert.deepEqual(shownOf({ resources: ['file:///x/*'] }, 'gamma__'), {
      tools: true,
      prompts: true,
      resources: true,
    });
  });

  test('a rename brings in nothing its kind’s globs do not match (it only renames)', () => {
    assert.deepEqual(shownOf({ tools: [], prompts: [], rename: { beta__echo: 'say' } }, 'beta__'), {
      tools: false,
      prompts: false,
      resources: true,
    });
    assert.deepEqual(shownOf({ tools: ['alpha__*', 'beta__echo'], rename: { beta__echo: 'say' } }, 'beta__'), {
      tools: true,
      prompts: true,
      resources: true,
    });
  });

  test('a custom prefix and separator: the head is what names begin with on /mcp', () => {
    const profile = new Profile('p', { tools: ['gh-*'] });
    assert.equal(profile.shownOfHead('gh-').tools, true);
    assert.equal(profile.shownOfHead('github__').tools, false);
    assert.equal(profile.shownOfHead('gh__').tools, false);
  });

  test('a profile works each head out once', () => {
    const profile = new Profile('p', { tools: ['alpha__*'] });
    assert.equal(profile.shownOfHead('alpha__'), profile.shownOfHead('alpha__'));
  });

  test('the search endpoint shows every tool: it hears of every upstream', () => {
    assert.deepEqual(SEARCH_PROFILE.shownOfHead('anything__'), { tools: true, prompts: true, resources: true });
  });
});
