/**
 * NetworkPolicy → security-group rules, computed from the cluster as the caches show it (pure: no
 * OpenStack call). A policy becomes one group holding the rules of the directions it isolates
 * (`policyTypes`); Neutron groups are allow-lists and a port's groups add up, which is exactly how
 * the policies selecting a pod add up.
 *
 * Peers become address sets (`remote_ip_prefix`), not remote groups, for rule-count economy and
 * so that a port carries only the groups of the policies that select it:
 * - all pods of a namespace (a namespace selector alone, or an empty pod selector) → that
 *   namespace's subnet (one per family), one rule whatever the number of pods; all pods of all
 *   namespaces → the pod CIDR (one per family), one rule;
 * - some pods (a non-empty pod selector) → one /32 and/or /128 per pod with a port, for each
 *   address its port has;
 * - `ipBlock` → its CIDR, minus each `except` as the fewest prefixes that cover what is left;
 * - no peers at all → anywhere (IPv4 and IPv6).
 * Ports: a number (with `endPort`, a range) and protocol; a named port is resolved on the pods the
 * rule lets traffic reach — the selected pods for ingress (all the numbers that name has on them),
 * each peer pod for egress (one /32 rule per pod and its number; a named port towards an
 * `ipBlock` or anywhere matches nothing, as there is no pod to name it).
 */
import type { DeepReadonly } from '../cache/deep-freeze.js';
import type { KubeObject } from '../client/kube-object.js';
import type {
  NetworkPolicyPeer,
  NetworkPolicyPort,
  NetworkPolicySpec,
} from 'kubernetes-types/networking/v1.js';
import type { LabelSelector as LabelSelectorObject } from 'kubernetes-types/meta/v1.js';
import { labelSelectorFromObject, type LabelSelector } from '../watch/scope/label-selector.js';
import { formatCidr, parseCidr, subtractCidrs } from './cidr.js';
import { podPortAddresses } from './port-annotation.js';
import { ruleKey, type RuleSpec } from './security-group-rules.js';

export interface PolicyShape extends KubeObject {
  spec?: NetworkPolicySpec;
}

export interface PodWithPorts extends KubeObject {
  spec?: {
    hostNetwork?: boolean;
    containers?: { ports?: { name?: string; containerPort: number; protocol?: string }[] }[];
  };
}

type Pod = DeepReadonly<PodWithPorts>;

/** What the rules are computed from. */
export interface PolicyView {
  namespaces(): readonly DeepReadonly<KubeObject>[];
  podsIn(namespace: string): readonly Pod[];
  /** The subnets of a namespace (one per family), when its network is known. */
  subnetCidrs(namespace: string): readonly string[] | undefined;
  /** The pod CIDRs (one per family). */
  podCidrs: readonly string[];
}

/** Which directions a policy isolates: `policyTypes`, or Ingress (plus Egress when it has egress rules). */
export function isolates(policy: DeepReadonly<PolicyShape>): { ingress: boolean; egress: boolean } {
  const types = policy.spec?.policyTypes;
  if (types !== undefined && types.length > 0)
    return { ingress: types.includes('Ingress'), egress: types.includes('Egress') };
  return { ingress: true, egress: policy.spec?.egress !== undefined };
}

function selector(object: DeepReadonly<LabelSelectorObject> | undefined): LabelSelector | undefined {
  if (object === undefined) return undefined;
  try {
    return labelSelectorFromObject(object as LabelSelectorObject);
  } catch {
    // The apiserver validates selectors; one it let through that this cannot read selects nothing.
    return labelSelectorFromObject({ matchExpressions: [{ key: 'raven.invalid/x', operator: 'Exists' }] });
  }
}

/** Whether `policy` selects `pod` (same namespace, its pod selector matches). */
export function selectsPod(policy: DeepReadonly<PolicyShape>, pod: DeepReadonly<KubeObject>): boolean {
  if (policy.metadata?.namespace !== pod.metadata?.namespace) return false;
  return selector(policy.spec?.podSelector ?? {})?.matches(pod.metadata?.labels) ?? false;
}

/** Whether some peer of `policy` names `pod` by its labels (whatever the namespace), or the policy selects it. */
export function concernsPod(policy: DeepReadonly<PolicyShape>, pod: DeepReadonly<KubeObject>): boolean {
  if (selectsPod(policy, pod)) return true;
  const peers = [
    ...(policy.spec?.ingress ?? []).flatMap((r) => r.from ?? []),
    ...(policy.spec?.egress ?? []).flatMap((r) => r.to ?? []),
  ];
  return peers.some(
    (p) => p.podSelector !== undefined && selector(p.podSelector)?.matches(pod.metadata?.labels) === true,
  );
}

/** A place traffic may come from or go to: a prefix (none: anywhere) and the pods it covers. */
interface Target {
  ethertype: 'IPv4' | 'IPv6';
  prefix: string | undefined;
  pods: readonly Pod[];
}

/** A pod's addresses: a /32 or /128 per family its port has. */
function podTarget(pod: Pod): Target[] {
  return podPortAddresses(pod).flatMap(({ ip }) => {
    const cidr = parseCidr(ip);
    if (cidr === undefined) return [];
    return [{ ethertype: cidr.family === 4 ? 'IPv4' : 'IPv6', prefix: formatCidr(cidr), pods: [pod] }];
  });
}

function prefixTarget(prefix: string, pods: readonly Pod[] = []): Target[] {
  const cidr = parseCidr(prefix);
  if (cidr === undefined) return [];
  // 0.0.0.0/0 and ::/0 are written as no prefix: one form for "anywhere".
  return [
    {
      ethertype: cidr.family === 4 ? 'IPv4' : 'IPv6',
      prefix: cidr.prefix === 0 ? undefined : formatCidr(cidr),
      pods,
    },
  ];
}

