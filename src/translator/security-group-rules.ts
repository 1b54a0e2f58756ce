/**
 * Security-group rules, level-triggered: the rules of a group the translator owns are made equal
 * to a desired set on every pass — extras deleted, missing ones created — so a rule create that
 * timed out, or a crash between a group's create and its rules, is repaired by the next pass
 * instead of being lost for good. A rule is identified by what it allows (direction, ethertype,
 * protocol, port range, remote prefix or group); Neutron has no rule update, so a changed rule is
 * a delete plus a create.
 */
import { isConflict, openStackFaultType } from '../errors/classify.js';
import type { SecurityGroupRule, SecurityGroupRuleCreate } from '../openstack/neutron-types.js';
import type { DeleteOutcome, Filters } from '../openstack/rest-collection.js';

/** What a rule allows; `security_group_id` is the group's, given separately. */
export type RuleSpec = Omit<SecurityGroupRuleCreate, 'security_group_id' | 'description' | 'project_id'>;

/** The part of the rules collection this needs. */
export interface RuleCollection {
  list(filters?: Filters): Promise<SecurityGroupRule[]>;
  create(input: SecurityGroupRuleCreate): Promise<SecurityGroupRule>;
  delete(id: string): Promise<DeleteOutcome>;
}

/** Neutron's own rules for a new group: everything out, both families. */
export const DEFAULT_EGRESS: readonly RuleSpec[] = [
  { direction: 'egress', ethertype: 'IPv4' },
  { direction: 'egress', ethertype: 'IPv6' },
];

/** A rule's identity: what it allows, with absent and null alike. */
export function ruleKey(rule: RuleSpec | SecurityGroupRule): string {
  const text = (v: string | number | null | undefined): string =>
    v === null || v === undefined ? '' : String(v).toLowerCase();
  return [
    rule.direction,
    rule.ethertype ?? 'IPv4',
    text(rule.protocol),
    text(rule.port_range_min),
    text(rule.port_range_max),
    text(rule.remote_ip_prefix),
    text(rule.remote_group_id),
  ].join('|');
}

/** What a sync changed: the rules it created and those it deleted (not those found done). */
export interface RulesSync {
  created: RuleSpec[];
  deleted: SecurityGroupRule[];
}

/**
 * Make the rules of `groupId` exactly `desired`. A create refused with `SecurityGroupRuleExists`
 * (another pass got there first) counts as done; a delete of a rule already gone too.
 *
 * @example
 * await syncRules(neutron.securityGroupRules, group.id, [...DEFAULT_EGRESS, { direction: 'ingress', remote_group_id: group.id }]);
 */
export async function syncRules(
  rules: RuleCollection,
  groupId: string,
  desired: readonly RuleSpec[],
  current?: readonly SecurityGroupRule[],
): Promise<RulesSync> {
  const actual = current ?? (await rules.list({ security_group_id: groupId }));
  const wanted = new Map(desired.map((r) => [ruleKey(r), r]));
  const seen = new Set<string>();
  const sync: RulesSync = { created: [], deleted: [] };
  for (const rule of actual) {
    const key = ruleKey(rule);
    if (wanted.has(key) && !seen.has(key)) {
      seen.add(key);
      continue;
    }
    // A rule already gone was someone else's delete (a resync pass's): not this sync's.
    if ((await rules.delete(rule.id)) === 'deleted') sync.deleted.push(rule);
  }
  for (const [key, spec] of wanted) {
    if (seen.has(key)) continue;
    if (await createRule(rules, groupId, spec)) sync.created.push(spec);
  }
  return sync;
}

/**
 * Create one rule in `groupId`: true when created, false when it exists already
 * (`SecurityGroupRuleExists`: another pass got there first), which counts as done.
 */
export async function createRule(
  rules: Pick<RuleCollection, 'create'>,
  groupId: string,
  spec: RuleSpec,
): Promise<boolean> {
  try {
    await rules.create({ ...spec, security_group_id: groupId });
    return true;
  } catch (error) {
    if (!isConflict(error) || openStackFaultType(error) !== 'SecurityGroupRuleExists') throw error;
    return false;
  }
}
