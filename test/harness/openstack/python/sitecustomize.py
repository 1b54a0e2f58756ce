"""How the OpenStack lab's services live with SQLite: wait for a lock without stalling, retry a
transaction that lost a race.

Loaded through PYTHONPATH (test/harness/openstack/lab-files.ts) by the lab's OpenStack processes
only. Several processes share each SQLite file (WAL mode), and on a loaded machine they meet:

- A statement that finds the database locked by another process (SQLITE_BUSY) is retried after a
  short time.sleep, for up to a minute. SQLite's own busy wait is off (timeout=0 in the templates):
  it sleeps without yielding, and in neutron-server, whose green threads share one OS thread, it
  would stall the very green thread that holds the lock. time.sleep, patched by eventlet there,
  lets it finish.
- A transaction that read, and then tries to write after another process committed
  (SQLITE_BUSY_SNAPSHOT), cannot go on; only running it again helps. oslo.db is told to report it
  as DBDeadlock, what it reports for a MySQL deadlock, so that Neutron retries the request as it
  would in production (MySQL's row locks make such retries rare there).
- Octavia does not retry deadlocks, so its processes (RAVEN_LAB_SQLITE_IMMEDIATE=1, set by the lab)
  begin every transaction with BEGIN IMMEDIATE: it takes the write lock first, and no race is lost.
  Not in neutron-server: it opens a second session inside a writing one, which would then wait for
  itself.
"""
import os
import importlib.abc
import importlib.util
import sqlite3
import sqlite3.dbapi2
import sys
import time

_GIVE_UP_SECONDS = 60.0
_IMMEDIATE = os.environ.get("RAVEN_LAB_SQLITE_IMMEDIATE") == "1"


def _waits_out(err):
    code = getattr(err, "sqlite_errorcode", None)
    # SQLITE_BUSY and its extended codes, but not BUSY_SNAPSHOT: waiting cannot refresh a snapshot.
    return code is not None and code & 0xFF == sqlite3.SQLITE_BUSY and code != 517


def _when_unlocked(statement):
    deadline = time.monotonic() + _GIVE_UP_SECONDS
    pause = 0.002
    while True:
        try:
            return statement()
        except sqlite3.OperationalError as err:
            if not _waits_out(err) or time.monotonic() > deadline:
                raise
            time.sleep(pause)  # looked up at call time: eventlet's green sleep where it patched it
            pause = min(pause * 2, 0.05)


class _Cursor(sqlite3.Cursor):
    def execute(self, sql, *args):
        if _IMMEDIATE and isinstance(sql, str) and sql.strip().upper() == "BEGIN":
            sql = "BEGIN IMMEDIATE"
        return _when_unlocked(lambda: super(_Cursor, self).execute(sql, *args))

    def executemany(self, *args):
        return _when_unlocked(lambda: super(_Cursor, self).executemany(*args))


class _Connection(sqlite3.Connection):
    def cursor(self, factory=_Cursor):
        return super().cursor(factory)

    def execute(self, *args):
        return self.cursor().execute(*args)

    def commit(self):
        return _when_unlocked(super().commit)


_connect = sqlite3.dbapi2.connect


def _patient_connect(*args, **kwargs):
    kwargs.setdefault("factory", _Connection)
    return _connect(*args, **kwargs)


sqlite3.connect = _patient_connect
sqlite3.dbapi2.connect = _patient_connect


def _report_lost_races_as_deadlocks(exc_filters):
    from oslo_db import exception
    from sqlalchemy import exc as sqla_exc

    @exc_filters.filters("sqlite", sqla_exc.OperationalError, r".*database is locked")
    def _sqlite_locked(error, match, engine_name, is_disconnect):
        raise exception.DBDeadlock(error)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Registers the filter once oslo.db's exc_filters is imported (importing it here, before the
    services monkey-patch with eventlet, would be too early)."""

    def find_spec(self, name, path, target=None):
        if name != "oslo_db.sqlalchemy.exc_filters":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_register(module):
            exec_module(module)
            _report_lost_races_as_deadlocks(module)

        spec.loader.exec_module = exec_then_register
        return spec


sys.meta_path.insert(0, _AfterImport())
