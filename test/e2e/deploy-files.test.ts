// deploy/: the compose file, its HAProxy config and the Kubernetes manifests, checked against the gateway
// (its routes, its config, the variables it reads) without a container engine; haproxy -c when installed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import {
  drainSeconds,
  healthRoutes,
  loadWith,
  placeholders,
  read,
  requiredVariables,
  yamlDocs,
  yamlOf,
} from './deploy-helpers.js';
import { ROOT } from './harness.js';
import { haproxyBinary } from '../services.js';

const REPLICAS_CONFIG = 'deploy/replicas.config.yaml';
const compose = yamlOf('deploy/docker-compose.yaml');
const gatewayServices = Object.keys(compose.services)
  .filter((name) => name.startsWith('gateway'))
  .sort();
const haproxy = read('deploy/haproxy.cfg');

/** Compose's ${VAR:?message} needs the variable from whoever runs compose: stand in for it. */
function composeEnv(service: string): Record<string, string> {
  const env: Record<string, string> = compose.services[service].environment;
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => [
      name,
      String(value).startsWith('${') ? placeholders([name])[name]! : String(value),
    ]),
  );
}

test('the gateway serves /healthz and /readyz (the paths every probe below uses)', () => {
  assert.deepEqual(healthRoutes().sort(), ['/healthz', '/readyz']);
});

test('compose: Redis, three replicas built from this repository on one config, and HAProxy', () => {
  assert.deepEqual(gatewayServices, ['gateway1', 'gateway2', 'gateway3']);
  assert.match(compose.services.redis.image, /^redis:\d/);
  assert.match(compose.services.haproxy.image, /^haproxy:\d/);
  assert.deepEqual(compose.services.haproxy.ports, ['8080:8080']);
  assert.ok(compose.services.haproxy.volumes.includes('./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro'));
  for (const name of gatewayServices) {
    const service = compose.services[name];
    assert.ok(
      existsSync(path.join(ROOT, 'deploy', service.build.context, service.build.dockerfile)),
      `${name}: build context holds the Dockerfile`,
    );
    const configPath = service.command[service.command.indexOf('--config') + 1];
    assert.ok(
      service.volumes.includes(`./${path.basename(REPLICAS_CONFIG)}:${configPath}:ro`),
      `${name} mounts ${REPLICAS_CONFIG} where --config points`,
    );
    assert.equal(
      service.init,
      undefined,
      `${name}: the image's own init process (tini) reaps what stdio servers leave behind`,
    );
  }
});

test(
  "compose: each replica's environment supplies every variable the config reads, " + 'and the config loads with it',
  () => {
    const needed = requiredVariables(read(REPLICAS_CONFIG));
    assert.ok(needed.includes('MCP_GATEWAY_API_KEY') && needed.includes('MCP_GATEWAY_INTERNAL_URL'));
    for (const name of gatewayServices) {
      const env = composeEnv(name);
      assert.deepEqual(
        needed.filter((variable) => !(variable in env)),
        [],
        `${name} lacks variables`,
      );
      const config = loadWith(REPLICAS_CONFIG, env);
      assert.equal(config.cache.store, 'redis');
      assert.equal(new URL(config.cache.url).hostname, 'redis', 'the Redis URL names the compose service');
      assert.equal(
        config.mrtr.internalUrl,
        `http://${name}:${config.listen.port}`,
        `${name} tells the other replicas its own address`,
      );
      assert.ok(config.listen.drainDelayMs > 0, 'replicas report draining before they stop listening');
      const grace = /^(\d+)s$/.exec(compose.services[name].stop_grace_period)!;
      assert.ok(
        Number(grace[1]) > drainSeconds(config),
        `${name}: stop_grace_period must exceed the drain (${drainSeconds(config)} s)`,
      );
    }
  },
);

test('haproxy.cfg: the compose replicas as backends, health checks on /readyz faster than the drain delay', () => {
  const servers = [...haproxy.matchAll(/^\s*server\s+(\S+)\s+([^:\s]+):(\d+)/gm)].map((m) => ({
    name: m[1],
    host: m[2],
    port: Number(m[3]),
  }));
  const config = loadWith(REPLICAS_CONFIG, composeEnv('gateway1'));
  assert.deepEqual(
    servers,
    gatewayServices.map((name) => ({ name, host: name, port: config.listen.port })),
  );
  const check = /^\s*option httpchk GET (\S+)\s*$/m.exec(haproxy);
  assert.ok(check && healthRoutes().includes(check[1]!) && check[1] === '/readyz', 'HAProxy checks /readyz');
  const inter = Number(/\binter (\d+)s\b/.exec(haproxy)![1]);
  const fall = Number(/\bfall (\d+)\b/.exec(haproxy)![1]);
  assert.ok(
    inter * fall * 1000 < config.listen.drainDelayMs,
    'HAProxy sees a draining replica fail before listen.drainDelayMs ends',
  );
  assert.match(haproxy, /^\s*bind :8080$/m);
});

const haproxyNeed = haproxyBinary('haproxy -c on deploy/haproxy.cfg');
test('haproxy -c accepts haproxy.cfg', { skip: haproxyNeed.skip }, () => {
  haproxyNeed.check();
  const result = spawnSync('haproxy', ['-c', '-f', path.join(ROOT, 'deploy/haproxy.cfg')], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stdout + result.stderr);
  // Outside compose the replicas' names do not resolve; anything else it warns about is a mistake.
  const warnings = (result.stdout + result.stderr)
    .split('\n')
    .filter((line) => line.includes('WARNING') && !/could not resolve address 'gateway\d'/.test(line));
  assert.deepEqual(warnings, []);
});

