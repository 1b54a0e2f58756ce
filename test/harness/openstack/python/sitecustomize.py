"""The OpenStack lab's SQLite transactions take the write lock when they begin.

Loaded through PYTHONPATH (test/harness/openstack/lab-files.ts) by the lab's OpenStack processes
only. oslo.db starts every SQLite transaction with a deferred BEGIN: a transaction that reads and
then writes fails at once with "database is locked" when another process committed in between,
which no busy timeout can wait out (SQLite cannot upgrade a stale read snapshot). Neutron answers
such a request with a 500 and octavia-worker reverts the change. BEGIN IMMEDIATE takes the write
lock first and waits for it (up to the connection's timeout), so the lab's processes take turns
instead of failing. MySQL, which OpenStack runs on in production, locks rows and has no such
failure; this file only makes the lab's SQLite stand-in behave.
"""
import sqlite3
import sqlite3.dbapi2


class _Cursor(sqlite3.Cursor):
    def execute(self, sql, *args):
        if isinstance(sql, str) and sql.strip().upper() == "BEGIN":
            sql = "BEGIN IMMEDIATE"
        return super().execute(sql, *args)


class _Connection(sqlite3.Connection):
    def cursor(self, factory=_Cursor):
        return super().cursor(factory)

    def execute(self, sql, *args):
        return self.cursor().execute(sql, *args)


_connect = sqlite3.dbapi2.connect


def _immediate_connect(*args, **kwargs):
    kwargs.setdefault("factory", _Connection)
    return _connect(*args, **kwargs)


sqlite3.connect = _immediate_connect
sqlite3.dbapi2.connect = _immediate_connect
