/**
 * The cluster-wide resources, ensured once at start (and again by each pass that needs them): the
 * service network and a subnet per family of the service CIDRs (each gateway at the last address
 * so every service IP is free for VIPs), a subnet pool per family of the cluster CIDRs, and the router that joins the
 * namespace subnets and the service subnet (with a gateway on the external network when one is
 * configured), and the group that lets pods send anywhere (the egress half of a namespace's default,
 * kept apart so that a NetworkPolicy can isolate egress alone). Anything given by ID is used as it is.
 */
import type { OpenStackClient } from '../openstack/openstack-client.js';
import type { Network, Router, SecurityGroup, Subnet, SubnetPool } from '../openstack/neutron-types.js';
import { ensureOwned } from './adopt.js';
import { identityOf, type Owner } from './identity.js';
import { DEFAULT_EGRESS, syncRules } from './security-group-rules.js';
import { familyOf, lastUsableAddress } from './cidr.js';
import type { TranslatorSettings } from './settings.js';

/** A subnet of one IP family. */
export interface FamilySubnet {
  id: string;
  cidr: string;
  family: 4 | 6;
}

export interface Infrastructure {
  serviceNetworkId: string;
  /** A service subnet per family of the service CIDRs, the primary family first. */
  serviceSubnets: FamilySubnet[];
  /** A pod subnet pool per family of the pod CIDRs, the primary family first. */
  subnetPools: { id: string; family: 4 | 6 }[];
  routerId: string;
  /** The group that lets a port send anywhere: on every pod port whose egress no policy isolates. */
  egressGroupId: string;
  projectId: string | undefined;
}

export async function ensureInfrastructure(
  os: OpenStackClient,
  s: TranslatorSettings,
  projectId: string | undefined,
): Promise<Infrastructure> {
  const cluster: Owner = { kind: 'Cluster', name: 'cluster', uid: s.clusterId };
  const neutron = os.neutron;
  const serviceNetworkId =
    s.existing.serviceNetworkId ??
    (
      await ensureOwned<Network, object>(
        neutron.networks,
        identityOf(s.clusterId, 'service-net', cluster),
        {},
      )
    ).resource.id;
  const serviceSubnets: FamilySubnet[] = [];
  for (const cidr of s.serviceCidrs) {
    const family = familyOf(cidr);
    const existing = family === 4 ? s.existing.serviceSubnetId : s.existing.serviceSubnetIdIPv6;
    const subnet =
      existing === undefined
        ? (
            await ensureOwned<Subnet, object>(
              neutron.subnets,
              identityOf(s.clusterId, family === 4 ? 'service-subnet' : 'service-subnet-v6', cluster),
              {
                network_id: serviceNetworkId,
                ip_version: family,
                cidr,
                gateway_ip: lastUsableAddress(cidr),
                enable_dhcp: false,
              },
            )
          ).resource
        : await neutron.subnets.get(existing);
    serviceSubnets.push({ id: subnet.id, cidr: subnet.cidr, family });
  }
  const subnetPools: Infrastructure['subnetPools'] = [];
  for (const cidr of s.podCidrs) {
    const family = familyOf(cidr);
    const existing = family === 4 ? s.existing.subnetPoolId : s.existing.subnetPoolIdIPv6;
    const prefixlen = family === 4 ? s.podPrefixLength : s.podPrefixLengthIPv6;
    const id =
      existing ??
      (
        await ensureOwned<SubnetPool, object>(
          neutron.subnetPools,
          identityOf(s.clusterId, family === 4 ? 'pod-pool' : 'pod-pool-v6', cluster),
          { prefixes: [cidr], default_prefixlen: prefixlen, min_prefixlen: prefixlen },
        )
      ).resource.id;
    subnetPools.push({ id, family });
  }
  const router =
    s.existing.routerId === undefined
      ? (await ensureOwned<Router, object>(neutron.routers, identityOf(s.clusterId, 'router', cluster), {}))
          .resource
      : await neutron.routers.get(s.existing.routerId);
  for (const subnet of serviceSubnets) await ensureRouterInterface(os, router.id, subnet.id);
  if (s.externalNetworkId !== undefined && router.external_gateway_info?.network_id !== s.externalNetworkId) {
    await neutron.routers.setGateway(router.id, { network_id: s.externalNetworkId });
  }
  // Neutron gives a new group exactly these rules, so a new group costs no rule call.
  const egress = await ensureOwned<SecurityGroup, object>(
    neutron.securityGroups,
    identityOf(s.clusterId, 'egress-sg', cluster),
    {},
  );
  await syncRules(
    neutron.securityGroupRules,
    egress.resource.id,
    DEFAULT_EGRESS,
    egress.resource.security_group_rules,
  );
  return {
    serviceNetworkId,
    serviceSubnets,
    subnetPools,
    routerId: router.id,
    egressGroupId: egress.resource.id,
    projectId,
  };
}

/** Attach `subnetId` to the router unless it already is. */
export async function ensureRouterInterface(
  os: OpenStackClient,
  routerId: string,
  subnetId: string,
): Promise<void> {
  const ports = await os.neutron.ports.list({ device_id: routerId });
  if (ports.some((p) => p.fixed_ips.some((f) => f.subnet_id === subnetId))) return;
  await os.neutron.routers.addInterface(routerId, { subnet_id: subnetId });
}

/** Detach `subnetId` from the router if it is attached. */
export async function removeRouterInterface(
  os: OpenStackClient,
  routerId: string,
  subnetId: string,
): Promise<void> {
  const ports = await os.neutron.ports.list({ device_id: routerId });
  if (!ports.some((p) => p.fixed_ips.some((f) => f.subnet_id === subnetId))) return;
  await os.neutron.routers.removeInterface(routerId, { subnet_id: subnetId });
}
