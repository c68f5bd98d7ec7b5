/*
 * The daemon's SQLite, without the extensions that register themselves on every connection.
 *
 * Debian's libsqlite3.a is built with full-text search (FTS3, FTS5), R*Tree with Geopoly, the dbstat virtual table and
 * the sqlite_stmt virtual table, and sqlite3_open_v2 calls each of these functions for every connection it opens. The
 * daemon's state store uses none of them, so scripts/build-release leaves their objects out of the archive it links
 * and puts these in their place: each reports success and registers nothing, so that a connection has only the core
 * SQL engine (and the core's JSON and math functions). A schema that needed one of the modules would fail with
 * "no such module", naming it.
 */
#include <sqlite3.h>

int sqlite3Fts3Init(sqlite3 *db) { (void)db; return SQLITE_OK; }
int sqlite3Fts5Init(sqlite3 *db) { (void)db; return SQLITE_OK; }
int sqlite3RtreeInit(sqlite3 *db) { (void)db; return SQLITE_OK; }
int sqlite3DbstatRegister(sqlite3 *db) { (void)db; return SQLITE_OK; }
int sqlite3StmtVtabInit(sqlite3 *db) { (void)db; return SQLITE_OK; }
