// The shipped deployment files as an operator meets them (issue 36): every config loads and lets its own key
// read the operator pages, the documented Prometheus scrape config finds the manifests' pods on their port,
// the kustomization never applies a Secret over the one its comment says to create, and the image brings
// its own init process. No container engine: the files are parsed and checked against the gateway's code.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { isOperator } from '../../src/edge/ops-routes.js';
import type { Principal } from '../../policy/principal.js';
import { ROOT } from './harness.js';
import { healthRoutes, loadWith, placeholders, read, requiredVariables, yamlDocs, yamlOf } from './deploy-helpers.js';

const K8S = 'deploy/kubernetes';
const kustomization = yamlOf(`${K8S}/kustomization.yaml`);
const applied = (kustomization.resources as string[]).flatMap((file) => yamlDocs(`${K8S}/${file}`));
const deployment = applied.find((doc) => doc.kind === 'Deployment');
const container = deployment.spec.template.spec.containers[0];
const podLabels: Record<string, string> = deployment.spec.template.metadata.labels;

/** The configs an operator runs as shipped, with stand-ins for the variables they read. */
const shippedConfigs = ['deploy/container.config.yaml', 'deploy/replicas.config.yaml'];
const configMapText = (applied.find((doc) => doc.kind === 'ConfigMap').data as Record<string, string>)[
  'gateway.config.yaml'
]!;

for (const file of shippedConfigs) {
  test(
    `${file}: the key it configures reads /metrics, the status page and /config (auth.operators names its ` +
      `principal)`,
    () => {
      const env: Record<string, string> = {
        ...placeholders(requiredVariables(read(file))),
        MCP_GATEWAY_HOST: '0.0.0.0',
      };
      const config = loadWith(file, env);
      const key = env.MCP_GATEWAY_API_KEY!;
      const entry = config.auth!.apiKeys.find((k) => k.sha256 === createHash('sha256').update(key).digest('hex'));
      assert.ok(entry, `${file}: MCP_GATEWAY_API_KEY is an API key`);
      const principal: Principal = { id: entry.principal, groups: entry.groups, scopes: [], via: 'api-key' };
      assert.equal(
        isOperator(principal, config.auth!.operators),
        true,
        `${file}: name "${entry.principal}" in auth.operators, or its key gets 403 on /metrics`,
      );
    },
  );
}

test("the ConfigMap's config is the replicas config, operators included", () => {
  assert.equal(configMapText, read('deploy/replicas.config.yaml'));
  assert.deepEqual(parseYaml(configMapText).auth.operators, { ids: ['operator'] });
});

/** Prometheus's name for a pod label: __meta_kubernetes_pod_label_ plus the name with every other character as _. */
const podLabelMeta = (label: string): string => `__meta_kubernetes_pod_label_${label.replace(/[^a-zA-Z0-9_]/g, '_')}`;

/** The scrape config docs/deployment.md shows under "Metrics". */
function documentedScrapeConfig(): any {
  const docs = read('docs/deployment.md');
  const section = docs.slice(docs.indexOf('### Metrics'));
  const block = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
  return parseYaml(block).scrape_configs[0];
}

test(
  "docs/deployment.md's Prometheus scrape config keeps the manifests' pods, " + 'on the port that serves /metrics',
  () => {
    const job = documentedScrapeConfig();
    assert.equal(job.metrics_path, '/metrics');
    assert.equal(job.authorization.type, 'Bearer');
    assert.deepEqual(job.kubernetes_sd_configs, [{ role: 'pod' }]);
    // What Prometheus's pod discovery sets for the Deployment's pod, one target per container port.
    const targets = (container.ports as { name: string; containerPort: number }[]).map((port) => ({
      ...Object.fromEntries(Object.entries(podLabels).map(([label, value]) => [podLabelMeta(label), value])),
      __meta_kubernetes_pod_container_port_name: port.name,
      __meta_kubernetes_pod_container_port_number: String(port.containerPort),
    }));
    const kept = targets.filter((target: Record<string, string>) =>
      (job.relabel_configs as { source_labels: string[]; regex: string; action: string }[]).every((rule) => {
        assert.equal(rule.action, 'keep', 'only keep rules are modelled here');
        const value = rule.source_labels.map((label) => target[label] ?? '').join(';');
        return new RegExp(`^(?:${rule.regex})$`).test(value);
      }),
    );
    assert.equal(kept.length, 1, 'the scrape config keeps exactly one target per gateway pod');
    const config = loadWith(
      'deploy/replicas.config.yaml',
      placeholders(requiredVariables(read('deploy/replicas.config.yaml'))),
    );
    assert.equal(
      Number(kept[0]!.__meta_kubernetes_pod_container_port_number),
      config.listen.port,
      'and it is the port the gateway listens on',
    );
    // A rule on the old `app` label keeps nothing: the manifests label app.kubernetes.io/name.
    assert.ok(!('app' in podLabels));
  },
);

