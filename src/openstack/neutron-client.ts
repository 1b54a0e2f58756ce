/**
 * Neutron v2.0: networks, subnets, subnet pools, routers (interfaces and external gateway), ports,
 * security groups and rules, floating IPs; each a {@link RestCollection} (create / get / update /
 * delete / list / pages / setTags).
 *
 * Tags: Neutron takes tags in a create body only for ports, and only with the
 * `tag_ports_during_bulk_creation` extension driver (`tagPortsOnCreate`, default true); every
 * other resource is created, then tagged with `PUT /v2.0/{resource}/{id}/tags` (the full list).
 */
import { isNotFound } from '../errors/classify.js';
import type { ServiceTransport } from './openstack-transport.js';
import {
  RestCollection,
  type CallOptions,
  type CollectionSpec,
  type DeleteOutcome,
} from './rest-collection.js';
import type {
  ExternalGatewayInfo,
  FloatingIp,
  FloatingIpCreate,
  FloatingIpUpdate,
  Network,
  NetworkCreate,
  NetworkUpdate,
  Port,
  PortCreate,
  PortUpdate,
  Router,
  RouterCreate,
  RouterInterface,
  RouterUpdate,
  SecurityGroup,
  SecurityGroupCreate,
  SecurityGroupRule,
  SecurityGroupRuleCreate,
  SecurityGroupUpdate,
  Subnet,
  SubnetCreate,
  SubnetPool,
  SubnetPoolCreate,
  SubnetPoolUpdate,
  SubnetUpdate,
} from './neutron-types.js';

function spec(
  resource: string,
  singular: string,
  plural: string,
  tags: 'body' | 'put' = 'put',
): CollectionSpec {
  return { service: 'network', path: `/v2.0/${resource}`, singular, plural, tags };
}

/** What a router interface is attached by: a subnet (Neutron makes the port) or an existing port. */
export type RouterInterfaceTarget = { subnet_id: string } | { port_id: string };

/** Routers, plus interfaces and the external gateway. */
export class RouterCollection extends RestCollection<Router, RouterCreate, RouterUpdate> {
  readonly #transport: ServiceTransport;

  constructor(transport: ServiceTransport) {
    super(transport, spec('routers', 'router', 'routers'));
    this.#transport = transport;
  }

  /** Attach a subnet or port (`PUT /v2.0/routers/{id}/add_router_interface`). */
  async addInterface(
    routerId: string,
    target: RouterInterfaceTarget,
    options: CallOptions = {},
  ): Promise<RouterInterface> {
    return this.#interface('add_router_interface', routerId, target, options);
  }

  /** Detach a subnet or port; a router or interface that is not there resolves `'already-gone'`. */
  async removeInterface(
    routerId: string,
    target: RouterInterfaceTarget,
    options: CallOptions = {},
  ): Promise<DeleteOutcome> {
    try {
      await this.#interface('remove_router_interface', routerId, target, options);
      return 'deleted';
    } catch (err) {
      if (isNotFound(err)) return 'already-gone';
      throw err;
    }
  }

  /** Set the external gateway (SNAT and fixed IPs optional). */
  setGateway(routerId: string, gateway: ExternalGatewayInfo, options: CallOptions = {}): Promise<Router> {
    return this.update(routerId, { external_gateway_info: gateway }, options);
  }

  /** Remove the external gateway. */
  clearGateway(routerId: string, options: CallOptions = {}): Promise<Router> {
    return this.update(routerId, { external_gateway_info: {} }, options);
  }

  async #interface(
    action: string,
    routerId: string,
    target: RouterInterfaceTarget,
    options: CallOptions,
  ): Promise<RouterInterface> {
    const answer = await this.#transport.request({
      service: 'network',
      method: 'PUT',
      path: `/v2.0/routers/${encodeURIComponent(routerId)}/${action}`,
      body: target,
      resource: { type: 'router', id: routerId },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return answer.body as RouterInterface;
  }
}

