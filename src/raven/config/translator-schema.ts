/**
 * `translators:` entries: built-in translators the daemon runs (while it leads, under leader
 * election). Today one type: `openstack`, Kubernetes networking into Neutron and Octavia.
 */
import * as z from 'zod';
import { openStackConfigSchema } from '../../openstack/openstack-config.js';
import { splitCidrs } from '../../translator/cidr.js';
import { expecting, nameSchema, strictObject, text } from './schema-helpers.js';

/** One CIDR, or one of each family separated by a comma, as kube-apiserver takes them. */
const cidrs = (example: string) => {
  const what = `a CIDR, or an IPv4 and an IPv6 CIDR separated by a comma (dual stack), such as ${example}`;
  return expecting(
    z.string().refine((v) => splitCidrs(v) !== undefined, { error: `expected ${what}` }),
    what,
  );
};

const portPoolSchema = strictObject({
  /** Free ports each namespace's pool is filled up to. */
  size: expecting(z.int().min(1).max(1000), 'an integer from 1 to 1000'),
  /** Refill when fewer free ports than this are left (default: half the size, rounded up). */
  refillBelow: expecting(z.int().min(1).max(1000), 'an integer from 1 to 1000').optional(),
})
  .refine((p) => p.refillBelow === undefined || p.refillBelow <= p.size, {
    path: ['refillBelow'],
    error: 'expected refillBelow to be at most size',
  })
  .transform((p) => ({ size: p.size, refillBelow: p.refillBelow ?? Math.ceil(p.size / 2) }));

export const translatorSchema = strictObject({
  name: nameSchema,
  type: z.literal('openstack'),
  /** Carried by every OpenStack resource's tags and description: unique per cluster sharing a project. */
  clusterId: expecting(
    z.string().regex(/^[a-z0-9]([a-z0-9-]{0,28}[a-z0-9])?$/),
    'a cluster id of 1-30 characters [a-z0-9-]',
  ),
  openstack: openStackConfigSchema,
  /** The cluster's service CIDR(s) (kube-apiserver --service-cluster-ip-range). */
  serviceCidr: cidrs('10.96.0.0/16,fd00:10:96::/112'),
  /** The cluster CIDR(s); a subnet per namespace (per family) is allocated from each. */
  podCidr: cidrs('10.244.0.0/16,fd00:10:244::/56'),
  podPrefixLength: expecting(z.int().min(8).max(29), 'a prefix length from 8 to 29').default(24),
  podPrefixLengthIPv6: expecting(z.int().min(48).max(124), 'a prefix length from 48 to 124').default(64),
  /** Pre-created ports per namespace (absent: none). */
  portPool: portPoolSchema.optional(),
  /** External network for floating IPs (externalIPs, type LoadBalancer). */
  externalNetworkId: text('a Neutron network id').optional(),
  /** Pre-existing resources to use (never deleted). */
  existing: strictObject({
    serviceNetworkId: text('a Neutron network id').optional(),
    serviceSubnetId: text('a Neutron subnet id').optional(),
    serviceSubnetIdIPv6: text('a Neutron subnet id').optional(),
    routerId: text('a Neutron router id').optional(),
    subnetPoolId: text('a Neutron subnet pool id').optional(),
    subnetPoolIdIPv6: text('a Neutron subnet pool id').optional(),
  }).prefault({}),
  loadBalancerProvider: text('an Octavia provider such as amphora').optional(),
  loadBalancerTimeoutSeconds: expecting(z.number().min(1), 'a number of seconds').default(300),
  gcIntervalSeconds: expecting(z.number().min(1), 'a number of seconds').default(300),
  /**
   * How often what OpenStack holds is compared with what the cluster implies, and drift repaired;
   * 0 turns it off. The longest a rule added behind Raven's back stays open is about this plus a pass.
   */
  resyncSeconds: expecting(
    z.number().refine((v) => v === 0 || v >= 1, { error: 'expected 0 (off) or at least 1 second' }),
    '0 (off) or a number of seconds of at least 1',
  ).default(60),
  workers: expecting(z.int().min(1).max(64), 'an integer from 1 to 64').default(4),
}).superRefine((t, ctx) => {
  // A Service's members are its pods' addresses of the Service's family: pods need each family.
  const families = (v: string) =>
    (splitCidrs(v) ?? [])
      .map((c) => c.family)
      .sort()
      .join(',');
  if (
    splitCidrs(t.serviceCidr) !== undefined &&
    splitCidrs(t.podCidr) !== undefined &&
    families(t.serviceCidr) !== families(t.podCidr)
  )
    ctx.addIssue({
      code: 'custom',
      path: ['podCidr'],
      message: `expected podCidr to have the same IP families as serviceCidr (${families(t.serviceCidr).replace(/(\d)/g, 'IPv$1')})`,
    });
});

export type TranslatorConfig = z.output<typeof translatorSchema>;
