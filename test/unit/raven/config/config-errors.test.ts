import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../../src/errors/raven-error.js';
import { configErrorList } from '../../../../src/errors/config-aggregate-error.js';
import { parseRavenConfig } from '../../../../src/raven/config/load-raven-config.js';

const WATCHERS = 'watchers: [{ name: pods, resource: pods }]\n';
const SINKS = 'sinks: [{ name: console, type: stdout }]\n';

interface Case {
  name: string;
  source: string;
  env?: Record<string, string>;
  path: string;
  message: RegExp;
}

/** A translator's entry, with `extra` settings. */
const translator = (extra: string) =>
  `translators: [{ name: os, type: openstack, clusterId: c1, openstack: { auth: { type: noauth, projectId: p }, endpoints: { network: "http://127.0.0.1:9696", loadBalancer: "http://127.0.0.1:9876" } }, serviceCidr: 10.96.0.0/16, podCidr: 10.244.0.0/16${extra} }]\n`;

const cases: Case[] = [
  {
    name: "a translator's resync period is 0 (off) or at least a second",
    source: translator(', resyncSeconds: 0.5'),
    path: 'translators[0].resyncSeconds',
    message: /expected 0 \(off\) or at least 1 second/,
  },
  {
    name: "a translator's resync period is a number",
    source: translator(', resyncSeconds: soon'),
    path: 'translators[0].resyncSeconds',
    message: /expected 0 \(off\) or a number of seconds of at least 1, got "soon"/,
  },
  {
    name: "the web view's path may not take the server's own paths",
    source: `server: { ui: { enabled: true, path: /metrics } }\n${WATCHERS}${SINKS}`,
    path: 'server.ui.path',
    message: /is the server's own \/metrics; choose another, such as \/ui/,
  },
  {
    name: "the web view's path is a path",
    source: `server: { ui: { enabled: true, path: ui/ } }\n${WATCHERS}${SINKS}`,
    path: 'server.ui.path',
    message: /expected a path such as \/ui: segments of .*no trailing '\/', got "ui\/"/,
  },
  {
    name: 'a short web view token is refused without being repeated',
    source: `server: { ui: { enabled: true, token: hunter2 } }\n${WATCHERS}${SINKS}`,
    path: 'server.ui.token',
    message: /^(?!.*hunter2).*must be at least 16 characters \(e\.g\. openssl rand -hex 32\); it has 7/,
  },
  {
    name: 'the web view on an address other machines reach needs a token',
    source: `server: { address: 0.0.0.0, ui: { enabled: true } }\n${WATCHERS}${SINKS}`,
    path: 'server.ui.token',
    message: /is required when server\.address \(0\.0\.0\.0\) is reachable from other machines/,
  },
  {
    name: 'the web view needs the server',
    source: `server: { enabled: false, ui: { enabled: true } }\n${WATCHERS}${SINKS}`,
    path: 'server.ui.enabled',
    message: /needs the server: server\.enabled is false/,
  },
  {
    name: 'a TLS-only syslog setting on a TCP sink says which transport it needs',
    source: `${WATCHERS}sinks: [{ name: s, type: syslog, host: 127.0.0.1, caFile: ./ca.pem }]\n`,
    path: 'sinks[0].caFile',
    message: /caFile applies only to transport: tls \(transport is tcp\)/,
  },
  {
    name: 'an unknown syslog facility lists the facilities',
    source: `${WATCHERS}sinks: [{ name: s, type: syslog, host: 127.0.0.1, facility: local8 }]\n`,
    path: 'sinks[0].facility',
    message: /expected one of kern, user, .*local7, got "local8"/,
  },
  {
    name: 'an e-mail sink with a username and no password says they go together',
    source: `${WATCHERS}sinks: [{ name: m, type: email, host: smtp.example.com, username: raven, from: raven@example.com, to: ops@example.com }]\n`,
    path: 'sinks[0].password',
    message: /username and password go together/,
  },
  {
    name: 'an e-mail sink refuses to send a password in clear text',
    source: `${WATCHERS}sinks: [{ name: m, type: email, host: 127.0.0.1, security: none, username: raven, password: s, from: raven@example.com, to: ops@example.com }]\n`,
    path: 'sinks[0].security',
    message: /a password is never sent in clear text: use security: starttls or tls/,
  },
  {
    name: 'an e-mail recipient that is not an address says what one looks like',
    source: `${WATCHERS}sinks: [{ name: m, type: email, host: 127.0.0.1, from: raven@example.com, to: [ops@example.com, oncall] }]\n`,
    path: 'sinks[0].to[1]',
    message: /expected an e-mail address like raven@example\.com or "Raven <raven@example\.com>"/,
  },
  {
    name: 'an e-mail security mode lists the modes',
    source: `${WATCHERS}sinks: [{ name: m, type: email, host: 127.0.0.1, security: ssl, from: raven@example.com, to: ops@example.com }]\n`,
    path: 'sinks[0].security',
    message: /expected one of starttls, tls, none, got "ssl"/,
  },
  {
    name: 'an e-mail subject with an unknown placeholder names it',
    source: `${WATCHERS}sinks: [{ name: m, type: email, host: 127.0.0.1, from: raven@example.com, to: ops@example.com, subject: "{{kind}} changed" }]\n`,
    path: 'sinks[0].subject',
    message: /placeholder \{\{kind\}\}.*unknown field "kind"/,
  },
  {
    name: 'an unknown watcher type lists the types and suggests the nearest',
    source: `watchers: [{ name: e, type: event }]\n${SINKS}`,
    path: 'watchers[0].type',
    message: /expected one of resource, events, got "event" \(did you mean "events"\?\)/,
  },
  {
    name: 'an events watcher rejects predicates and lists its own settings',
    source: `watchers: [{ name: e, type: events, predicates: { ignoreStatusOnly: true } }]\n${SINKS}`,
    path: 'watchers[0].predicates',
    message: /unknown key "predicates"; valid keys: .*maxEventAgeSeconds, dedupWindowSeconds, enrich/,
  },
  {
    name: 'an events watcher names the Event APIs it can read',
    source: `watchers: [{ name: e, type: events, api: v2 }]\n${SINKS}`,
    path: 'watchers[0].api',
    message: /expected one of auto, events\.k8s\.io\/v1, v1, got "v2"/,
  },
  {
    name: 'a negative de-duplication window is rejected with what 0 means',
    source: `watchers: [{ name: e, type: events, dedupWindowSeconds: -1 }]\n${SINKS}`,
    path: 'watchers[0].dedupWindowSeconds',
    message: /expected a number of seconds \(0 or more; 0 turns de-duplication off\), got -1/,
  },
  {
    name: 'a bad enum value lists the valid ones and suggests the nearest',
    source: `logLevel: warning\n${WATCHERS}${SINKS}`,
    path: 'logLevel',
    message: /expected one of trace, debug, info, warn, error, got "warning" \(did you mean "warn"\?\)/,
  },
  {
    name: 'an unknown sink type lists every type',
    source: `${WATCHERS}sinks: [{ name: chat, type: slak, url: "https://x.example.com" }]\n`,
    path: 'sinks[0].type',
    message:
      /expected one of stdout, file, webhook, slack, mattermost, teams, discord, cloudevents, postgres, nats, redis, loki, syslog, email, got "slak" \(did you mean "slack"\?\)/,
  },
  {
    name: 'a wrong type says what was expected and what was given',
    source: `server: { port: [9090] }\n${WATCHERS}${SINKS}`,
    path: 'server.port',
    message: /expected an integer from 0 to 65535, got a list/,
  },
  {
    name: 'a number out of range gives the range',
    source: `server: { port: 70000 }\n${WATCHERS}${SINKS}`,
    path: 'server.port',
    message: /expected an integer from 0 to 65535, got 70000/,
  },
  {
    name: 'a missing required field says it is missing and what it should be',
    source: `watchers: [{ name: pods }]\n${SINKS}`,
    path: 'watchers[0].resource',
    message: /missing; expected a resource such as pods, deployments\.apps/,
  },
  {
    name: 'a missing watchers list is required',
    source: SINKS,
    path: 'watchers',
    message: /missing; expected a non-empty list of watchers/,
  },
  {
    name: 'an unknown key suggests the near miss',
    source: `${WATCHERS}sinks: [{ name: h, type: webhook, url: "https://x.example.com", timeout: 3 }]\n`,
    path: 'sinks[0].timeout',
    message: /unknown key "timeout" \(did you mean "timeoutSeconds"\?\); valid keys: .*timeoutSeconds/,
  },
  {
    name: 'an unknown top-level key suggests the near miss',
    source: `wacthers: []\n${WATCHERS}${SINKS}`,
    path: 'wacthers',
    message: /unknown key "wacthers" \(did you mean "watchers"\?\)/,
  },
  {
    name: 'a bad URL shows the shape of a good one',
    source: `${WATCHERS}sinks: [{ name: s, type: slack, url: "hooks.slack.com/x" }]\n`,
    path: 'sinks[0].url',
    message: /expected a URL like https:\/\/host\/path; the value given is not one \(not shown/,
  },
  {
    name: 'a header Raven sets itself cannot be configured',
    source: `${WATCHERS}sinks: [{ name: h, type: webhook, url: "https://x.example.com", headers: { Content-Type: text/plain } }]\n`,
    path: 'sinks[0].headers.Content-Type',
    message: /header "Content-Type" is set by Raven and cannot be configured/,
  },
  {
    name: 'a listen address that is neither an IP nor a host name is rejected',
    source: `server: { address: "local host" }\n${WATCHERS}${SINKS}`,
    path: 'server.address',
    message:
      /expected an IP address or host name, such as 127\.0\.0\.1, 0\.0\.0\.0, :: or localhost, got "local host"/,
  },
  {
    name: 'a URL of another scheme is rejected',
    source: `${WATCHERS}sinks: [{ name: s, type: webhook, url: "ftp://x.example.com/" }]\n`,
    path: 'sinks[0].url',
    message: /expected a URL like https:\/\/host\/path/,
  },
  {
    name: 'a bad label selector gives the position in the selector',
    source: `watchers: [{ name: pods, resource: pods, labelSelector: "app in (web" }]\n${SINKS}`,
    path: 'watchers[0].labelSelector',
    message: /invalid label selector "app in \(web" at position 11: expected ',' or '\)' after a value/,
  },
  {
    name: 'a bad field selector gives the position in the selector',
    source: `watchers: [{ name: pods, resource: pods, fieldSelector: "status.phase" }]\n${SINKS}`,
    path: 'watchers[0].fieldSelector',
    message: /invalid field selector "status\.phase" at position 0: term "status\.phase" has no operator/,
  },
  {
    name: 'a bad namespace pattern names the list entry',
    source: `watchers: [{ name: pods, resource: pods, namespaces: [team-a, "team_*"] }]\n${SINKS}`,
    path: 'watchers[0].namespaces[1]',
    message: /pattern "team_\*" may contain only a-z, 0-9, '-', '\*'/,
  },
  {
    name: 'a namespace list that excludes everything it includes is rejected',
    source: `watchers: [{ name: pods, resource: pods, namespaces: [a, "!a"] }]\n${SINKS}`,
    path: 'watchers[0].namespaces',
    message: /every namespace listed is also excluded/,
  },
  {
    name: 'a route naming an unknown watcher lists the defined ones',
    source: `${WATCHERS}${SINKS}routes: [{ watchers: [pod], sinks: "*" }]\n`,
    path: 'routes[0].watchers[0]',
    message: /unknown watcher "pod" \(did you mean "pods"\?\); defined watchers: pods, or "\*" for all/,
  },
  {
    name: 'a route naming an unknown sink lists the defined ones',
    source: `${WATCHERS}${SINKS}routes: [{ watchers: "*", sinks: slack }]\n`,
    path: 'routes[0].sinks',
    message: /unknown sink "slack"; defined sinks: console/,
  },
  {
    name: 'duplicate names point at the second and name the first',
    source: `${WATCHERS}sinks: [{ name: out, type: stdout }, { name: out, type: stdout }]\n`,
    path: 'sinks[1].name',
    message: /duplicate name "out", already used by sinks\[0\]/,
  },
  {
    name: 'a name that is not a DNS label says which characters are allowed',
    source: `watchers: [{ name: My_Pods, resource: pods }]\n${SINKS}`,
    path: 'watchers[0].name',
    message: /expected a name of 1 to 63 characters a-z, 0-9 and '-'/,
  },
  {
    name: 'a missing environment variable names the variable',
    source: `${WATCHERS}sinks: [{ name: s, type: slack, url: "\${SLACK_WEBHOOK_URL}" }]\n`,
    path: 'sinks[0].url',
    message:
      /environment variable SLACK_WEBHOOK_URL is not set; set it, or give a default with \$\{SLACK_WEBHOOK_URL:-value\}/,
  },
  {
    name: 'an unclosed variable reference is an error',
    source: `${WATCHERS}sinks: [{ name: s, type: slack, url: "https://\${HOST" }]\n`,
    path: 'sinks[0].url',
    message: /unclosed "\$\{" at position 8/,
  },
  {
    name: 'a substituted number that is not a number is still a type error',
    source: `server: { port: "\${PORT}" }\n${WATCHERS}${SINKS}`,
    env: { PORT: 'http' },
    path: 'server.port',
    message: /expected an integer from 0 to 65535, got the value of \$\{PORT\} \(not shown\)/,
  },
  {
    name: 'an unknown template placeholder suggests the field',
    source: `${WATCHERS}sinks: [{ name: s, type: teams, url: "https://t.example.com", template: "{{resouce.kind}}" }]\n`,
    path: 'sinks[0].template',
    message:
      /placeholder \{\{resouce\.kind\}\} at position 0: unknown field "resouce" \(did you mean "resource"\?\)/,
  },
  {
    name: 'leader election timings that leave no room for renewal are rejected',
    source: `leaderElection: { leaseDurationSeconds: 10, renewDeadlineSeconds: 10 }\n${WATCHERS}${SINKS}`,
    path: 'leaderElection.renewDeadlineSeconds',
    message: /must be less than leaseDurationSeconds \(10\), got 10/,
  },
  {
    name: 'sharding without the shared checkpoint is rejected',
    source: `sharding: { enabled: true }\n${WATCHERS}${SINKS}`,
    path: 'checkpoint.type',
    message: /sharding.enabled needs the checkpoint the replicas share, type postgres/,
  },
  {
    name: 'sharding and leader election together are rejected',
    source: `checkpoint: { type: postgres, url: 'postgres://raven@127.0.0.1/raven' }\nsharding: { enabled: true }\nleaderElection: { enabled: true }\n${WATCHERS}${SINKS}`,
    path: 'leaderElection.enabled',
    message: /choose one/,
  },
  {
    name: 'a sharding group that is not a short DNS label is rejected',
    source: `sharding: { group: Raven_Shards }\n${WATCHERS}${SINKS}`,
    path: 'sharding.group',
    message: /a DNS label of at most 46 characters/,
  },
  {
    name: 'sharding timings that leave no room for renewal are rejected',
    source: `sharding: { leaseDurationSeconds: 6, renewDeadlineSeconds: 4, retryPeriodSeconds: 4 }\n${WATCHERS}${SINKS}`,
    path: 'sharding.retryPeriodSeconds',
    message: /must be well below renewDeadlineSeconds \(4\)/,
  },
  {
    name: 'a backoff that starts above its maximum is rejected',
    source: `${WATCHERS}sinks: [{ name: o, type: stdout, delivery: { initialBackoffMs: 5000, maxBackoffMs: 1000 } }]\n`,
    path: 'sinks[0].delivery.initialBackoffMs',
    message: /initialBackoffMs \(5000\) must not exceed maxBackoffMs \(1000\)/,
  },
  {
    name: 'a config with no sinks and no handlers is rejected',
    source: WATCHERS,
    path: 'sinks',
    message: /no sinks and no handlers/,
  },
  {
    name: 'a top level that is not a mapping is rejected',
    source: '- watchers\n',
    path: '',
    message: /expected a mapping of settings, got a list/,
  },
  {
    name: 'a postgres table name Raven cannot create says what a valid name is',
    source: `${WATCHERS}sinks: [{ name: db, type: postgres, connectionString: "postgres://raven@db/raven", table: Changes }]\n`,
    path: 'sinks[0].table',
    message:
      /expected a table or schema name of 1 to 63 characters a-z, 0-9 and _, not starting with a digit, got "Changes"/,
  },
  {
    name: 'a postgres connection string that is not a URI shows the form expected',
    source: `${WATCHERS}sinks: [{ name: db, type: postgres, connectionString: "host=db password=hunter2" }]\n`,
    path: 'sinks[0].connectionString',
    message:
      /^(?!.*hunter2).*expected a URI like postgres:\/\/user:password@host:5432\/database .*not shown: it may hold a password/,
  },
  {
    name: 'a postgres current-state table may not be the log table',
    source: `${WATCHERS}sinks: [{ name: db, type: postgres, connectionString: "postgres://db/raven", currentStateTable: raven_changes }]\n`,
    path: 'sinks[0].currentStateTable',
    message: /currentStateTable must differ from table \("raven_changes"\)/,
  },
  {
    name: 'a nats subject template with a wildcard says why it cannot be a subject',
    source: `${WATCHERS}sinks: [{ name: bus, type: nats, servers: "nats://127.0.0.1:4222", subject: "raven.*.{{namespace}}" }]\n`,
    path: 'sinks[0].subject',
    message: /a subject may not contain spaces or the wildcards \* and >/,
  },
  {
    name: 'a nats server that is not a nats URL is reported without showing it',
    source: `${WATCHERS}sinks: [{ name: bus, type: nats, servers: ["nats://a:4222", "http://user:hunter2@b"] }]\n`,
    path: 'sinks[0].servers[1]',
    message: /^(?!.*hunter2).*expected a URI like nats:\/\/host:4222 \(scheme nats:\/\/ or tls:\/\/\)/,
  },
  {
    name: 'a redis URL of another scheme is reported without showing it',
    source: `${WATCHERS}sinks: [{ name: stream, type: redis, url: "http://:hunter2@cache:6379" }]\n`,
    path: 'sinks[0].url',
    message:
      /^(?!.*hunter2).*expected a URI like redis:\/\/user:password@host:6379\/0 \(scheme redis:\/\/ or rediss:\/\/\)/,
  },
  {
    name: "a loki label may not replace one of Raven's own",
    source: `${WATCHERS}sinks: [{ name: logs, type: loki, url: "http://loki:3100", labels: { namespace: x } }]\n`,
    path: 'sinks[0].labels.namespace',
    message: /label "namespace" is set by Raven on every stream; choose another name/,
  },
  {
    name: 'a loki label name must be a Prometheus label name',
    source: `${WATCHERS}sinks: [{ name: logs, type: loki, url: "http://loki:3100", labels: { team-name: x } }]\n`,
    path: 'sinks[0].labels.team-name',
    message: /label name "team-name" is not valid: use letters, digits and _, not starting with a digit/,
  },
  {
    name: 'a loki sink takes basic authentication or a bearer token, not both',
    source: `${WATCHERS}sinks: [{ name: logs, type: loki, url: "http://loki:3100", username: u, password: p, bearerToken: t }]\n`,
    path: 'sinks[0].bearerToken',
    message: /give username and password, or bearerToken, not both/,
  },
  {
    name: 'a ui token written as a YAML number is refused without echoing it',
    source: `${WATCHERS}server: { address: 0.0.0.0, ui: { enabled: true, token: 918273645546372819 } }\n`,
    path: 'server.ui.token',
    message: /^(?!.*9182736455).*expected a string, got a number \(not shown: it is a credential\)/,
  },
  {
    name: 'a loki password written as a YAML number is refused without echoing it',
    source: `${WATCHERS}sinks: [{ name: logs, type: loki, url: "http://loki:3100", username: u, password: 271828182845 }]\n`,
    path: 'sinks[0].password',
    message: /^(?!.*271828).*got a number \(not shown: it is a credential\)/,
  },
  {
    name: 'a redis maxLen below 1 gives the lower bound',
    source: `${WATCHERS}sinks: [{ name: stream, type: redis, url: "redis://cache:6379", maxLen: 0 }]\n`,
    path: 'sinks[0].maxLen',
    message: /expected an integer of at least 1 entries, got 0/,
  },
];

for (const c of cases) {
  test(c.name, () => {
    let caught: unknown;
    try {
      parseRavenConfig(c.source, { file: 'conf/raven.yaml', env: c.env ?? {}, baseDir: '/' });
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof ConfigError, 'expected a ConfigError');
    const errors = configErrorList(caught);
    const error = errors.find((e) => e.path === c.path);
    assert.ok(error, `no error at ${c.path}; got:\n${caught.message}`);
    assert.equal(error.file, 'conf/raven.yaml');
    const prefix = c.path === '' ? 'conf/raven.yaml: ' : `conf/raven.yaml: ${c.path}: `;
    assert.ok(error.message.startsWith(prefix), error.message);
    assert.match(error.message, c.message);
    assert.equal(error.code, 'ERR_CONFIG');
  });
}

test('a field whose variable is missing reports only that, not a bad URL as well', () => {
  try {
    parseRavenConfig(`${WATCHERS}sinks: [{ name: s, type: slack, url: "\${MISSING}" }]\n`, { env: {} });
    assert.fail('expected an error');
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    assert.deepEqual(
      configErrorList(error).map((e) => e.path),
      ['sinks[0].url'],
    );
  }
});

test('a YAML syntax error gives the line and column', () => {
  try {
    parseRavenConfig('watchers:\n  - name: pods\n    resource: [pods\nsinks: []\n', {
      file: 'raven.yaml',
      env: {},
    });
    assert.fail('expected an error');
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    assert.match(error.message, /^raven\.yaml: YAML syntax error at line \d+, column \d+: /);
  }
});

test('a duplicate key in a mapping is a YAML error with its line', () => {
  try {
    parseRavenConfig(`logLevel: info\nlogLevel: debug\n${WATCHERS}${SINKS}`, { file: 'raven.yaml', env: {} });
    assert.fail('expected an error');
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    assert.match(
      error.message,
      /^raven\.yaml: YAML syntax error at line 2, column 1: Map keys must be unique/,
    );
  }
});

test('each error carries the line and column of its field', () => {
  try {
    parseRavenConfig(`${WATCHERS}sinks:\n  - name: hook\n    type: webhook\n    url: nope\n`, { env: {} });
    assert.fail('expected an error');
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    assert.match(error.message, /\(line 5, column 5\)$/);
  }
});

test("a translator's resync period defaults to 60 seconds, and 0 turns it off", () => {
  const resync = (extra: string) =>
    parseRavenConfig(translator(extra), { env: {}, baseDir: '/' }).translators[0]?.resyncSeconds;
  assert.equal(resync(''), 60);
  assert.equal(resync(', resyncSeconds: 0'), 0);
  assert.equal(resync(', resyncSeconds: 300'), 300);
});
