# Build the Neutron schema from the ORM models (what neutron's own unit
# tests do) because the database migrations cannot run on SQLite.
import sys
import sqlalchemy as sa
from neutron.db.migration.models import head  # noqa: imports every model
from neutron_lib.db import model_base

url = sys.argv[1]
engine = sa.create_engine(url)
model_base.BASEV2.metadata.create_all(engine)
print("tables:", len(model_base.BASEV2.metadata.tables))