/** Floating IPs, plus association with a port. */
export class FloatingIpCollection extends RestCollection<FloatingIp, FloatingIpCreate, FloatingIpUpdate> {
  constructor(transport: ServiceTransport) {
    super(transport, spec('floatingips', 'floatingip', 'floatingips'));
  }

  /** Point the floating IP at `portId` (and one of its fixed IPs when it has several). */
  associate(
    floatingIpId: string,
    portId: string,
    options: CallOptions & { fixedIpAddress?: string } = {},
  ): Promise<FloatingIp> {
    const changes: FloatingIpUpdate = { port_id: portId };
    if (options.fixedIpAddress !== undefined) changes.fixed_ip_address = options.fixedIpAddress;
    return this.update(floatingIpId, changes, options);
  }

  /** Detach the floating IP from its port; the address stays allocated. */
  disassociate(floatingIpId: string, options: CallOptions = {}): Promise<FloatingIp> {
    return this.update(floatingIpId, { port_id: null }, options);
  }
}

/**
 * @example
 * const net = await neutron.networks.create({ name: 'raven-default', tags: ['raven'] });
 * const sub = await neutron.subnets.create({ network_id: net.id, ip_version: 4, cidr: '10.0.0.0/24' });
 * const port = await neutron.ports.create({ network_id: net.id, fixed_ips: [{ subnet_id: sub.id }] });
 */
export class NeutronClient {
  readonly networks: RestCollection<Network, NetworkCreate, NetworkUpdate>;
  readonly subnets: RestCollection<Subnet, SubnetCreate, SubnetUpdate>;
  readonly subnetPools: RestCollection<SubnetPool, SubnetPoolCreate, SubnetPoolUpdate>;
  readonly routers: RouterCollection;
  readonly ports: RestCollection<Port, PortCreate, PortUpdate>;
  readonly securityGroups: RestCollection<SecurityGroup, SecurityGroupCreate, SecurityGroupUpdate>;
  readonly securityGroupRules: RestCollection<
    SecurityGroupRule,
    SecurityGroupRuleCreate,
    Record<string, never>
  >;
  readonly floatingIps: FloatingIpCollection;

  constructor(transport: ServiceTransport, options: { tagPortsOnCreate?: boolean } = {}) {
    this.networks = new RestCollection(transport, spec('networks', 'network', 'networks'));
    this.subnets = new RestCollection(transport, spec('subnets', 'subnet', 'subnets'));
    this.subnetPools = new RestCollection(transport, spec('subnetpools', 'subnetpool', 'subnetpools'));
    this.routers = new RouterCollection(transport);
    this.ports = new RestCollection(
      transport,
      spec('ports', 'port', 'ports', options.tagPortsOnCreate === false ? 'put' : 'body'),
    );
    this.securityGroups = new RestCollection(
      transport,
      spec('security-groups', 'security_group', 'security_groups'),
    );
    this.securityGroupRules = new RestCollection(
      transport,
      spec('security-group-rules', 'security_group_rule', 'security_group_rules'),
    );
    this.floatingIps = new FloatingIpCollection(transport);
  }
}

/** A port's addresses: its MAC, and each fixed IP with its subnet. */
export interface PortAddresses {
  mac: string;
  ips: string[];
  fixedIps: { subnetId: string; ip: string }[];
}

/**
 * Read a port's addresses.
 *
 * @example
 * const { mac, ips } = portAddresses(await neutron.ports.get(id)); // ips[0] is the first fixed IP
 */
export function portAddresses(port: Pick<Port, 'mac_address' | 'fixed_ips'>): PortAddresses {
  const fixedIps = port.fixed_ips.map((f) => ({ subnetId: f.subnet_id, ip: f.ip_address }));
  return { mac: port.mac_address, ips: fixedIps.map((f) => f.ip), fixedIps };
}
