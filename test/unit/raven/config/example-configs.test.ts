import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadRavenConfig } from '../../../../src/raven/config/load-raven-config.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), '../../../../examples/configs');
const files = readdirSync(dir).filter((name) => name.endsWith('.yaml'));

// What the examples' own comments tell the user to set.
const env = {
  WEBHOOK_URL: 'https://audit.example.com/raven',
  WEBHOOK_SECRET: 'secret',
  SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/X',
  TEAMS_WEBHOOK_URL: 'https://example.webhook.office.com/x',
  PG_URL: 'postgres://raven:secret@db.example.com:5432/raven',
  NATS_URL: 'nats://nats.example.com:4222',
  REDIS_URL: 'redis://cache.example.com:6379/0',
};

test('there are example configs to check', () => {
  assert.ok(files.length >= 4, `found ${files.join(', ')}`);
});

for (const name of files) {
  test(`${name} validates without warnings`, async () => {
    const warnings: string[] = [];
    const config = await loadRavenConfig(join(dir, name), {
      env,
      onWarning: (warning) => warnings.push(warning.message),
    });
    assert.ok(config.watchers.length > 0);
    assert.ok(config.sinks.length + config.handlers.length > 0);
    assert.deepEqual(warnings, []);
  });
}
