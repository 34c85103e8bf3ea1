// Allow-list policies in isolation: PolicySet/Grant decisions (union of allows, deny wins, default deny,
// servers and globs, conditions, pins), the glob dialect, and PolicyGuard shaping lists and refusing calls
// with a fake GuardOptions in place of a running gateway. The PinStore and its file: pins.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PolicyError, PolicySet, type Grant } from '../../policy/allow-list.js';
import { anyOf, checkGlob } from '../../policy/globs.js';
import { PinStore } from '../../policy/pins.js';
import type { Principal } from '../../policy/principal.js';
import type { PolicySetting } from '../../policy/settings.js';
import { PolicyGuard, type GuardOptions } from './guard-harness.js';
import type { JsonRpcRequest, JsonRpcResponse, JsonRpcSuccess } from '../../protocol/jsonrpc.js';
import { silentLog } from '../../infra/log.js';

const SERVERS = new Set(['a', 'b', 'crm', 'docs']);

function policy(name: string, rest: Partial<PolicySetting> = {}): PolicySetting {
  return { name, principals: { ids: ['*'] }, allow: {}, deny: {}, when: [], pin: false, ...rest };
}

function who(id: string, ...groups: string[]): Principal {
  return { id, groups, scopes: [], via: 'api-key' };
}

function compile(...policies: PolicySetting[]): PolicySet {
  return PolicySet.compile(policies, SERVERS);
}

/** Grant of a principal that every given policy applies to. */
function grantOf(...policies: PolicySetting[]): Grant {
  return compile(...policies).grantFor(who('anyone'));
}

const allowed = (grant: Grant, kind: 'tools' | 'prompts' | 'resources', server: string | undefined, name: string) =>
  grant.allows(kind, server, name).allowed;

// ---- PolicySet and Grant -------------------------------------------------------------------------

