-- Reserved: migration 0009 belongs to a change being made alongside the browser checks (0010);
-- this empty file only keeps the numbers contiguous until both are merged, and is deleted then.
SELECT 1;