const ANYWHERE: readonly Target[] = [
  { ethertype: 'IPv4', prefix: undefined, pods: [] },
  { ethertype: 'IPv6', prefix: undefined, pods: [] },
];

function peerTargets(
  peer: DeepReadonly<NetworkPolicyPeer>,
  namespace: string,
  view: PolicyView,
  waiting: Set<string>,
): Target[] {
  if (peer.ipBlock !== undefined)
    return subtractCidrs(peer.ipBlock.cidr, peer.ipBlock.except ?? []).flatMap((p) => prefixTarget(p));
  const nsSelector = selector(peer.namespaceSelector);
  const podSelector = selector(peer.podSelector);
  const namespaces =
    nsSelector === undefined
      ? [namespace]
      : view
          .namespaces()
          .filter((n) => n.metadata?.deletionTimestamp === undefined)
          .filter((n) => nsSelector.matches(n.metadata?.labels))
          .map((n) => n.metadata?.name ?? '');
  if (podSelector === undefined || podSelector.isEmpty) {
    // Every pod of the namespaces: their subnets (every namespace: the pod CIDR).
    const allPods = namespaces.flatMap((n) => view.podsIn(n));
    if (nsSelector?.isEmpty === true) return view.podCidrs.flatMap((c) => prefixTarget(c, allPods));
    return namespaces.flatMap((n) => {
      const cidrs = view.subnetCidrs(n);
      if (cidrs === undefined) {
        waiting.add(n);
        return [];
      }
      return cidrs.flatMap((c) => prefixTarget(c, view.podsIn(n)));
    });
  }
  return namespaces
    .flatMap((n) => view.podsIn(n))
    .filter((p) => p.metadata?.deletionTimestamp === undefined && podSelector.matches(p.metadata?.labels))
    .flatMap(podTarget);
}

/** The numbers a named port has on `pods` (for `protocol`). */
function resolveNamed(pods: readonly Pod[], name: string, protocol: string): number[] {
  const numbers = new Set<number>();
  for (const pod of pods)
    for (const c of pod.spec?.containers ?? [])
      for (const p of c.ports ?? [])
        if (p.name === name && (p.protocol ?? 'TCP') === protocol) numbers.add(p.containerPort);
  return [...numbers].sort((a, b) => a - b);
}

function rulesFor(
  direction: 'ingress' | 'egress',
  targets: readonly Target[],
  ports: readonly DeepReadonly<NetworkPolicyPort>[] | undefined,
  selected: readonly Pod[],
): RuleSpec[] {
  const rule = (t: Target, protocol?: string, min?: number, max?: number): RuleSpec => ({
    direction,
    ethertype: t.ethertype,
    ...(protocol === undefined ? {} : { protocol: protocol.toLowerCase() }),
    ...(min === undefined ? {} : { port_range_min: min, port_range_max: max ?? min }),
    ...(t.prefix === undefined ? {} : { remote_ip_prefix: t.prefix }),
  });
  if (ports === undefined || ports.length === 0) return targets.map((t) => rule(t));
  const out: RuleSpec[] = [];
  for (const port of ports) {
    const protocol = port.protocol ?? 'TCP';
    if (port.port === undefined) out.push(...targets.map((t) => rule(t, protocol)));
    else if (typeof port.port === 'number')
      out.push(...targets.map((t) => rule(t, protocol, port.port as number, port.endPort ?? undefined)));
    else if (direction === 'ingress') {
      for (const n of resolveNamed(selected, port.port, protocol))
        out.push(...targets.map((t) => rule(t, protocol, n)));
    } else {
      // Egress to a named port: each peer pod with the number it gives that name.
      for (const pod of new Set(targets.flatMap((t) => t.pods)))
        for (const n of resolveNamed([pod], port.port, protocol))
          out.push(...podTarget(pod).map((t) => rule(t, protocol, n)));
    }
  }
  return out;
}

/** A policy's rules, and the namespaces whose subnets are not known yet (their rules are missing). */
export interface PolicyRules {
  rules: RuleSpec[];
  waitingFor: string[];
}

/**
 * The rules of a policy's group.
 *
 * @example
 * policyRules(denyAll, view); // { rules: [], waitingFor: [] }: selected pods get no ingress
 */
export function policyRules(policy: DeepReadonly<PolicyShape>, view: PolicyView): PolicyRules {
  const namespace = policy.metadata?.namespace ?? '';
  const waiting = new Set<string>();
  const { ingress, egress } = isolates(policy);
  const selected = view.podsIn(namespace).filter((p) => selectsPod(policy, p));
  const targetsOf = (peers: readonly DeepReadonly<NetworkPolicyPeer>[] | undefined): readonly Target[] =>
    peers === undefined || peers.length === 0
      ? ANYWHERE
      : peers.flatMap((p) => peerTargets(p, namespace, view, waiting));
  const rules: RuleSpec[] = [];
  if (ingress)
    for (const r of policy.spec?.ingress ?? [])
      rules.push(...rulesFor('ingress', targetsOf(r.from), r.ports, selected));
  if (egress)
    for (const r of policy.spec?.egress ?? [])
      rules.push(...rulesFor('egress', targetsOf(r.to), r.ports, selected));
  const unique = new Map(rules.map((r) => [ruleKey(r), r]));
  return { rules: [...unique.values()], waitingFor: [...waiting].sort() };
}