const manifests = Object.fromEntries(
  (yamlOf('deploy/kubernetes/kustomization.yaml').resources as string[])
    .flatMap((file) => yamlDocs(`deploy/kubernetes/${file}`))
    .map((doc) => [doc.kind, doc]),
);
const deployment = manifests.Deployment;
const pod = deployment.spec.template.spec;
const container = pod.containers[0];

test(
  'kubernetes: kustomization names a Deployment, Service, ConfigMap, PodDisruptionBudget and ' +
    'HorizontalPodAutoscaler',
  () => {
    assert.deepEqual(Object.keys(manifests).sort(), [
      'ConfigMap',
      'Deployment',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
      'Service',
    ]);
    const version = JSON.parse(read('package.json')).version;
    assert.equal(container.image.split(':').pop(), version, 'the image tag follows package.json');
  },
);

test('kubernetes: the ConfigMap carries replicas.config.yaml, mounted where --config points', () => {
  const configMap = manifests.ConfigMap;
  const [file, text] = Object.entries(configMap.data as Record<string, string>)[0]!;
  assert.equal(text, read(REPLICAS_CONFIG), 'copy deploy/replicas.config.yaml into kubernetes/configmap.yaml');
  const volume = pod.volumes.find((v: any) => v.configMap?.name === configMap.metadata.name);
  const mount = container.volumeMounts.find((m: any) => m.name === volume.name);
  assert.equal(container.args[container.args.indexOf('--config') + 1], `${mount.mountPath}/${file}`);
  assert.equal(mount.subPath, undefined, 'a subPath mount never sees ConfigMap updates');
});

test(
  'kubernetes: the Secret the kustomization says to create and env supply every variable the config reads; the ' +
    'config loads with them',
  () => {
    const secretVariables = [
      ...read('deploy/kubernetes/kustomization.yaml').matchAll(/--from-literal=([A-Z_]+)=/g),
    ].map((m) => m[1]!);
    const provided = [...secretVariables, ...container.env.map((e: any) => e.name)];
    assert.deepEqual(
      requiredVariables(read(REPLICAS_CONFIG)).filter((name) => !provided.includes(name)),
      [],
    );
    assert.match(
      read('deploy/kubernetes/kustomization.yaml'),
      new RegExp(`kubectl create secret generic ${container.envFrom[0].secretRef.name} `),
    );
    const internal = container.env
      .find((e: any) => e.name === 'MCP_GATEWAY_INTERNAL_URL')
      .value.replace('$(POD_IP)', '10.0.0.1');
    const config = loadWith(REPLICAS_CONFIG, {
      ...placeholders(requiredVariables(read(REPLICAS_CONFIG))),
      MCP_GATEWAY_INTERNAL_URL: internal,
    });
    assert.equal(new URL(config.mrtr.internalUrl!).port, String(config.listen.port));
  },
);

test("kubernetes: probes on the gateway's routes and port, preStop, and a grace period longer than the drain", () => {
  const config = loadWith(REPLICAS_CONFIG, placeholders(requiredVariables(read(REPLICAS_CONFIG))));
  const port = container.ports.find((p: any) => p.name === 'http');
  assert.equal(port.containerPort, config.listen.port);
  assert.equal(container.readinessProbe.httpGet.path, '/readyz');
  assert.equal(container.livenessProbe.httpGet.path, '/healthz');
  for (const probe of [container.readinessProbe, container.livenessProbe]) assert.equal(probe.httpGet.port, 'http');
  const readiness = container.readinessProbe;
  assert.ok(
    readiness.periodSeconds * readiness.failureThreshold * 1000 < config.listen.drainDelayMs,
    'the readiness probe sees draining before the delay ends',
  );
  const sleep = Number(container.lifecycle.preStop.exec.command[1]);
  assert.ok(
    pod.terminationGracePeriodSeconds > sleep + drainSeconds(config),
    `terminationGracePeriodSeconds must exceed ${sleep + drainSeconds(config)} s`,
  );
});

test("kubernetes: Service, PodDisruptionBudget and autoscaler select the Deployment's pods", () => {
  const labels = deployment.spec.template.metadata.labels;
  const selects = (selector: Record<string, string>) =>
    Object.entries(selector).every(([key, value]) => labels[key] === value);
  assert.ok(selects(manifests.Service.spec.selector));
  assert.ok(container.ports.some((p: any) => p.name === manifests.Service.spec.ports[0].targetPort));
  assert.ok(selects(manifests.PodDisruptionBudget.spec.selector.matchLabels));
  assert.ok(selects(deployment.spec.selector.matchLabels));
  const hpa = manifests.HorizontalPodAutoscaler.spec;
  assert.deepEqual([hpa.scaleTargetRef.kind, hpa.scaleTargetRef.name], ['Deployment', deployment.metadata.name]);
  assert.ok(hpa.minReplicas > manifests.PodDisruptionBudget.spec.maxUnavailable, 'evictions leave a replica serving');
  assert.ok(container.resources.requests.cpu, 'CPU utilisation is measured against the cpu request');
});