describe('PolicySet and Grant', () => {
  test('a grant is the union of what its policies allow', () => {
    const set = compile(
      policy('echo', { principals: { groups: ['support'] }, allow: { tools: ['a__echo'] } }),
      policy('slow', { principals: { ids: ['alice'] }, allow: { tools: ['a__slow'] } }),
    );
    const both = set.grantFor(who('alice', 'support'));
    assert.equal(allowed(both, 'tools', 'a', 'a__echo'), true);
    assert.equal(allowed(both, 'tools', 'a', 'a__slow'), true);
    assert.equal(allowed(both, 'tools', 'a', 'a__crash'), false);
    assert.deepEqual(both.allows('tools', 'a', 'a__slow'), { allowed: true, rule: 'policy slow' });

    const supportOnly = set.grantFor(who('sam', 'support'));
    assert.equal(allowed(supportOnly, 'tools', 'a', 'a__echo'), true);
    assert.equal(allowed(supportOnly, 'tools', 'a', 'a__slow'), false);
  });

  test("a deny in any of a principal's policies wins over every allow", () => {
    const set = compile(
      policy('wide', { allow: { servers: ['a', 'b'], resources: ['**'] } }),
      policy('narrow', { principals: { groups: ['contractors'] }, deny: { tools: ['*__crash'] } }),
      policy('no-b', { principals: { ids: ['carol'] }, deny: { servers: ['b'] } }),
    );
    const contractor = set.grantFor(who('dan', 'contractors'));
    assert.deepEqual(contractor.allows('tools', 'a', 'a__crash'), { allowed: false, rule: 'deny in policy narrow' });
    assert.equal(allowed(contractor, 'tools', 'b', 'b__crash'), false);
    assert.equal(allowed(contractor, 'tools', 'a', 'a__echo'), true);
    // The deny names tools only: prompts and resources stay allowed.
    assert.equal(allowed(contractor, 'prompts', 'a', 'a__crash'), true);

    const employee = set.grantFor(who('eve'));
    assert.equal(allowed(employee, 'tools', 'a', 'a__crash'), true);

    // A deny naming servers alone takes everything on them, of every kind.
    const carol = set.grantFor(who('carol'));
    for (const kind of ['tools', 'prompts', 'resources'] as const) {
      assert.deepEqual(carol.allows(kind, 'b', 'b__x'), { allowed: false, rule: 'deny in policy no-b' });
      assert.equal(allowed(carol, kind, 'a', 'a__x'), true);
    }
    assert.equal(carol.reaches('b'), false);
    assert.equal(carol.reaches('a'), true);
  });

  test('a deny with servers and globs takes those globs on those servers only', () => {
    const grant = grantOf(
      policy('p', { allow: { servers: ['a', 'b'] }, deny: { servers: ['a'], resources: ['fixture://**'] } }),
    );
    assert.equal(allowed(grant, 'resources', 'a', 'fixture://hello'), false);
    assert.equal(allowed(grant, 'resources', 'b', 'fixture://hello'), true);
    assert.equal(allowed(grant, 'resources', 'a', 'other://hello'), true);
    // No tool globs in the deny: tools on a stay allowed, and a is still reached.
    assert.equal(allowed(grant, 'tools', 'a', 'a__echo'), true);
    assert.equal(grant.reaches('a'), true);
  });

  test('with policies configured, what no policy allows is denied', () => {
    const set = compile(
      policy('alice-only', { principals: { ids: ['alice'] }, allow: { servers: ['a'] } }),
      policy('empty'),
    );
    assert.equal(set.active, true);
    assert.equal(set.size, 2);
    const bob = set.grantFor(who('bob'));
    // bob gets "empty" (everyone) which allows nothing.
    for (const kind of ['tools', 'prompts', 'resources'] as const) {
      assert.deepEqual(bob.allows(kind, 'a', 'a__echo'), { allowed: false, rule: 'no policy allows it' });
      assert.equal(allowed(bob, kind, undefined, 'a__echo'), false);
    }
    for (const server of SERVERS) assert.equal(bob.reaches(server), false);
    const nobodyAtAll = compile(
      policy('alice-only', { principals: { ids: ['alice'] }, allow: { servers: ['a'] } }),
    ).grantFor(who('bob'));
    assert.equal(nobodyAtAll.key, '');
    assert.equal(allowed(nobodyAtAll, 'tools', 'a', 'a__echo'), false);

    const none = PolicySet.compile([], SERVERS);
    assert.equal(none.active, false);
    assert.equal(none.size, 0);
  });

  test('allow.servers without globs allows everything of that kind on those servers (and nowhere else)', () => {
    const grant = grantOf(policy('p', { allow: { servers: ['a', 'crm'] } }));
    for (const kind of ['tools', 'prompts', 'resources'] as const) {
      assert.equal(allowed(grant, kind, 'a', 'a__anything'), true);
      assert.equal(allowed(grant, kind, 'crm', 'whatever://x/y'), true);
      assert.equal(allowed(grant, kind, 'b', 'b__anything'), false);
      // An item whose server is not known cannot be allowed by a policy that lists servers.
      assert.equal(allowed(grant, kind, undefined, 'a__anything'), false);
    }
    // Globs for one kind narrow that kind only.
    const narrowed = grantOf(policy('p', { allow: { servers: ['a'], tools: ['a__echo'] } }));
    assert.equal(allowed(narrowed, 'tools', 'a', 'a__echo'), true);
    assert.equal(allowed(narrowed, 'tools', 'a', 'a__crash'), false);
    assert.equal(allowed(narrowed, 'prompts', 'a', 'a__greet'), true);
    assert.equal(allowed(narrowed, 'resources', 'a', 'fixture://hello'), true);
    assert.equal(allowed(narrowed, 'prompts', 'b', 'b__greet'), false);
  });

  test('globs without servers allow on any server, and where the server is unknown', () => {
    const grant = grantOf(policy('p', { allow: { tools: ['*__echo'], resources: ['docs://public/**'] } }));
    assert.equal(allowed(grant, 'tools', 'a', 'a__echo'), true);
    assert.equal(allowed(grant, 'tools', 'b', 'b__echo'), true);
    assert.equal(allowed(grant, 'tools', 'a', 'a__crash'), false);
    assert.equal(allowed(grant, 'resources', 'docs', 'docs://public/a/b'), true);
    assert.equal(allowed(grant, 'resources', undefined, 'docs://public/a'), true);
    assert.equal(allowed(grant, 'resources', 'docs', 'docs://private/a'), false);
    // No prompt globs and no servers: no prompt at all.
    assert.equal(allowed(grant, 'prompts', 'a', 'a__echo'), false);
  });

  test('servers and globs together allow those globs on those servers only', () => {
    const grant = grantOf(policy('p', { allow: { servers: ['a'], tools: ['*__echo'] } }));
    assert.equal(allowed(grant, 'tools', 'a', 'a__echo'), true);
    assert.equal(allowed(grant, 'tools', 'b', 'b__echo'), false);
    assert.equal(allowed(grant, 'tools', undefined, 'a__echo'), false);
  });

  test("one policy's servers do not lend themselves to another policy's globs", () => {
    const P1 = policy('P1', { principals: { groups: ['sales'] }, allow: { servers: ['crm'], tools: ['crm__*'] } });
    const P2 = policy('P2', { principals: { groups: ['writers'] }, allow: { servers: ['docs'], tools: ['*'] } });
    const set = compile(P1, P2);
    const both = set.grantFor(who('sue', 'sales', 'writers'));
    assert.deepEqual(both.allows('tools', 'crm', 'crm__delete'), { allowed: true, rule: 'policy P1' });
    assert.deepEqual(both.allows('tools', 'docs', 'docs__search'), { allowed: true, rule: 'policy P2' });
    // P2's '*' does not reach crm, P1's crm__* does not reach docs.
    assert.equal(allowed(both, 'tools', 'crm', 'other'), false);

    const writer = set.grantFor(who('wes', 'writers'));
    assert.equal(allowed(writer, 'tools', 'crm', 'crm__x'), false);
    assert.equal(allowed(writer, 'tools', 'crm', 'crm__delete'), false);
    assert.equal(allowed(writer, 'tools', 'docs', 'docs__search'), true);
    assert.equal(writer.reaches('crm'), false);
    assert.equal(writer.reaches('docs'), true);

    // A narrower P1: crm__delete is not reachable through P2's '*' either.
    const narrow = compile(
      policy('P1', { allow: { servers: ['crm'], tools: ['crm__read*'] } }),
      policy('P2', { allow: { servers: ['docs'], tools: ['*'] } }),
    ).grantFor(who('x'));
    assert.equal(allowed(narrow, 'tools', 'crm', 'crm__delete'), false);
    assert.equal(allowed(narrow, 'tools', 'crm', 'crm__read_all'), true);
  });

  test('reaches(): a server is reached when something on it could be allowed', () => {
    const listed = grantOf(policy('p', { allow: { servers: ['a'], tools: ['a__echo'] } }));
    assert.equal(listed.reaches('a'), true);
    assert.equal(listed.reaches('b'), false);
    // Name globs without servers reach the servers whose names (<server>__…) they could match.
    const globs = grantOf(policy('p', { allow: { prompts: ['a__*', 'cr*'] } }));
    assert.deepEqual(
      [...SERVERS].filter((server) => globs.reaches(server)),
      ['a', 'crm'],
    );
    assert.deepEqual(
      [...SERVERS].filter((server) => grantOf(policy('p', { allow: { tools: ['*'] } })).reaches(server)),
      [...SERVERS],
    );
    assert.deepEqual(
      [...SERVERS].filter((server) => grantOf(policy('p', { allow: { prompts: ['x'] } })).reaches(server)),
      [],
    );
    // Resource globs name no server: they could match on any.
    assert.deepEqual(
      [...SERVERS].filter((server) => grantOf(policy('p', { allow: { resources: ['docs://**'] } })).reaches(server)),
      [...SERVERS],
    );
    // Nothing allowed: nothing reached.
    assert.equal(grantOf(policy('p')).reaches('a'), false);
    // A whole-server deny unreaches it; a deny of some globs there does not.
    assert.equal(
      grantOf(policy('p', { allow: { servers: ['a'] } }), policy('q', { deny: { servers: ['a'] } })).reaches('a'),
      false,
    );
    assert.equal(
      grantOf(
        policy('p', { allow: { servers: ['a'] } }),
        policy('q', { deny: { servers: ['a'], tools: ['a__x'] } }),
      ).reaches('a'),
      true,
    );
    // Asked twice (memoised), same answer.
    assert.equal(listed.reaches('a'), true);
    assert.equal(listed.reaches('b'), false);
  });

  test("ids: ['*'] applies a policy to every principal, anonymous included", () => {
    const set = compile(
      policy('all', { principals: { ids: ['*'] }, allow: { tools: ['a__echo'] } }),
      policy('admins', { principals: { groups: ['admin'] }, allow: { servers: ['a'] } }),
    );
    for (const principal of [
      who('anonymous'),
      who('x'),
      who('y', 'admin'),
      { id: 'anonymous', groups: [], scopes: [], via: 'anonymous' } as Principal,
    ]) {
      assert.equal(allowed(set.grantFor(principal), 'tools', 'a', 'a__echo'), true, principal.id);
    }
    assert.equal(allowed(set.grantFor(who('x')), 'tools', 'a', 'a__crash'), false);
    assert.equal(allowed(set.grantFor(who('y', 'admin')), 'tools', 'a', 'a__crash'), true);
    // '*' is not a wildcard among groups, nor a prefix among ids.
    const literal = compile(policy('g', { principals: { groups: ['*'], ids: ['al*'] }, allow: { servers: ['a'] } }));
    assert.equal(literal.grantFor(who('alice', 'staff')).key, '');
    assert.equal(literal.grantFor(who('al*')).key, '0');
  });

  test('principals under the same policies share one grant', () => {
    const set = compile(
      policy('support', { principals: { groups: ['support'], ids: ['alice'] }, allow: { servers: ['a'] } }),
      policy('ops', {
        principals: { groups: ['ops'] },
        allow: { servers: ['b'] },
        rateLimit: { requestsPerMinute: 10, burst: 10 },
      }),
      policy('all', { allow: { tools: ['docs__*'] }, rateLimit: { requestsPerMinute: 100, burst: 5 } }),
    );
    const alice = set.grantFor(who('alice'));
    const sam = set.grantFor(who('sam', 'support'));
    const samAgain = set.grantFor(who('sam', 'support'));
    const oscar = set.grantFor(who('oscar', 'ops'));
    const both = set.grantFor(who('bo', 'ops', 'support'));
    assert.equal(alice.key, '0,2');
    assert.equal(sam.key, alice.key);
    assert.equal(sam, alice);
    assert.equal(samAgain, sam);
    assert.equal(oscar.key, '1,2');
    assert.notEqual(oscar.key, alice.key);
    assert.equal(both.key, '0,1,2');
    // Grants with equal keys decide alike.
    assert.equal(allowed(alice, 'tools', 'a', 'a__x'), allowed(sam, 'tools', 'a', 'a__x'));
    assert.equal(allowed(oscar, 'tools', 'a', 'a__x'), false);
    // The most generous rate limit among the policies.
    assert.deepEqual(both.rateLimit, { requestsPerMinute: 100, burst: 5 });
    assert.deepEqual(set.grantFor(who('nobody')).rateLimit, { requestsPerMinute: 100, burst: 5 });
    assert.equal(compile(policy('p')).grantFor(who('x')).rateLimit, undefined);
  });

  test('compile errors are all listed together', () => {
    const badGlob = 'a__{x';
    const settings: PolicySetting[] = [
      policy('one', { allow: { servers: ['nope'], tools: [badGlob] } }),
      policy('one', { principals: {}, when: [{ tool: 'a__echo', expr: 'args.text ==' }] }),
      policy('three', {
        principals: { ids: [], groups: [] },
        when: [
          { tool: 'a__echo', expr: '1 + 1' },
          { tool: 'a__slow', expr: 'nobody == 1' },
        ],
      }),
      policy('four', { deny: { servers: ['ghost'] }, when: [{ tool: 'a__}', expr: 'true' }] }),
    ];
    let error: unknown;
    try {
      PolicySet.compile(settings, SERVERS);
    } catch (caught) {
      error = caught;
    }
    assert.ok(error instanceof PolicyError, String(error));
    const problems = error.problems;
    const expectations: [string, RegExp][] = [
      [
        'unknown allow server',
        /^policies\[0\] \(one\)\.allow\.servers: no server is named "nope"; servers are a, b, crm, docs$/,
      ],
      ['bad glob', /^policies\[0\] \(one\)\.allow\.tools: "a__\{x" has a \{ without its \}$/],
      ['duplicate name', /^policies\[1\] \(one\): another policy has the name "one"; give each a name of its own$/],
      ['principals empty', /^policies\[1\] \(one\)\.principals: name ids or groups/],
      ['CEL that does not parse', /^policies\[1\] \(one\)\.when\[0\]\.expr: "args\.text ==" does not compile: /],
      ['principals empty lists', /^policies\[2\] \(three\)\.principals: name ids or groups/],
      [
        'CEL that is not boolean',
        /^policies\[2\] \(three\)\.when\[0\]\.expr: "1 \+ 1" does not compile: it gives a int, not a bool$/,
      ],
      [
        'CEL with an unknown variable',
        /^policies\[2\] \(three\)\.when\[1\]\.expr: "nobody == 1" does not compile: Unknown variable: nobody$/,
      ],
      ['unknown deny server', /^policies\[3\] \(four\)\.deny\.servers: no server is named "ghost"/],
      ['bad condition glob', /^policies\[3\] \(four\)\.when\[0\]\.tool: "a__\}" has a \} without its \{$/],
    ];
    for (const [what, pattern] of expectations) {
      assert.ok(
        problems.some((p) => pattern.test(p)),
        `${what}: ${pattern} in\n${problems.map((p) => p.slice(0, 200)).join('\n')}`,
      );
    }
    assert.equal(problems.length, expectations.length, problems.map((p) => p.slice(0, 200)).join('\n'));
    assert.equal(error.message, problems.join('\n'));
    // A set that compiles does not throw.
    assert.doesNotThrow(() =>
      compile(
        policy('ok', {
          allow: { servers: ['a'], tools: ['a__{echo,slow}'] },
          when: [{ tool: 'a__*', expr: "args.text != 'x'" }],
        }),
      ),
    );
  });

  describe('allowsCall with CEL conditions', () => {
    const facts = (args: unknown, principal = who('alice', 'support'), tool = 'a__echo', server = 'a') => ({
      args,
      principal,
      tool,
      server,
    });
    const guarded = policy('guarded', {
      principals: { groups: ['support'] },
      allow: { servers: ['a'] },
      when: [
        { tool: 'a__echo', expr: "args.text != 'forbidden'" },
        { tool: 'a__e*', expr: "'support' in principal.groups && server == 'a' && tool.startsWith('a__')" },
        { tool: 'a__add', expr: 'args.n > 3' },
      ],
    });

    const grantOf = (...policies: PolicySetting[]) => compile(...policies).grantFor(who('alice', 'support'));

    test('true allows, false refuses naming the condition', () => {
      const grant = grantOf(guarded);
      assert.deepEqual(grant.allowsCall('a', 'a__echo', facts({ text: 'hi' })), {
        allowed: true,
        rule: 'policy guarded',
      });
      const refused = grant.allowsCall('a', 'a__echo', facts({ text: 'forbidden' }));
      assert.deepEqual(refused, {
        allowed: false,
        rule: "condition of policy guarded (args.text != 'forbidden'): it is false",
      });
      // Conditions only apply to the tools their glob matches.
      assert.deepEqual(grant.allowsCall('a', 'a__slow', facts({ text: 'forbidden' }, undefined, 'a__slow')), {
        allowed: true,
        rule: 'policy guarded',
      });
      // The principal, tool and server are visible to the expression.
      assert.equal(grant.allowsCall('a', 'a__echo', facts({ text: 'hi' }, who('zed'))).allowed, false);
      // allows() (seeing the tool) is not affected by conditions.
      assert.equal(allowed(grant, 'tools', 'a', 'a__echo'), true);
    });

    test('an expression that fails at run time refuses', () => {
      const grant = grantOf(guarded);
      const missing = grant.allowsCall('a', 'a__echo', facts({}));
      assert.equal(missing.allowed, false);
      assert.match(missing.rule, /^condition of policy guarded \(args\.text != 'forbidden'\): it failed: /);
      const wrongType = grant.allowsCall('a', 'a__add', facts({ n: 'ten' }, undefined, 'a__add'));
      assert.equal(wrongType.allowed, false);
      assert.match(wrongType.rule, /it failed/);
      assert.equal(grant.allowsCall('a', 'a__add', facts({ n: 4 }, undefined, 'a__add')).allowed, true);
      // Arguments that are not an object are read as {}: the lookup fails, so the call is refused.
      for (const args of [undefined, null, 'text', ['forbidden'], 7]) {
        assert.equal(grant.allowsCall('a', 'a__echo', facts(args)).allowed, false, JSON.stringify(args));
      }
    });

    test('another policy allowing the tool without conditions still allows the call', () => {
      const open = policy('open', { principals: { ids: ['alice'] }, allow: { tools: ['a__echo'] } });
      const grant = compile(guarded, open).grantFor(who('alice', 'support'));
      assert.deepEqual(grant.allowsCall('a', 'a__echo', facts({ text: 'forbidden' })), {
        allowed: true,
        rule: 'policy open',
      });
      assert.deepEqual(grant.allowsCall('a', 'a__echo', facts({})), { allowed: true, rule: 'policy open' });
      // ...but not a policy that does not allow that tool.
      const unrelated = policy('unrelated', { principals: { ids: ['alice'] }, allow: { tools: ['a__slow'] } });
      assert.equal(
        compile(guarded, unrelated)
          .grantFor(who('alice', 'support'))
          .allowsCall('a', 'a__echo', facts({ text: 'forbidden' })).allowed,
        false,
      );
    });

    test('a denied tool is refused whatever its conditions say', () => {
      const grant = grantOf(guarded, policy('deny', { deny: { tools: ['a__echo'] } }));
      assert.deepEqual(grant.allowsCall('a', 'a__echo', facts({ text: 'hi' })), {
        allowed: false,
        rule: 'deny in policy deny',
      });
      assert.deepEqual(grant.allowsCall('b', 'b__echo', facts({ text: 'hi' }, undefined, 'b__echo', 'b')), {
        allowed: false,
        rule: 'no policy allows it',
      });
    });
  });

  test('pins(): a tool is pinned when a policy that allows it says pin', () => {
    const set = compile(
      policy('pinned', { principals: { groups: ['g'] }, allow: { servers: ['a'], tools: ['a__echo'] }, pin: true }),
      policy('plain', { allow: { servers: ['a', 'b'] } }),
    );
    const grant = set.grantFor(who('x', 'g'));
    assert.equal(grant.pins('a', 'a__echo'), true);
    assert.equal(grant.pins('a', 'a__slow'), false); // allowed by "plain" only
    assert.equal(grant.pins('b', 'a__echo'), false); // "pinned" lists servers: b is not among them
    assert.equal(set.grantFor(who('y')).pins('a', 'a__echo'), false); // "pinned" does not apply to y
  });
});

