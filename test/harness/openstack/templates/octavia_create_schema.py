# Build the Octavia schema from the ORM models and seed the lookup
# tables (what octavia's functional DB tests do) because the database
# migrations cannot run on SQLite.
import sys
import sqlalchemy as sa
from sqlalchemy import orm
from octavia.common import constants as c
from octavia.db import base_models, models

engine = sa.create_engine(sys.argv[1])
base_models.BASE.metadata.create_all(engine)
session = orm.sessionmaker(bind=engine)()
seed = {
    models.ProvisioningStatus: c.SUPPORTED_PROVISIONING_STATUSES,
    models.OperatingStatus: c.SUPPORTED_OPERATING_STATUSES,
    models.Protocol: c.SUPPORTED_PROTOCOLS,
    models.Algorithm: c.SUPPORTED_LB_ALGORITHMS,
    models.AmphoraRoles: c.SUPPORTED_AMPHORA_ROLES,
    models.LBTopology: c.SUPPORTED_LB_TOPOLOGIES,
    models.SessionPersistenceType: c.SUPPORTED_SP_TYPES,
    models.HealthMonitorType: c.SUPPORTED_HEALTH_MONITOR_TYPES,
    models.VRRPAuthMethod: c.SUPPORTED_VRRP_AUTH,
    models.L7RuleType: c.SUPPORTED_L7RULE_TYPES,
    models.L7RuleCompareType: c.SUPPORTED_L7RULE_COMPARE_TYPES,
    models.L7PolicyAction: c.SUPPORTED_L7POLICY_ACTIONS,
}
if hasattr(models, 'ClientAuthenticationMode'):
    seed[models.ClientAuthenticationMode] = c.SUPPORTED_CLIENT_AUTH_MODES
for model, names in seed.items():
    for n in names:
        session.add(model(name=n))
session.commit()
print("tables:", len(base_models.BASE.metadata.tables))
