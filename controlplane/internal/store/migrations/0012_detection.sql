-- Detection (docs/detection.md): a check's region_quorum, how many reporting regions must fail
-- for a run to fail: 'majority' (the rule before it existed), 'any', 'all' or a decimal count.
ALTER TABLE checks ADD COLUMN IF NOT EXISTS region_quorum text NOT NULL DEFAULT 'majority';
