import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../../src/errors/raven-error.js';
import { ConfigAggregateError, configErrorList } from '../../../../src/errors/config-aggregate-error.js';
import {
  loadRavenConfig,
  parseRavenConfig,
  type ParseRavenConfigOptions,
} from '../../../../src/raven/config/load-raven-config.js';

const FILE = 'raven.yaml';
const options: ParseRavenConfigOptions = {
  file: FILE,
  baseDir: '/etc/raven',
  homeDir: '/home/me',
  env: {},
  defaultIdentity: 'host-1',
};

const minimal = `
watchers:
  - { name: pods, resource: pods }
sinks:
  - { name: console, type: stdout }
`;

function errorsOf(source: string, env: Record<string, string> = {}): readonly ConfigError[] {
  try {
    parseRavenConfig(source, { ...options, env });
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return configErrorList(error);
  }
  assert.fail('expected the config to be rejected');
}

test('a minimal config gets every default', () => {
  const config = parseRavenConfig(minimal, options);
  assert.equal(config.logLevel, 'info');
  assert.deepEqual(config.server, {
    enabled: true,
    address: '127.0.0.1',
    port: 9479,
    ui: { enabled: false, path: '/ui' },
  });
  assert.deepEqual(config.checkpoint, { type: 'memory' });
  assert.deepEqual(config.leaderElection, {
    enabled: false,
    namespace: 'raven',
    name: 'raven',
    identity: 'host-1',
    leaseDurationSeconds: 15,
    renewDeadlineSeconds: 10,
    retryPeriodSeconds: 2,
  });
  assert.deepEqual(config.diff, { ignore: [], replaceDefaults: false, maxEntries: 200 });
  assert.deepEqual(config.shutdown, { drainTimeoutSeconds: 10 });
  assert.deepEqual(config.watchers, [
    {
      name: 'pods',
      type: 'resource',
      resource: 'pods',
      namespaces: [],
      events: ['added', 'modified', 'deleted'],
      predicates: { generationChanged: false, fields: [], ignoreStatusOnly: false },
      initial: 'none',
      dropManagedFields: true,
    },
  ]);
  assert.deepEqual(config.sinks, [
    {
      name: 'console',
      type: 'stdout',
      format: 'auto',
      gapNotices: false,
      delivery: {
        maxAttempts: 8,
        initialBackoffMs: 500,
        maxBackoffMs: 60000,
        maxBacklog: 10000,
        concurrency: 4,
        maxRetryAfterMs: 900000,
      },
    },
  ]);
  assert.deepEqual(config.routes, [
    {
      watchers: ['pods'],
      sinks: ['console'],
      events: ['added', 'modified', 'deleted'],
      drop: [],
      match: [],
      select: 'all',
      routes: [],
    },
  ]);
  assert.deepEqual(config.handlers, []);
});

