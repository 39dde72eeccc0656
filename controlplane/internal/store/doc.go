// Package store is all of Vantage's SQL: the embedded numbered migrations, the queries, the
// transactions, organization scoping and the translation of driver errors into this package's
// sentinel errors.
//
// Every query that reads or writes tenant data carries org_id in its WHERE clause; a row of
// another organization is indistinguishable from a missing one (ErrNotFound). Every mutation
// of a tenant resource writes its audit event in the same transaction (see audit.go).
//
// Queries are hand-written pgx, one file per resource. Columns are listed explicitly and rows
// scanned by helpers beside the query, so a schema change fails loudly in one place.
package store