// ---- globs -------------------------------------------------------------------------------------

describe('globs', () => {
  const cases: [glob: string, text: string, matches: boolean][] = [
    // `*` stays within one segment, and may match nothing
    ['a__*', 'a__echo', true],
    ['a__*', 'a__', true],
    ['a__*', 'b__echo', false],
    ['a__*', 'a__x/y', false],
    ['*__echo', 'crm__echo', true],
    ['*', 'anything_at-all', true],
    ['*', 'two/segments', false],
    ['docs://public/*', 'docs://public/readme', true],
    ['docs://public/*', 'docs://public/sub/readme', false],
    // `**` crosses segments
    ['docs://public/**', 'docs://public/readme', true],
    ['docs://public/**', 'docs://public/a/b/c', true],
    ['docs://public/**', 'docs://public', true],
    ['docs://public/**', 'docs://private/readme', false],
    ['docs://public/**', 'docs://publicity/x', false],
    ['docs://**/readme', 'docs://public/a/readme', true],
    ['**', 'any://thing/at/all', true],
    ['**', 'x', true],
    // `?` is one character, never `/`
    ['a__ech?', 'a__echo', true],
    ['a__ech?', 'a__ech', false],
    ['a__ech?', 'a__echoo', false],
    ['a__?', 'a__/', false],
    // braces: either
    ['a__{echo,slow}', 'a__echo', true],
    ['a__{echo,slow}', 'a__slow', true],
    ['a__{echo,slow}', 'a__crash', false],
    ['{a,b}__*', 'b__x', true],
    ['docs://{public,shared}/**', 'docs://shared/x/y', true],
    ['docs://{public,shared}/**', 'docs://private/x', false],
    // exact names; names are case-sensitive; dots are not special
    ['a__echo', 'a__echo', true],
    ['a__echo', 'a__Echo', false],
    ['a__echo', 'a__echo2', false],
    ['fixture://hello', 'fixture://hello', true],
    ['fixture://hello', 'fixture://hello/x', false],
    ['a__*', 'a__.hidden', true],
    ['docs://**', 'docs://a/.hidden', true],
  ];
  for (const [glob, text, matches] of cases) {
    test(`${JSON.stringify(glob)} ${matches ? 'matches' : 'does not match'} ${JSON.stringify(text)}`, () => {
      assert.equal(anyOf([glob])(text), matches);
      assert.equal(checkGlob(glob), undefined);
    });
  }

  test('a list matches when any glob does; an empty list matches nothing', () => {
    const matcher = anyOf(['a__echo', 'b__*', 'docs://public/**']);
    assert.equal(matcher('a__echo'), true);
    assert.equal(matcher('b__z'), true);
    assert.equal(matcher('docs://public/x/y'), true);
    assert.equal(matcher('a__slow'), false);
    assert.equal(anyOf([])('x'), false);
    assert.equal(anyOf([])(''), false);
    assert.equal(anyOf(undefined)('x'), false);
  });

  test('the same globs decide resource URIs in a policy', () => {
    const grant = grantOf(
      policy('p', {
        allow: { resources: ['docs://public/**', 'fixture://hello'] },
        deny: { resources: ['docs://public/secret*'] },
      }),
    );
    assert.equal(allowed(grant, 'resources', 'docs', 'docs://public/a/b.md'), true);
    assert.equal(allowed(grant, 'resources', 'docs', 'docs://public/secret.md'), false);
    assert.equal(allowed(grant, 'resources', 'docs', 'docs://public/x/secret.md'), true); // `*` does not cross `/`
    assert.equal(allowed(grant, 'resources', 'a', 'fixture://hello'), true);
    assert.equal(allowed(grant, 'resources', 'a', 'fixture://other'), false);
  });
});