test('a full config parses to the typed values it spells out', () => {
  const config = parseRavenConfig(
    `
kubeconfig: ~/.kube/other
context: ctx
logLevel: debug
server: { enabled: false, address: 0.0.0.0, port: 0, ui: { path: /raven/view, token: abcdefghijklmnop } }
checkpoint: { path: state/raven.db }
leaderElection: { enabled: true, namespace: ops, name: raven-a, identity: me, leaseDurationSeconds: 30, renewDeadlineSeconds: 20, retryPeriodSeconds: 4 }
diff: { ignore: ["status.conditions[*].lastHeartbeatTime"], maxEntries: 50 }
shutdown: { drainTimeoutSeconds: 0 }
watchers:
  - name: deployments
    resource: deployments.apps
    namespaces: team-a
    labelSelector: "app in (web,api)"
    fieldSelector: "metadata.name!=x"
    events: [deleted, added, deleted]
    predicates: { generationChanged: true, fields: [spec.replicas], ignoreStatusOnly: true }
    initial: added
    dropManagedFields: false
  - { name: pods, resource: pods }
sinks:
  - { name: audit, type: file, path: /var/log/raven.jsonl, rotate: { maxFiles: 2 } }
  - { name: hook, type: webhook, url: "https://h.example.com/x", secret: s, headers: { X-A: b }, timeoutSeconds: 2.5 }
  - { name: chat, type: discord, url: "https://d.example.com/x", template: "{{type}} {{resource.kind}} {{object.metadata.name}}" }
  - { name: ce, type: cloudevents, url: "http://broker/", source: /raven/a, typePrefix: x.y, delivery: { maxAttempts: 1, deadLetterPath: dl.jsonl } }
routes:
  - { watchers: deployments, sinks: "*", events: [modified] }
  - { watchers: ["*"], sinks: [audit] }
handlers:
  - { name: tr, module: my-translator-package, watchers: pods, options: { depth: 2 } }
`,
    options,
  );
  assert.equal(config.kubeconfig, '/home/me/.kube/other');
  assert.equal(config.context, 'ctx');
  assert.deepEqual(config.server, {
    enabled: false,
    address: '0.0.0.0',
    port: 0,
    ui: { enabled: false, path: '/raven/view', token: 'abcdefghijklmnop' },
  });
  assert.deepEqual(config.checkpoint, { type: 'sqlite', path: '/etc/raven/state/raven.db' });
  assert.equal(config.leaderElection.identity, 'me');
  assert.deepEqual(config.diff.ignore, ['status.conditions[*].lastHeartbeatTime']);
  const [deployments] = config.watchers;
  assert.ok(deployments?.type === 'resource');
  assert.deepEqual(deployments.namespaces, ['team-a']);
  assert.deepEqual(deployments.events, ['added', 'deleted']);
  assert.deepEqual(deployments.predicates, {
    generationChanged: true,
    fields: ['spec.replicas'],
    ignoreStatusOnly: true,
  });
  assert.equal(deployments.initial, 'added');
  assert.equal(deployments.dropManagedFields, false);
  const [audit, hook, , ce] = config.sinks;
  assert.deepEqual(audit?.type === 'file' && audit.rotate, { maxBytes: 104857600, maxFiles: 2 });
  assert.equal(audit?.type === 'file' && audit.fsync, 'always');
  assert.equal(hook?.type === 'webhook' && hook.timeoutSeconds, 2.5);
  assert.deepEqual(hook?.type === 'webhook' && hook.headers, { 'X-A': 'b' });
  assert.equal(ce?.type === 'cloudevents' && ce.typePrefix, 'x.y');
  assert.equal(ce?.delivery.deadLetterPath, '/etc/raven/dl.jsonl');
  assert.deepEqual(config.routes, [
    {
      watchers: ['deployments'],
      sinks: ['audit', 'hook', 'chat', 'ce'],
      events: ['modified'],
      drop: [],
      match: [],
      select: 'all',
      routes: [],
    },
    {
      watchers: ['deployments', 'pods'],
      sinks: ['audit'],
      events: ['added', 'modified', 'deleted'],
      drop: [],
      match: [],
      select: 'all',
      routes: [],
    },
  ]);
  assert.deepEqual(config.handlers, [
    {
      name: 'tr',
      module: 'my-translator-package',
      watchers: ['pods'],
      events: ['added', 'modified', 'deleted'],
      options: { depth: 2 },
    },
  ]);
});

