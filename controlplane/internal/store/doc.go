// Package store is all of Vantage's SQL: the embedded numbered migrations, the queries, the
// transactions, organization scoping and the translation of driver errors into this package's
// sentinel errors.
//
// Every query that reads or writes tenant data carries org_id in its WHERE clause; a row of
// another organization is indistinguishable from a missing one (ErrNotFound). Every mutation
// of a tenant resource writes its audit event in the same transaction (see audit.go).
//
// Queries live in queries/<area>.sql and are compiled by sqlc (sqlc.yaml) against the schema
// the migrations build into typed Go in dbsqlc/ (`make generate`); a query that no longer
// fits the schema fails generation. Store methods run them on the pool (s.q) or inside a
// transaction (inTx, s.q.WithTx(tx)) and translate driver errors once (translate). What is
// decided about the data — verdicts, incidents, seats, schedules — is decided by the domain
// packages that call the store.
package store