test('every object the kustomization applies carries the pod label, and selectors match the pods', () => {
  for (const doc of applied)
    assert.equal(
      doc.metadata.labels['app.kubernetes.io/name'],
      podLabels['app.kubernetes.io/name'],
      `${doc.kind} is labelled`,
    );
  const service = applied.find((doc) => doc.kind === 'Service');
  assert.deepEqual(service.spec.selector, podLabels);
  assert.ok(container.ports.some((port: { name: string }) => port.name === service.spec.ports[0].targetPort));
});

test('probes use the routes and the named port the gateway serves', () => {
  const names = container.ports.map((port: { name: string }) => port.name);
  for (const probe of [container.readinessProbe, container.livenessProbe]) {
    assert.ok(healthRoutes().includes(probe.httpGet.path), probe.httpGet.path);
    assert.ok(names.includes(probe.httpGet.port));
  }
});

test(
  'the kustomization applies no Secret; its comment and the docs create the one the Deployment reads, with every ' +
    'variable',
  () => {
    assert.deepEqual(
      applied.filter((doc) => doc.kind === 'Secret'),
      [],
      'an applied Secret (even an empty one) replaces the one created by hand',
    );
    const files = readdirSync(path.join(ROOT, K8S)).filter(
      (file) => file.endsWith('.yaml') && file !== 'kustomization.yaml',
    );
    assert.deepEqual(
      files.sort(),
      [...kustomization.resources].sort(),
      `every manifest in ${K8S} is applied, so kubectl apply -f applies no other`,
    );
    const secretName = container.envFrom[0].secretRef.name;
    const needed = requiredVariables(read('deploy/replicas.config.yaml')).filter(
      (name) => !container.env.some((e: { name: string }) => e.name === name),
    );
    for (const [where, text] of [
      ['kustomization.yaml', read(`${K8S}/kustomization.yaml`)],
      ['docs/deployment.md', read('docs/deployment.md')],
    ] as const) {
      const command = new RegExp(`kubectl create secret generic ${secretName}((?:[^\\n]*\\\\\\n)*[^\\n]*)`).exec(text);
      assert.ok(command, `${where} shows how to create the Secret ${secretName}`);
      const literals = [...command[1]!.matchAll(/--from-literal=([A-Z_]+)=/g)].map((m) => m[1]);
      assert.deepEqual(literals.sort(), needed, `${where}: the command supplies every variable the config reads`);
    }
  },
);

test('the image runs an init process at PID 1 (Kubernetes has no --init), and the manifests keep it', () => {
  const dockerfile = read('Dockerfile');
  const runtime = dockerfile.split(/^FROM /m).at(-1)!;
  assert.match(runtime, /apt-get install[^\n]*\btini\b/);
  const entrypoint = JSON.parse(/^ENTRYPOINT (\[.+\])$/m.exec(runtime)![1]!) as string[];
  assert.equal(entrypoint[0], '/usr/bin/tini');
  assert.equal(entrypoint.at(-1), '--');
  // `command:` would replace the entrypoint (and with it tini); `args:` replaces only CMD.
  assert.equal(container.command, undefined);
  assert.equal(yamlOf('deploy/docker-compose.yaml')['x-gateway'].entrypoint, undefined);
});

/** GitHub's anchor for a Markdown heading. */
const anchorOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

test('the shipped configs point at documents and sections that exist', () => {
  for (const file of ['gateway.config.yaml', ...shippedConfigs]) {
    const text = read(file);
    for (const match of text.matchAll(/(README\.md|docs\/[a-z-]+\.md)(?:[,:]? \("?([^")]+)"?\)|, "([^"]+)")?/g)) {
      const doc = read(match[1]!);
      const headings = [...doc.matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1]!));
      for (const section of [match[2], match[3]].filter(Boolean) as string[]) {
        assert.ok(
          headings.includes(anchorOf(section)),
          `${file} points at "${section}" in ${match[1]}, which has no such section`,
        );
      }
    }
    for (const match of text.matchAll(/\(([a-z./]+\.md)(?:, "([^"]+)")?(?:; ([a-z./]+\.md), "([^"]+)")?\)/g)) {
      for (const [doc, section] of [
        [match[1], match[2]],
        [match[3], match[4]],
      ]) {
        if (!doc || !section) continue;
        const headings = [...read(doc).matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1]!));
        assert.ok(
          headings.includes(anchorOf(section)),
          `${file} points at "${section}" in ${doc}, which has no such section`,
        );
      }
    }
  }
});