// ---- PolicyGuard -------------------------------------------------------------------------------

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

const OWNERS = new Map([
  ['fixture://hello', 'a'],
  ['docs://public/readme', 'docs'],
  ['docs://private/plans', 'docs'],
  ['docs://public/{id}', 'docs'],
  ['docs://private/{id}', 'docs'],
]);

function guard(
  prefixes: [string, string][] = [
    ['a', 'a'],
    ['b', 'b'],
    ['crm', 'crm'],
    ['docs', 'd'],
  ],
  pins = new PinStore(undefined, silentLog),
): PolicyGuard {
  const options: GuardOptions = {
    prefixes: new Map(prefixes),
    separator: '__',
    ownerOf: (uri) => OWNERS.get(uri),
    resolveOwner: async (uri) => OWNERS.get(uri),
    knows: async () => true,
    pins,
  };
  return new PolicyGuard(options);
}

const SUPPORT = [
  policy('servers', {
    principals: { groups: ['support'] },
    allow: { servers: ['a'] },
    deny: { tools: ['a__crash'], prompts: ['a__secret'] },
  }),
  policy('docs', {
    principals: { groups: ['support'] },
    allow: { tools: ['d__search'], resources: ['docs://public/**'] },
  }),
];

const listResult = (_method: string, result: Record<string, unknown>): JsonRpcSuccess => ({
  jsonrpc: '2.0',
  id: 7,
  result,
});
const names = (response: JsonRpcResponse, key: string, field = 'name') =>
  ((response as JsonRpcSuccess).result[key] as Record<string, unknown>[]).map((item) => item[field]);