test('relative paths resolve against the config file directory, not the working directory', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'raven-config-'));
  try {
    const file = join(dir, 'raven.yaml');
    await writeFile(
      file,
      `
checkpoint: { path: ./state.db }
watchers: [{ name: pods, resource: pods }]
sinks:
  - { name: out, type: file, path: ../out/events.jsonl, delivery: { deadLetterPath: dead.jsonl } }
handlers:
  - { name: h, module: ./handlers/h.mjs }
  - { name: abs, module: /opt/h.mjs }
`,
    );
    const config = await loadRavenConfig(file, { env: {} });
    assert.deepEqual(config.checkpoint, { type: 'sqlite', path: join(dir, 'state.db') });
    const [out] = config.sinks;
    assert.equal(out?.type === 'file' && out.path, join(dir, '..', 'out', 'events.jsonl'));
    assert.equal(out?.delivery.deadLetterPath, join(dir, 'dead.jsonl'));
    assert.deepEqual(
      config.handlers.map((h) => h.module),
      [join(dir, 'handlers', 'h.mjs'), '/opt/h.mjs'],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("${RAVEN_STATE_DIR} is the config file's own state directory under XDG_STATE_HOME, or the one the environment chooses", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'raven-config-'));
  try {
    const yaml = `
checkpoint: { path: '\${RAVEN_STATE_DIR}/raven-state.db' }
watchers: [{ name: pods, resource: pods }]
sinks: [{ name: out, type: file, path: '\${RAVEN_STATE_DIR}/events.jsonl' }]
`;
    await writeFile(join(dir, 'chat-alerts.yaml'), yaml);
    await writeFile(join(dir, 'team-namespaces.yml'), yaml);
    const chat = await loadRavenConfig(join(dir, 'chat-alerts.yaml'), {
      env: { XDG_STATE_HOME: '/x/state' },
    });
    assert.deepEqual(chat.checkpoint, { type: 'sqlite', path: '/x/state/raven/chat-alerts/raven-state.db' });
    const [out] = chat.sinks;
    assert.equal(out?.type === 'file' && out.path, '/x/state/raven/chat-alerts/events.jsonl');
    const team = await loadRavenConfig(join(dir, 'team-namespaces.yml'), { env: {}, homeDir: '/home/u' });
    assert.deepEqual(team.checkpoint, {
      type: 'sqlite',
      path: '/home/u/.local/state/raven/team-namespaces/raven-state.db',
    });
    const chosen = await loadRavenConfig(join(dir, 'chat-alerts.yaml'), {
      env: { XDG_STATE_HOME: '/x/state', RAVEN_STATE_DIR: '/var/lib/raven' },
    });
    assert.deepEqual(chosen.checkpoint, { type: 'sqlite', path: '/var/lib/raven/raven-state.db' });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a missing file is a config error naming the file', async () => {
  await assert.rejects(loadRavenConfig('/nonexistent/raven.yaml', { env: {} }), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.equal(error.file, '/nonexistent/raven.yaml');
    assert.match(error.message, /^\/nonexistent\/raven\.yaml: cannot read the config file: no such file/);
    return true;
  });
});

test('environment variables are substituted, with defaults and the $${} escape', () => {
  const config = parseRavenConfig(
    `
server: { port: "\${PORT}", enabled: "\${ENABLED:-true}" }
watchers: [{ name: pods, resource: pods, namespaces: "\${NS:-default}" }]
sinks:
  - name: hook
    type: webhook
    url: https://\${HOST}/hooks/\${EMPTY:-fallback}
    secret: "\${SECRET}"
    headers: { X-Literal: "$\${NOT_SUBSTITUTED}", X-Mixed: "a-\${SECRET}-$\${B}" }
`,
    { ...options, env: { PORT: '8081', HOST: 'h.example.com', EMPTY: '', SECRET: '0123' } },
  );
  assert.equal(config.server.port, 8081);
  assert.equal(config.server.enabled, true);
  assert.deepEqual(config.watchers[0]?.namespaces, ['default']);
  const [hook] = config.sinks;
  assert.ok(hook?.type === 'webhook');
  assert.equal(hook.url, 'https://h.example.com/hooks/fallback');
  assert.equal(hook.secret, '0123', 'a secret of digits stays a string');
  assert.deepEqual(hook.headers, { 'X-Literal': '${NOT_SUBSTITUTED}', 'X-Mixed': 'a-0123-${B}' });
});

test('a substituted value that is wrong is described by its variable, never echoed', () => {
  const [error] = errorsOf(
    `
server: { address: "\${ADDRESS}" }
watchers: [{ name: pods, resource: pods }]
sinks: [{ name: out, type: stdout }]
`,
    { ADDRESS: 'hunter2 not an address' },
  );
  assert.ok(error);
  assert.equal(error.path, 'server.address');
  assert.match(error.message, /got the value of \$\{ADDRESS\} \(not shown\)/);
  assert.doesNotMatch(error.message, /hunter2/);
});

