-- Vantage schema: the outbox's events are typed (package event), and each row records the
-- version of its payload's format, so that a later change of a payload still decodes the rows
-- queued before it. Every row written so far is version 1. (IF NOT EXISTS: safe on a database
-- whose migration records were rewritten, see migrate.go.)
ALTER TABLE outbox ADD COLUMN IF NOT EXISTS event_version integer NOT NULL DEFAULT 1;