let nextId = 1;
const rpc = (method: string, params: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: nextId++,
  method,
  params,
});
const noFind = async () => {
  throw new Error('findTool should not be needed');
};

describe('PolicyGuard.shape', () => {
  const grant = compile(...SUPPORT).grantFor(who('sam', 'support'));

  test('filters tools, prompts, resources and resource templates on /mcp, and marks them private', () => {
    const g = guard();
    const tools = g.shape(
      undefined,
      'tools/list',
      listResult('tools/list', {
        tools: [
          { name: 'a__echo' },
          { name: 'a__crash' },
          { name: 'b__echo' },
          { name: 'd__search' },
          { name: 'd__delete' },
          { name: 'zz__echo' },
          { name: 42 },
          'a__echo',
          null,
        ],
        nextCursor: 'c1',
      }),
      grant,
    );
    assert.deepEqual(names(tools, 'tools'), ['a__echo', 'd__search']);
    assert.equal((tools as JsonRpcSuccess).result.cacheScope, 'private');
    assert.equal((tools as JsonRpcSuccess).result.nextCursor, 'c1');
    assert.equal(tools.id, 7);

    const prompts = g.shape(
      undefined,
      'prompts/list',
      listResult('prompts/list', { prompts: [{ name: 'a__greet' }, { name: 'a__secret' }, { name: 'b__greet' }] }),
      grant,
    );
    assert.deepEqual(names(prompts, 'prompts'), ['a__greet']);
    assert.equal((prompts as JsonRpcSuccess).result.cacheScope, 'private');

    const resources = g.shape(
      undefined,
      'resources/list',
      listResult('resources/list', {
        resources: [
          { uri: 'fixture://hello' },
          { uri: 'docs://public/readme' },
          { uri: 'docs://private/plans' },
          { uri: 'unowned://x' },
        ],
      }),
      grant,
    );
    assert.deepEqual(names(resources, 'resources', 'uri'), ['fixture://hello', 'docs://public/readme']);
    assert.equal((resources as JsonRpcSuccess).result.cacheScope, 'private');

    const templates = g.shape(
      undefined,
      'resources/templates/list',
      listResult('resources/templates/list', {
        resourceTemplates: [{ uriTemplate: 'docs://public/{id}' }, { uriTemplate: 'docs://private/{id}' }],
      }),
      grant,
    );
    assert.deepEqual(names(templates, 'resourceTemplates', 'uriTemplate'), ['docs://public/{id}']);
    assert.equal((templates as JsonRpcSuccess).result.cacheScope, 'private');
  });

  test('on /servers/<name>/mcp, names are judged as /mcp shows them', () => {
    const g = guard();
    const a = g.shape(
      'a',
      'tools/list',
      listResult('tools/list', { tools: [{ name: 'echo' }, { name: 'crash' }, { name: 'a__echo' }] }),
      grant,
    );
    assert.deepEqual(names(a, 'tools'), ['echo', 'a__echo']); // a__echo there is /mcp's a__a__echo
    const docs = g.shape(
      'docs',
      'tools/list',
      listResult('tools/list', { tools: [{ name: 'search' }, { name: 'delete' }] }),
      grant,
    );
    assert.deepEqual(names(docs, 'tools'), ['search']); // d__search under docs' prefix "d"
    const b = g.shape('b', 'tools/list', listResult('tools/list', { tools: [{ name: 'echo' }] }), grant);
    assert.deepEqual(names(b, 'tools'), []);
    // A resource's server is the endpoint's, whatever the lists said.
    const resources = g.shape(
      'a',
      'resources/list',
      listResult('resources/list', { resources: [{ uri: 'docs://private/plans' }, { uri: 'unowned://x' }] }),
      grant,
    );
    assert.deepEqual(names(resources, 'resources', 'uri'), ['docs://private/plans', 'unowned://x']);
  });

  test('answers that are not lists pass through untouched', () => {
    const g = guard();
    const call: JsonRpcResponse = { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'a__crash' }] } };
    assert.equal(g.shape(undefined, 'tools/call', call, grant), call);
    const failed: JsonRpcResponse = { jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'boom' } };
    assert.equal(g.shape(undefined, 'tools/list', failed, grant), failed);
    const odd: JsonRpcResponse = { jsonrpc: '2.0', id: 3, result: { tools: 'not a list' } };
    assert.equal(g.shape(undefined, 'tools/list', odd, grant), odd);
  });

  test('returns a fresh object and leaves the one given alone, even when it is frozen', () => {
    const g = guard();
    const input = deepFreeze(
      listResult('tools/list', {
        tools: [{ name: 'a__echo', description: 'x' }, { name: 'a__crash' }],
        _meta: { k: 1 },
      }),
    );
    const before = JSON.stringify(input);
    const shaped = g.shape(undefined, 'tools/list', input, grant) as JsonRpcSuccess;
    assert.equal(JSON.stringify(input), before);
    assert.notEqual(shaped, input);
    assert.notEqual(shaped.result, input.result);
    assert.notEqual(shaped.result.tools, input.result.tools);
    assert.equal(Object.isFrozen(shaped), false);
    assert.deepEqual(shaped, {
      jsonrpc: '2.0',
      id: 7,
      result: { tools: [{ name: 'a__echo', description: 'x' }], _meta: { k: 1 }, cacheScope: 'private' },
    });
    // Everything kept: still a fresh list, never the cache entry itself.
    const allKept = deepFreeze(listResult('tools/list', { tools: [{ name: 'a__echo' }] }));
    const shapedAll = g.shape(undefined, 'tools/list', allKept, grant) as JsonRpcSuccess;
    assert.notEqual(shapedAll.result, allKept.result);
    assert.equal(allKept.result.cacheScope, undefined);
  });

  test('memoises per items array and grant', () => {
    const g = guard();
    const set = compile(...SUPPORT, policy('b-only', { principals: { groups: ['b'] }, allow: { servers: ['b'] } }));
    const sam = set.grantFor(who('sam', 'support'));
    const sue = set.grantFor(who('sue', 'support'));
    const bea = set.grantFor(who('bea', 'b'));
    const items = [{ name: 'a__echo' }, { name: 'b__echo' }, { name: 'a__crash' }];
    const first = g.shape(undefined, 'tools/list', listResult('tools/list', { tools: items }), sam) as JsonRpcSuccess;
    const second = g.shape(
      undefined,
      'tools/list',
      { jsonrpc: '2.0', id: 99, result: { tools: items } },
      sam,
    ) as JsonRpcSuccess;
    assert.equal(second.result.tools, first.result.tools);
    assert.equal(second.id, 99);
    // Same policies, same grant key: the same filtered list.
    assert.equal(sue.key, sam.key);
    assert.equal(
      (g.shape(undefined, 'tools/list', listResult('tools/list', { tools: items }), sue) as JsonRpcSuccess).result
        .tools,
      first.result.tools,
    );
    // Another grant: its own list.
    const forBea = g.shape(undefined, 'tools/list', listResult('tools/list', { tools: items }), bea) as JsonRpcSuccess;
    assert.deepEqual(names(forBea, 'tools'), ['b__echo']);
    assert.deepEqual(names(first, 'tools'), ['a__echo']);
    // Another array with the same content: filtered afresh, alike.
    const copy = g.shape(
      undefined,
      'tools/list',
      listResult('tools/list', { tools: [...items] }),
      sam,
    ) as JsonRpcSuccess;
    assert.notEqual(copy.result.tools, first.result.tools);
    assert.deepEqual(copy.result.tools, first.result.tools);
  });
});