test('warnings point at sinks no route feeds, watchers whose events go nowhere and an implicit memory checkpoint', () => {
  const warnings: string[] = [];
  parseRavenConfig(
    `
watchers: [{ name: pods, resource: pods }, { name: nodes, resource: nodes, events: [added] }]
sinks: [{ name: a, type: stdout }, { name: b, type: stdout }]
routes: [{ watchers: nodes, sinks: a, events: [deleted] }]
`,
    { ...options, onWarning: (warning) => warnings.push(warning.message) },
  );
  assert.deepEqual(warnings, [
    'raven.yaml: watchers[0]: watcher "pods" is in no route and feeds no handler, so its events go nowhere (line 2, column 12)',
    'raven.yaml: sinks[1]: sink "b" is in no route, so it receives nothing (line 3, column 36)',
    'raven.yaml: routes[0].events: watcher "nodes" emits only added, none of which this route passes (line 4, column 39)',
    "raven.yaml: checkpoint: not set, so checkpoints are kept in memory: changes made while raven is stopped are not reported after a restart; set checkpoint: { path: '${RAVEN_STATE_DIR}/raven-state.db' } to keep them",
  ]);
});

test('all problems are reported together, in file order, as one aggregate error', () => {
  try {
    parseRavenConfig(
      `
logLevel: loud
watchers:
  - { name: pods, resource: pods, events: [created] }
sinks:
  - { name: hook, type: webhook, url: nope }
`,
      options,
    );
    assert.fail('expected an error');
  } catch (error) {
    assert.ok(error instanceof ConfigAggregateError);
    assert.equal(error.code, 'ERR_CONFIG');
    assert.deepEqual(
      error.errors.map((e) => e.path),
      ['logLevel', 'watchers[0].events[0]', 'sinks[0].url'],
    );
    assert.equal(
      error.message.split('\n')[0],
      'raven.yaml: 3 problems in the configuration:',
      'one header line, then one line per problem',
    );
    assert.equal(error.message.split('\n').length, 4);
  }
});

test('a PostgreSQL checkpoint takes its URL from the environment and gets defaults', () => {
  const config = parseRavenConfig(
    `${minimal}checkpoint: { type: postgres, url: '\${RAVEN_CHECKPOINT_URL}' }\n`,
    { ...options, env: { RAVEN_CHECKPOINT_URL: 'postgres://raven:pw@db:5432/raven' } },
  );
  assert.deepEqual(config.checkpoint, {
    type: 'postgres',
    url: 'postgres://raven:pw@db:5432/raven',
    schema: 'raven',
    timeoutSeconds: 10,
  });
});

test('a bad PostgreSQL checkpoint is refused field by field, never showing the URL', () => {
  const errors = errorsOf(
    `${minimal}checkpoint: { type: postgres, url: 'mysql://u:hunter2@db/x', schema: 'Raven-1', flushIntervalMs: -1, pool: 3 }\n`,
  );
  const byPath = new Map(errors.map((e) => [e.path, e.message]));
  assert.match(
    byPath.get('checkpoint.url') ?? '',
    /expected a URI like postgres:\/\/user:password@host:5432\/database/,
  );
  assert.doesNotMatch(byPath.get('checkpoint.url') ?? '', /hunter2/);
  assert.match(byPath.get('checkpoint.schema') ?? '', /a table or schema name of 1 to 63 characters/);
  assert.match(byPath.get('checkpoint.flushIntervalMs') ?? '', /an integer of at least 0/);
  assert.ok(
    errors.some((e) => e.path.startsWith('checkpoint') && /pool/.test(e.message)),
    errors.map((e) => `${e.path}: ${e.message}`).join('\n'),
  );
});

test('a PostgreSQL checkpoint without a URL names the missing field', () => {
  const [error] = errorsOf(`${minimal}checkpoint: { type: postgres }\n`);
  assert.equal(error?.path, 'checkpoint.url');
});

test('a file sink delivers 256 changes at once by default, as the streaming sinks do: one write and one fsync covers them', () => {
  const config = parseRavenConfig(
    `
watchers:
  - { name: pods, resource: pods }
sinks:
  - { name: archive, type: file, path: events.jsonl }
  - { name: slow, type: file, path: slow.jsonl, delivery: { concurrency: 1 } }
  - { name: console, type: stdout }
`,
    options,
  );
  assert.deepEqual(
    config.sinks.map((sink) => [sink.name, sink.delivery.concurrency]),
    [
      ['archive', 256],
      ['slow', 1],
      ['console', 4],
    ],
  );
});
