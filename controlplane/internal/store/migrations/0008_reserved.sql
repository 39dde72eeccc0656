-- Reserved: migration 0008 belongs to a change being made alongside the browser checks (0010);
-- this empty file only keeps the numbers contiguous until both are merged, and is deleted then.
SELECT 1;