describe('PolicyGuard.check', () => {
  const set = compile(
    ...SUPPORT,
    policy('conditional', {
      principals: { groups: ['support'] },
      allow: { tools: ['a__echo'] },
      when: [{ tool: 'a__echo', expr: "args.text != 'forbidden'" }],
    }),
  );
  const sam = who('sam', 'support');
  const grant = set.grantFor(sam);

  test('a denied name and a name no server offers get identical refusals', async () => {
    // The same name judged by a gateway where it exists but is denied, and by one where no server offers it.
    const withA = guard();
    const withoutA = guard([['b', 'b']]);
    const cases: [method: string, params: Record<string, unknown>, server: string | undefined][] = [
      ['tools/call', { name: 'a__crash', arguments: {} }, undefined],
      ['tools/call', { name: 'b__echo', arguments: {} }, undefined],
      ['prompts/get', { name: 'a__secret' }, undefined],
      [
        'completion/complete',
        { ref: { type: 'ref/prompt', name: 'a__secret' }, argument: { name: 'x', value: '' } },
        undefined,
      ],
    ];
    for (const [method, params, server] of cases) {
      const message = rpc(method, params);
      const denied = await withA.check(server, message, grant, sam, noFind);
      const unknown = await withoutA.check(server, message, grant, sam, noFind);
      assert.equal(denied.allowed, false);
      assert.deepEqual(denied.refusal, unknown.refusal, method);
      const name = (params.name ?? (params.ref as { name: string }).name) as string;
      const kind = method === 'tools/call' ? 'tool' : 'prompt';
      assert.deepEqual(denied.refusal, {
        jsonrpc: '2.0',
        id: message.id,
        error: { code: -32602, message: `Unknown ${kind}: ${name}` },
      });
      assert.equal(denied.target, name);
    }
    // The rule is for the audit log, not for the caller.
    const crash = await withA.check(undefined, rpc('tools/call', { name: 'a__crash' }), grant, sam, noFind);
    assert.equal(crash.rule, 'deny in policy servers');
    assert.doesNotMatch(JSON.stringify(crash.refusal), /polic|deny/);
  });

  test('on /servers/<name>/mcp the refusal names the tool as the caller gave it', async () => {
    const g = guard();
    const message = rpc('tools/call', { name: 'crash', arguments: {} });
    const verdict = await g.check('a', message, grant, sam, noFind);
    assert.deepEqual(verdict.refusal, {
      jsonrpc: '2.0',
      id: message.id,
      error: { code: -32602, message: 'Unknown tool: crash' },
    });
    assert.deepEqual(
      await g.check('a', rpc('tools/call', { name: 'echo', arguments: { text: 'hi' } }), grant, sam, noFind),
      {
        allowed: true,
        rule: 'policy servers',
        target: 'a__echo',
      },
    );
  });

  test('a denied resource and an unowned one get identical refusals', async () => {
    const g = guard();
    const narrow = compile(
      policy('p', { allow: { servers: ['docs'] }, deny: { resources: ['docs://private/**'] } }),
    ).grantFor(sam);
    for (const [uri, method] of [
      ['docs://private/plans', 'resources/read'],
      ['nobody://has/this', 'resources/read'],
      ['docs://private/plans', 'completion/complete'],
    ] as const) {
      const params =
        method === 'resources/read'
          ? { uri }
          : { ref: { type: 'ref/resource', uri }, argument: { name: 'x', value: '' } };
      const message = rpc(method, params);
      const verdict = await g.check(undefined, message, narrow, sam, noFind);
      assert.equal(verdict.allowed, false, uri);
      assert.deepEqual(verdict.refusal, {
        jsonrpc: '2.0',
        id: message.id,
        error: { code: -32602, message: `Resource not found: ${uri}`, data: { uri } },
      });
    }
    assert.equal(
      (await g.check(undefined, rpc('resources/read', { uri: 'docs://public/readme' }), narrow, sam, noFind)).allowed,
      true,
    );
  });

  test('allowed calls go ahead; a failed condition is refused as such', async () => {
    const g = guard();
    assert.deepEqual(
      await g.check(undefined, rpc('tools/call', { name: 'a__echo', arguments: { text: 'hi' } }), grant, sam, noFind),
      {
        allowed: true,
        rule: 'policy servers',
        target: 'a__echo',
      },
    );
    // "servers" allows a__echo without conditions, so the call goes ahead whatever the arguments.
    assert.equal(
      (
        await g.check(
          undefined,
          rpc('tools/call', { name: 'a__echo', arguments: { text: 'forbidden' } }),
          grant,
          sam,
          noFind,
        )
      ).allowed,
      true,
    );
    const onlyConditional = compile(
      policy('conditional', {
        allow: { tools: ['a__echo'] },
        when: [{ tool: 'a__echo', expr: "args.text != 'forbidden'" }],
      }),
    ).grantFor(sam);
    const message = rpc('tools/call', { name: 'a__echo', arguments: { text: 'forbidden' } });
    const refused = await g.check(undefined, message, onlyConditional, sam, noFind);
    assert.equal(refused.allowed, false);
    assert.equal(refused.refusal && 'error' in refused.refusal && refused.refusal.error.code, -32602);
    assert.match(JSON.stringify(refused.refusal), /Call refused by policy/);
    // Lists and other methods are not refused here (lists are filtered in shape()).
    for (const method of [
      'tools/list',
      'prompts/list',
      'resources/list',
      'resources/templates/list',
      'server/discover',
      'subscriptions/listen',
    ]) {
      assert.equal((await g.check(undefined, rpc(method, {}), grant, sam, noFind)).allowed, true, method);
    }
  });

  test('a pinned tool that changed upstream is refused as unknown; one never listed is looked up first', async () => {
    const pinned = compile(policy('pinned', { allow: { servers: ['a'] }, pin: true }));
    const grantPinned = pinned.grantFor(sam);
    const pins = new PinStore(undefined, silentLog);
    const g = guard(undefined, pins);
    let lookups = 0;
    const findTool = async () => {
      lookups++;
      g.shape(
        undefined,
        'tools/list',
        listResult('tools/list', { tools: [{ name: 'a__echo', description: 'v1' }] }),
        grantPinned,
      );
    };
    assert.deepEqual(
      await g.check(undefined, rpc('tools/call', { name: 'a__echo', arguments: {} }), grantPinned, sam, findTool),
      {
        allowed: true,
        rule: 'policy pinned',
        target: 'a__echo',
      },
    );
    assert.equal(lookups, 1);
    // Written down, not taken from toolDigest: SHA-256 of the reviewed fields' canonical JSON, the absent
    // ones left out (policy/pins.ts: description, inputSchema, outputSchema, annotations):
    // sha256('{"description":"v1"}').
    assert.deepEqual(pins.snapshot(), { a__echo: '352d4693b54641c1d6f4955742d0916603166f69fd82a6e9b66a311e3e04c019' });

    const changed = g.shape(
      undefined,
      'tools/list',
      listResult('tools/list', { tools: [{ name: 'a__echo', description: 'v2' }, { name: 'a__slow' }] }),
      grantPinned,
    );
    assert.deepEqual(names(changed, 'tools'), ['a__slow']);
    const message = rpc('tools/call', { name: 'a__echo', arguments: {} });
    const verdict = await g.check(undefined, message, grantPinned, sam, findTool);
    assert.deepEqual(verdict.refusal, {
      jsonrpc: '2.0',
      id: message.id,
      error: { code: -32602, message: 'Unknown tool: a__echo' },
    });
    assert.equal(verdict.rule, 'pinned tool changed upstream');
    assert.equal(lookups, 1);
  });
});
