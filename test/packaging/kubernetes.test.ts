/**
 * deploy/kubernetes, read statically (no cluster here): every document is checked against
 * the Kubernetes API schemas (kubernetes-models; the PodMonitor against the Prometheus
 * Operator's), then against what the pieces promise each other: the probes on the API port
 * of the ConfigMap's `api.bind`, the PodMonitor on the probe listener, the Secret's files
 * read-only where the config reads them, the shard from the pod ordinal with n equal to the
 * replicas, every file the config names present in the ConfigMap. Finally the real sonde
 * boots (`--run=false`) on the ConfigMap and Secret as the pod would see them.
 *
 * The schemas catch wrong types, missing required fields and bad values, not unknown keys;
 * the keys the deployment relies on are read back by name below, so a misspelt one fails.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { promisify } from 'node:util';
import { parse, parseAllDocuments } from 'yaml';
import { ConfigMap, Secret, Service, type IContainer } from 'kubernetes-models/v1';
import { StatefulSet } from 'kubernetes-models/apps/v1';
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { freePort } from '../helpers/mariadb.js';
import { ROOT, runSonde } from '../helpers/agent.js';

const DIR = join(ROOT, 'deploy/kubernetes');
const run = promisify(execFile);

/**
 * The monitors per agent the resource figures are sized for, and the sizing formula from
 * bench/scale.ts (docs/deploy.md#sizing): memory 128 MiB + 0.4 MiB per monitor, CPU 50 m +
 * 0.25 m per monitor.
 */
const MONITORS_PER_AGENT = 300;
const memoryRequestMi = (monitors: number): number => 128 + 0.4 * monitors;
const cpuRequestMilli = (monitors: number): number => 50 + 0.25 * monitors;

interface Doc {
  file: string;
  value: { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } } & Record<
    string,
    unknown
  >;
}

/** A model class per kind: its constructor takes the document, `validate()` throws on a mismatch. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/StatefulSet': StatefulSet,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor,
};

/** Port of a `host:port` / `:port` address. */
function portOf(bind: string): number {
  const m = /:(\d+)$/.exec(bind);
  assert.ok(m, `no port in ${bind}`);
  return Number(m[1]);
}

/** Memory `246Mi` in MiB, CPU `120m` in millicores. */
const mebibytes = (q: unknown): number => Number(/^(\d+(?:\.\d+)?)Mi$/.exec(String(q))?.[1] ?? NaN);
const millicores = (q: unknown): number => Number(/^(\d+)m$/.exec(String(q))?.[1] ?? NaN);

