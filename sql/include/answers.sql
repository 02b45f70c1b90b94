--
-- answers: answers_wrong(), the differential check of lookups through a
-- btlayout index against the same rows in a core btree index, shared by
-- the tests of the copy of the upper levels (upper, and normkey and
-- normkey_libc through sql/include/normkey.sql).  Included with \i; not
-- a test of its own.
--

-- The number of answers that differ between tables a (btlayout) and b
-- (the same rows in a core btree index) over every query shape (a format()
-- string of the table, %1$I, and a probe, %2$s) at every probe.  Sequential
-- scans are off for its queries, whatever the caller's setting: a shape the
-- planner would answer from the heap (an array of keys, estimated from a
-- table never analyzed) would compare nothing.
CREATE FUNCTION answers_wrong(shapes text[], probes text[], a text, b text)
RETURNS int LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  q text;
  p text;
  ra text;
  rb text;
  wrong int := 0;
BEGIN
  FOREACH p IN ARRAY probes LOOP
    FOREACH q IN ARRAY shapes LOOP
      EXECUTE format(q, a, p) INTO ra;
      EXECUTE format(q, b, p) INTO rb;
      IF ra IS DISTINCT FROM rb THEN
        RAISE NOTICE 'probe %: % gives % instead of %', p, q, ra, rb;
        wrong := wrong + 1;
      END IF;
    END LOOP;
  END LOOP;
  RETURN wrong;
END
$$;
