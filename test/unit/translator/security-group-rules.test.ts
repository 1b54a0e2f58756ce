import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenStackError } from '../../../src/errors/openstack-error.js';
import type { SecurityGroupRule, SecurityGroupRuleCreate } from '../../../src/openstack/neutron-types.js';
import {
  DEFAULT_EGRESS,
  ruleKey,
  syncRules,
  type RuleCollection,
  type RulesSync,
} from '../../../src/translator/security-group-rules.js';

/** The rules of one group, in memory: what a Neutron group holds, without the server. */
function rulesOf(
  initial: Partial<SecurityGroupRule>[],
): RuleCollection & { rules: SecurityGroupRule[]; calls: string[] } {
  let next = 0;
  const rules = initial.map(
    (r) => ({ id: `r${next++}`, security_group_id: 'g', ethertype: 'IPv4', ...r }) as SecurityGroupRule,
  );
  const calls: string[] = [];
  return {
    rules,
    calls,
    list: () => {
      calls.push('list');
      return Promise.resolve([...rules]);
    },
    create: (input: SecurityGroupRuleCreate) => {
      calls.push(`create ${ruleKey(input)}`);
      const rule = { id: `r${next++}`, ethertype: 'IPv4', ...input } as SecurityGroupRule;
      if (rules.some((r) => ruleKey(r) === ruleKey(rule)))
        return Promise.reject(
          new OpenStackError({
            service: 'network',
            call: 'POST /v2.0/security-group-rules',
            status: 409,
            fault: { type: 'SecurityGroupRuleExists', message: 'exists' },
          }),
        );
      rules.push(rule);
      return Promise.resolve(rule);
    },
    delete: (id: string) => {
      calls.push(`delete ${id}`);
      const at = rules.findIndex((r) => r.id === id);
      if (at < 0) return Promise.resolve('already-gone');
      rules.splice(at, 1);
      return Promise.resolve('deleted');
    },
  };
}

/** How many rules a sync created and deleted. */
const counts = (sync: RulesSync): { created: number; deleted: number } => ({
  created: sync.created.length,
  deleted: sync.deleted.length,
});

const desired = [
  ...DEFAULT_EGRESS,
  { direction: 'ingress' as const, ethertype: 'IPv4' as const, remote_group_id: 'g' },
  { direction: 'ingress' as const, ethertype: 'IPv4' as const, remote_ip_prefix: '10.96.0.0/16' },
];

test('a group left with only the default rules gets the missing ones, and nothing else is touched', async () => {
  const group = rulesOf([
    { direction: 'egress', ethertype: 'IPv4', remote_ip_prefix: null },
    { direction: 'egress', ethertype: 'IPv6', remote_ip_prefix: null },
  ]);
  assert.deepEqual(counts(await syncRules(group, 'g', desired, group.rules)), { created: 2, deleted: 0 });
  assert.deepEqual(group.rules.map(ruleKey).sort(), desired.map(ruleKey).sort());
  assert.ok(!group.calls.includes('list'), 'the rules given with the group are used, not listed again');
});

test('extra and duplicated rules are deleted; a second pass changes nothing', async () => {
  const group = rulesOf([
    { direction: 'egress', ethertype: 'IPv4' },
    { direction: 'egress', ethertype: 'IPv6' },
    { direction: 'ingress', remote_group_id: 'g' },
    { direction: 'ingress', remote_group_id: 'g' },
    { direction: 'ingress', remote_ip_prefix: '10.96.0.0/16' },
    {
      direction: 'ingress',
      protocol: 'tcp',
      port_range_min: 22,
      port_range_max: 22,
      remote_ip_prefix: '0.0.0.0/0',
    },
  ]);
  assert.deepEqual(counts(await syncRules(group, 'g', desired)), { created: 0, deleted: 2 });
  assert.deepEqual(group.rules.map(ruleKey).sort(), desired.map(ruleKey).sort());
  assert.deepEqual(counts(await syncRules(group, 'g', desired)), { created: 0, deleted: 0 });
});

test('a rule that another pass created first counts as done', async () => {
  const group = rulesOf([]);
  const stale: SecurityGroupRule[] = [];
  await group.create({
    security_group_id: 'g',
    direction: 'ingress',
    ethertype: 'IPv4',
    remote_group_id: 'g',
  });
  assert.deepEqual(counts(await syncRules(group, 'g', desired, stale)), { created: 3, deleted: 0 });
  assert.deepEqual(group.rules.map(ruleKey).sort(), desired.map(ruleKey).sort());
});

test("a rule that another pass deleted first counts as done, and is not reported as this sync's delete", async () => {
  const withOpen = (): ReturnType<typeof rulesOf> =>
    rulesOf([
      { direction: 'egress', ethertype: 'IPv4' },
      { direction: 'egress', ethertype: 'IPv6' },
      { direction: 'ingress', remote_group_id: 'g' },
      { direction: 'ingress', remote_ip_prefix: '10.96.0.0/16' },
      { direction: 'ingress', protocol: 'tcp', port_range_min: 22, port_range_max: 22 },
    ]);
  const group = withOpen();
  const stale = [...group.rules];
  const open = stale.at(-1);
  assert.ok(open !== undefined);
  group.rules.splice(group.rules.indexOf(open), 1);
  const sync = await syncRules(group, 'g', desired, stale);
  assert.ok(group.calls.includes(`delete ${open.id}`));
  assert.deepEqual(counts(sync), { created: 0, deleted: 0 });
  // Not stale: the sync deletes it, and says so.
  const again = withOpen();
  assert.deepEqual((await syncRules(again, 'g', desired)).deleted.map(ruleKey), [ruleKey(open)]);
});