describe('deploy/kubernetes', () => {
  let docs: Doc[];
  let resources: string[];
  let configMap: ConfigMap;
  let secret: Secret;
  let service: Service;
  let sts: StatefulSet;
  let podMonitor: PodMonitor;
  let container: IContainer;
  /** The ConfigMap's sonde.yaml, parsed. */
  let sondeYaml: {
    api: { bind: string; 'token-file': string };
    probe: { bind: string };
    mysql: { 'password-file': string };
    'monitor-loader': { files: string[] };
  };

  const one = <T>(kind: string, make: (d: never) => T): T => {
    const found = docs.filter((d) => d.value.kind === kind);
    assert.equal(found.length, 1, `one ${kind}`);
    return make(found[0]!.value as never);
  };

  before(async () => {
    const kustomization = parse(await readFile(join(DIR, 'kustomization.yaml'), 'utf8')) as {
      resources: string[];
      namespace?: string;
    };
    resources = kustomization.resources;
    assert.equal(kustomization.namespace, undefined, 'namespace-less');
    docs = [];
    for (const file of resources) {
      for (const d of parseAllDocuments(await readFile(join(DIR, file), 'utf8'))) {
        assert.deepEqual(d.errors, [], file);
        docs.push({ file, value: d.toJS() as Doc['value'] });
      }
    }
    configMap = one('ConfigMap', (d) => new ConfigMap(d));
    secret = one('Secret', (d) => new Secret(d));
    service = one('Service', (d) => new Service(d));
    sts = one('StatefulSet', (d) => new StatefulSet(d));
    podMonitor = one('PodMonitor', (d) => new PodMonitor(d));
    const containers = sts.spec?.template.spec?.containers ?? [];
    assert.equal(containers.length, 1);
    container = containers[0]!;
    sondeYaml = parse(configMap.data?.['sonde.yaml'] ?? '') as typeof sondeYaml;
  });

  it('lists every manifest of the folder in kustomization.yaml', async () => {
    const files = (await readdir(DIR)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    assert.deepEqual([...resources].sort(), files.sort());
    assert.deepEqual(docs.map((d) => d.value.kind).sort(), [
      'ConfigMap',
      'PodMonitor',
      'Secret',
      'Service',
      'StatefulSet',
    ]);
  });

  it('validates each document against its API schema', () => {
    for (const d of docs) {
      const key = `${d.value.apiVersion}/${d.value.kind}`;
      const Model = MODELS[key];
      assert.ok(Model, `${d.file}: no model for ${key}`);
      assert.doesNotThrow(() => new Model(d.value as never).validate(), `${d.file}: ${key}`);
      assert.equal(d.value.metadata?.namespace, undefined, `${d.file}: namespace-less`);
    }
  });

  it('the schema check does fail on a broken document', () => {
    const broken = structuredClone(sts.toJSON()) as { spec: { replicas: unknown } };
    broken.spec.replicas = 'three';
    assert.throws(() => new StatefulSet(broken as never).validate(), /replicas must be integer/);
  });

  it('runs N agents with the shard from the pod ordinal and n equal to the replicas', () => {
    const env = new Map((container.env ?? []).map((e) => [e.name, e]));
    const shard = env.get('SONDE_SHARD')?.value ?? '';
    const m = /^ordinal\/(\d+)$/.exec(shard);
    assert.ok(m, `SONDE_SHARD=${shard}`);
    assert.equal(Number(m[1]), sts.spec?.replicas);
    assert.equal(sts.spec?.replicas, 3);
    assert.equal(
      env.get('SONDE_SHARD_ORDINAL')?.valueFrom?.fieldRef?.fieldPath,
      "metadata.labels['apps.kubernetes.io/pod-index']",
    );
    assert.equal(sts.spec?.podManagementPolicy, 'Parallel');
    assert.equal(container.image, 'sonde:latest');
    assert.deepEqual(container.args, ['--config', '/etc/sonde/sonde.yaml']);
  });

  it('probes /healthz and /readyz on the port of the config api.bind', () => {
    const apiPort = portOf(sondeYaml.api.bind);
    assert.equal(sondeYaml.api.bind, `:${apiPort}`, 'the API on every interface of the pod');
    const named = new Map((container.ports ?? []).map((p) => [p.name, p.containerPort]));
    for (const [probe, path] of [
      [container.livenessProbe, '/healthz'],
      [container.readinessProbe, '/readyz'],
      [container.startupProbe, '/healthz'],
    ] as const) {
      assert.equal(probe?.httpGet?.path, path);
      assert.equal(named.get(String(probe?.httpGet?.port)), apiPort);
    }
  });

  it('selects the pods with a headless Service and a PodMonitor on the probe listener /metrics', () => {
    const podLabels = sts.spec?.template.metadata?.labels ?? {};
    const matches = (selector: Record<string, string> | undefined): boolean =>
      Object.entries(selector ?? {}).every(([k, v]) => podLabels[k] === v) &&
      Object.keys(selector ?? {}).length > 0;
    assert.ok(matches(sts.spec?.selector.matchLabels));
    assert.equal(service.spec?.clusterIP, 'None');
    assert.equal(sts.spec?.serviceName, service.metadata?.name);
    assert.ok(matches(service.spec?.selector));
    assert.ok(matches(podMonitor.spec.selector.matchLabels));
    const named = new Map((container.ports ?? []).map((p) => [p.name, p.containerPort]));
    for (const p of service.spec?.ports ?? []) assert.equal(named.get(String(p.targetPort)), p.port, p.name);
    const [endpoint, ...more] = podMonitor.spec.podMetricsEndpoints ?? [];
    assert.equal(more.length, 0);
    assert.equal(endpoint?.path, '/metrics');
    assert.equal(named.get(endpoint?.port ?? ''), portOf(sondeYaml.probe.bind));
  });

  it('mounts the Secret read-only where the config reads the password and the token', () => {
    const volumes = new Map((sts.spec?.template.spec?.volumes ?? []).map((v) => [v.name, v]));
    const mounts = container.volumeMounts ?? [];
    const secretMount = mounts.find((m) => volumes.get(m.name)?.secret?.secretName === secret.metadata?.name);
    assert.ok(secretMount, 'the Secret is mounted');
    assert.equal(secretMount.readOnly, true);
    assert.equal(volumes.get(secretMount.name)?.secret?.defaultMode, 0o440);
    const keys = new Set([...Object.keys(secret.stringData ?? {}), ...Object.keys(secret.data ?? {})]);
    for (const file of [sondeYaml.mysql['password-file'], sondeYaml.api['token-file']]) {
      assert.equal(posix.dirname(file), secretMount.mountPath, file);
      assert.ok(keys.has(posix.basename(file)), `${file} is a key of the Secret`);
    }
    // Credentials only as files: no variable comes from the Secret.
    assert.ok((container.env ?? []).every((e) => e.valueFrom?.secretKeyRef === undefined));
  });

  it('finds every file the config names in the ConfigMap, mounted read-only', () => {
    const volumes = new Map((sts.spec?.template.spec?.volumes ?? []).map((v) => [v.name, v]));
    const mount = (container.volumeMounts ?? []).find(
      (m) => volumes.get(m.name)?.configMap?.name === configMap.metadata?.name,
    );
    assert.ok(mount, 'the ConfigMap is mounted');
    assert.equal(mount.readOnly, true);
    const keys = Object.keys(configMap.data ?? {});
    for (const file of [container.args?.[1] ?? '', ...sondeYaml['monitor-loader'].files]) {
      assert.equal(posix.dirname(file), mount.mountPath, file);
      assert.ok(keys.includes(posix.basename(file)), `${file} is a key of the ConfigMap`);
    }
  });

  it('runs hardened: not root, read-only root file system, no privilege, no capability', () => {
    const pod = sts.spec?.template.spec;
    assert.equal(pod?.securityContext?.runAsNonRoot, true);
    assert.notEqual(pod?.securityContext?.runAsUser, 0);
    assert.equal(pod?.securityContext?.seccompProfile?.type, 'RuntimeDefault');
    assert.equal(pod?.automountServiceAccountToken, false);
    const sc = container.securityContext;
    assert.equal(sc?.readOnlyRootFilesystem, true);
    assert.equal(sc?.allowPrivilegeEscalation, false);
    assert.equal(sc?.runAsNonRoot, true);
    assert.deepEqual(sc?.capabilities?.drop, ['ALL']);
    assert.equal(sc?.capabilities?.add, undefined);
  });

  it('requests resources by the sizing formula for 300 monitors per agent', () => {
    const r = container.resources;
    assert.equal(mebibytes(r?.requests?.memory), memoryRequestMi(MONITORS_PER_AGENT));
    assert.equal(millicores(r?.requests?.cpu), cpuRequestMilli(MONITORS_PER_AGENT));
    assert.equal(mebibytes(r?.limits?.memory), 2 * memoryRequestMi(MONITORS_PER_AGENT));
    assert.equal(millicores(r?.limits?.cpu), 4 * cpuRequestMilli(MONITORS_PER_AGENT));
  });

  describe('the real sonde on the ConfigMap and Secret', () => {
    let root: string;
    let config: string;

    before(async () => {
      // The pod's /etc/sonde and /etc/sonde-secrets under a temp dir, on free ports.
      root = await mkdtemp(join(tmpdir(), 'sonde-k8s-'));
      const paths = (text: string): string =>
        text
          .replaceAll('/etc/sonde-secrets/', `${root}/secrets/`)
          .replaceAll('/etc/sonde/', `${root}/config/`);
      await mkdir(join(root, 'config'));
      await mkdir(join(root, 'secrets'));
      for (const [k, v] of Object.entries(secret.stringData ?? {}))
        await writeFile(join(root, 'secrets', k), v);
      const [api, probe] = [await freePort(), await freePort()];
      for (const [k, v] of Object.entries(configMap.data ?? {})) {
        const text = paths(v)
          .replace(`bind: "${sondeYaml.api.bind}"`, `bind: "127.0.0.1:${api}"`)
          .replace(`bind: "${sondeYaml.probe.bind}"`, `bind: "127.0.0.1:${probe}"`);
        await writeFile(join(root, 'config', k), text);
      }
      config = join(root, 'config', posix.basename(container.args?.[1] ?? ''));
      const written = await readFile(config, 'utf8');
      assert.ok(written.includes(`127.0.0.1:${api}`) && written.includes(`127.0.0.1:${probe}`));
    });

    after(async () => {
      await rm(root, { recursive: true, force: true });
    });

    /** Boot sonde as the pod would (its shard variables), print the monitors it keeps, exit. */
    async function boot(
      env: NodeJS.ProcessEnv,
    ): Promise<{ code: number | null; stdout: string; stderr: string }> {
      const shard = container.env?.find((e) => e.name === 'SONDE_SHARD')?.value ?? '';
      return runSonde(['--config', config, '--run=false', '--print-monitors'], {
        env: { SONDE_SHARD: shard, ...env },
      });
    }

    it('boots with the shard from the pod-index label', async () => {
      const r = await boot({ SONDE_SHARD_ORDINAL: '1', HOSTNAME: 'sonde-1' });
      assert.equal(r.stderr, '');
      assert.equal(r.code, 0);
      const ids = (parse(configMap.data?.['monitors.yaml'] ?? '') as { monitors: { id: string }[] }).monitors;
      assert.match(r.stdout, new RegExp(`^# shard 1/3 kept \\d+ of ${ids.length} monitors\\n`));
    });

    it('boots with the shard from the host name when the label is absent (Kubernetes before 1.28)', async () => {
      const r = await boot({ SONDE_SHARD_ORDINAL: '', HOSTNAME: 'sonde-2' });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^# shard 2\/3 kept \d+ of \d+ monitors\n/);
    });
  });

  it(
    'builds with kustomize, to the same objects',
    { skip: !existsSync('/usr/bin/kubectl') && 'no kubectl' },
    async () => {
      const { stdout } = await run('kubectl', ['kustomize', DIR], { timeout: 60_000 });
      const built = parseAllDocuments(stdout).map((d) => d.toJS() as Doc['value']);
      const names = (list: Doc['value'][]): string[] =>
        list.map((d) => `${d.kind}/${d.metadata?.name ?? ''}`).sort();
      assert.deepEqual(names(built), names(docs.map((d) => d.value)));
    },
  );
});
