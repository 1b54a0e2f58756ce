/**
 * `translators:` entries: built-in translators the daemon runs (while it leads, under leader
 * election). Today one type: `openstack`, Kubernetes networking into Neutron and Octavia.
 */
import * as z from 'zod';
import { openStackConfigSchema } from '../../openstack/openstack-config.js';
import { expecting, nameSchema, strictObject, text } from './schema-helpers.js';

const CIDR = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}\/([0-9]|[12]\d|3[0-2])$/;

const cidr = (what: string) => expecting(z.string().regex(CIDR), `an IPv4 CIDR such as ${what}`);

export const translatorSchema = strictObject({
  name: nameSchema,
  type: z.literal('openstack'),
  /** Carried by every OpenStack resource's tags and description: unique per cluster sharing a project. */
  clusterId: expecting(
    z.string().regex(/^[a-z0-9]([a-z0-9-]{0,28}[a-z0-9])?$/),
    'a cluster id of 1-30 characters [a-z0-9-]',
  ),
  openstack: openStackConfigSchema,
  /** The cluster's service CIDR (kube-apiserver --service-cluster-ip-range). */
  serviceCidr: cidr('10.96.0.0/16'),
  /** The cluster CIDR; a subnet per namespace is allocated from it. */
  podCidr: cidr('10.244.0.0/16'),
  podPrefixLength: expecting(z.int().min(8).max(29), 'a prefix length from 8 to 29').default(24),
  /** External network for floating IPs (externalIPs, type LoadBalancer). */
  externalNetworkId: text('a Neutron network id').optional(),
  /** Pre-existing resources to use (never deleted). */
  existing: strictObject({
    serviceNetworkId: text('a Neutron network id').optional(),
    serviceSubnetId: text('a Neutron subnet id').optional(),
    routerId: text('a Neutron router id').optional(),
    subnetPoolId: text('a Neutron subnet pool id').optional(),
  }).prefault({}),
  loadBalancerProvider: text('an Octavia provider such as amphora').optional(),
  loadBalancerTimeoutSeconds: expecting(z.number().min(1), 'a number of seconds').default(300),
  gcIntervalSeconds: expecting(z.number().min(1), 'a number of seconds').default(300),
  workers: expecting(z.int().min(1).max(64), 'an integer from 1 to 64').default(4),
});

export type TranslatorConfig = z.output<typeof translatorSchema>;
