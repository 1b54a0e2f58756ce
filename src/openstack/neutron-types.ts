/**
 * Neutron v2.0 resource shapes: the attributes Raven reads and writes, as the API names them
 * (snake_case, so bodies pass through unchanged). Answers carry more attributes than listed.
 */

/** Attributes every Neutron resource with standard attributes has. */
export interface NeutronResource {
  id: string;
  name?: string;
  description?: string;
  project_id?: string;
  tags?: string[];
  created_at?: string;
  updated_at?: string;
  revision_number?: number;
}

/** What every create may carry: `tags` are applied per the collection's tagging mode. */
export interface NeutronCreate {
  name?: string;
  description?: string;
  /** Set by the client in noauth mode; give it to create in another project as admin. */
  project_id?: string;
  tags?: readonly string[];
}

export interface Network extends NeutronResource {
  admin_state_up?: boolean;
  status?: string;
  shared?: boolean;
  subnets?: string[];
  mtu?: number;
  'router:external'?: boolean;
  port_security_enabled?: boolean;
}
export interface NetworkCreate extends NeutronCreate {
  admin_state_up?: boolean;
  shared?: boolean;
  mtu?: number;
  'router:external'?: boolean;
  port_security_enabled?: boolean;
}
export type NetworkUpdate = Partial<Omit<NetworkCreate, 'tags' | 'project_id'>>;

export interface AllocationPool {
  start: string;
  end: string;
}
export interface HostRoute {
  destination: string;
  nexthop: string;
}

export interface Subnet extends NeutronResource {
  network_id: string;
  ip_version: 4 | 6;
  cidr: string;
  gateway_ip?: string | null;
  enable_dhcp?: boolean;
  allocation_pools?: AllocationPool[];
  dns_nameservers?: string[];
  host_routes?: HostRoute[];
  subnetpool_id?: string | null;
}
export interface SubnetCreate extends NeutronCreate {
  network_id: string;
  ip_version: 4 | 6;
  /** Required unless `subnetpool_id` is given. */
  cidr?: string;
  subnetpool_id?: string;
  prefixlen?: number;
  gateway_ip?: string | null;
  enable_dhcp?: boolean;
  allocation_pools?: AllocationPool[];
  dns_nameservers?: string[];
  host_routes?: HostRoute[];
}
export type SubnetUpdate = Partial<
  Pick<
    SubnetCreate,
    | 'name'
    | 'description'
    | 'gateway_ip'
    | 'enable_dhcp'
    | 'allocation_pools'
    | 'dns_nameservers'
    | 'host_routes'
  >
>;

export interface SubnetPool extends NeutronResource {
  prefixes: string[];
  default_prefixlen?: number;
  min_prefixlen?: number;
  max_prefixlen?: number;
  ip_version?: 4 | 6;
  shared?: boolean;
  is_default?: boolean;
}
export interface SubnetPoolCreate extends NeutronCreate {
  prefixes: string[];
  default_prefixlen?: number;
  min_prefixlen?: number;
  max_prefixlen?: number;
  shared?: boolean;
  is_default?: boolean;
}
export type SubnetPoolUpdate = Partial<Omit<SubnetPoolCreate, 'tags' | 'project_id' | 'shared'>>;

export interface FixedIp {
  subnet_id?: string;
  ip_address?: string;
}

export interface ExternalGatewayInfo {
  network_id: string;
  enable_snat?: boolean;
  external_fixed_ips?: FixedIp[];
}

export interface Router extends NeutronResource {
  admin_state_up?: boolean;
  status?: string;
  external_gateway_info?: ExternalGatewayInfo | null;
  routes?: HostRoute[];
}
export interface RouterCreate extends NeutronCreate {
  admin_state_up?: boolean;
  external_gateway_info?: ExternalGatewayInfo;
}
export interface RouterUpdate {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  /** `{}` (or null) removes the gateway. */
  external_gateway_info?: ExternalGatewayInfo | Record<string, never> | null;
  routes?: HostRoute[];
}

/** What `add_router_interface` / `remove_router_interface` answer. */
export interface RouterInterface {
  id: string;
  subnet_id: string;
  subnet_ids?: string[];
  port_id: string;
  network_id?: string;
  project_id?: string;
  tags?: string[];
}

export interface AllowedAddressPair {
  ip_address: string;
  mac_address?: string;
}

export interface Port extends NeutronResource {
  network_id: string;
  mac_address: string;
  fixed_ips: Required<FixedIp>[];
  device_id?: string;
  device_owner?: string;
  security_groups?: string[];
  admin_state_up?: boolean;
  status?: string;
  port_security_enabled?: boolean;
  allowed_address_pairs?: AllowedAddressPair[];
}
export interface PortCreate extends NeutronCreate {
  network_id: string;
  fixed_ips?: FixedIp[];
  mac_address?: string;
  device_id?: string;
  device_owner?: string;
  security_groups?: string[];
  admin_state_up?: boolean;
  port_security_enabled?: boolean;
  allowed_address_pairs?: AllowedAddressPair[];
}
export type PortUpdate = Partial<Omit<PortCreate, 'tags' | 'project_id' | 'network_id'>>;

export interface SecurityGroupRule extends NeutronResource {
  security_group_id: string;
  direction: 'ingress' | 'egress';
  ethertype: 'IPv4' | 'IPv6';
  protocol?: string | null;
  port_range_min?: number | null;
  port_range_max?: number | null;
  remote_ip_prefix?: string | null;
  remote_group_id?: string | null;
}
export interface SecurityGroupRuleCreate {
  security_group_id: string;
  direction: 'ingress' | 'egress';
  ethertype?: 'IPv4' | 'IPv6';
  /** `tcp`, `udp`, `icmp`, a protocol number, or absent for any. */
  protocol?: string | number;
  port_range_min?: number;
  port_range_max?: number;
  remote_ip_prefix?: string;
  remote_group_id?: string;
  description?: string;
  project_id?: string;
}

export interface SecurityGroup extends NeutronResource {
  security_group_rules?: SecurityGroupRule[];
  stateful?: boolean;
}
export interface SecurityGroupCreate extends NeutronCreate {
  stateful?: boolean;
}
export type SecurityGroupUpdate = Pick<SecurityGroupCreate, 'name' | 'description'>;

export interface FloatingIp extends NeutronResource {
  floating_network_id: string;
  floating_ip_address: string;
  port_id?: string | null;
  fixed_ip_address?: string | null;
  router_id?: string | null;
  status?: string;
}
export interface FloatingIpCreate extends Omit<NeutronCreate, 'name'> {
  /** The external network the address comes from. */
  floating_network_id: string;
  floating_ip_address?: string;
  subnet_id?: string;
  /** Associate at once with this port. */
  port_id?: string;
  fixed_ip_address?: string;
}
export interface FloatingIpUpdate {
  port_id?: string | null;
  fixed_ip_address?: string | null;
  description?: string;
}
