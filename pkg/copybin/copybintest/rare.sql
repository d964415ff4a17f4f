DROP TABLE IF EXISTS rare;
DROP DOMAIN IF EXISTS rare_amount, rare_amount2, rare_net, rare_moodd;
DROP TYPE IF EXISTS rare_mood;
CREATE TYPE rare_mood AS ENUM ('sad', 'ok', 'happy, really');
CREATE DOMAIN rare_amount AS numeric(10,2) CHECK (VALUE >= 0);
CREATE DOMAIN rare_amount2 AS rare_amount;
CREATE DOMAIN rare_net AS inet;
CREATE DOMAIN rare_moodd AS rare_mood;
CREATE TABLE rare (
 id int PRIMARY KEY, ip inet, net cidr, mac macaddr, mac8 macaddr8,
 pt point, ln line, sg lseg, bx box, pa path, pg polygon, ci circle,
 b8 bit(8), vb varbit, i4r int4range, i8r int8range, nr numrange, dr daterange, tr tsrange, tzr tstzrange,
 i4m int4multirange, nm nummultirange, dm datemultirange, tzm tstzmultirange,
 ti tid, xi xid, cd cid, x8 xid8, xm xml, mo money, tv tsvector, tq tsquery, ls pg_lsn, jp jsonpath, tt timetz,
 en rare_mood, dom rare_amount2, dnet rare_net, dmood rare_moodd,
 aip inet[], apt point[], abx box[], ar int4range[], atv tsvector[], amo money[], ax8 xid8[], att timetz[], atq tsquery[]);
INSERT INTO rare (id) VALUES (0);
INSERT INTO rare VALUES
 (1, '192.168.0.1', '10.0.0.0/8', '08:00:2b:01:02:03', '08:00:2b:01:02:03:04:05',
  '(1.5,-2)', '{1,-1,0}', '[(0,0),(1e15,1e-5)]', '(3,4),(1,2)', '[(1,2),(3,4),(0.1,0.2)]', '((0,0),(1,1),(1,0))', '<(1,2),0.5>',
  B'10100101', B'', '[1,10)', '(,)', '[0.00,1.50]', '[2020-01-01,infinity)', '["0044-03-15 12:00:00 BC","2020-01-01 00:00:00.5")', '[2020-01-01 10:00+05,)',
  '{}', '{[1.5,2.25),(3,)}', '{[2020-01-01,2020-02-01),[2021-01-01,)}', '{[2020-01-01 00:00+00,2020-01-02 00:00:00.000001+00)}',
  '(0,1)', '0', '0', '0', '<a>x &amp; y</a>', '12.34', 'a fat cat sat:2B,3A,4 ''it''''s'':1 back\\slash:5C', '!(a & b) <-> c | d:*AB & e <3> f', '0/0', '$.a[*] ? (@ > 1)', '12:34:56.789+05:30:15',
  'sad', 12.5, '::1', 'happy, really',
  '{192.168.0.1,NULL,::1/128}', '{"(1,2)",NULL,"(1e300,-Infinity)"}', '{(1,1),(0,0);(2,2),(1,1)}', '{empty,"[1,2)",NULL}', '{"a b",NULL,"''x''"}', '{1.5,NULL,-3}', '{0,NULL,18446744073709551615}', '{00:00:00+00,NULL,24:00:00-15:59}', '{a,NULL,"!x"}'),
 (2, '::ffff:1.2.3.4', '1.2.3.4/32', 'ff:ff:ff:ff:ff:ff', '00:00:00:00:00:00:00:00',
  '(1e300,5e-324)', '{0.1,0.2,0.3}', '[(-0,NaN),(Infinity,-Infinity)]', '(0,0),(0,0)', '((1,2))', '((123456789012345,0.0001))', '<(0,0),0>',
  B'00000000', B'1', 'empty', '[-9223372036854775808,9223372036854775807)', '(,5.000)', '(,2020-01-01)', '[-infinity,infinity]', '(-infinity,"2020-06-01 12:00:00.123456+02")',
  '{[1,3),[5,7)}', '{}', '{}', '{}',
  '(4294967295,65535)', '4294967295', '4294967295', '18446744073709551615', '<?xml version="1.0"?><r>é</r>', '-92233720368547758.08', '', '', 'FFFFFFFF/FFFFFFFF', '$', '24:00:00-15:59',
  'happy, really', 0, '2001:db8::1/64', 'sad',
  '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}'),
 (3, '::1.2.3.4', '::/0', NULL, NULL,
  '(0.1,1e14)', NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, B'10101010101', '[3,4]', NULL, '[0,0]', '[2020-01-01,2020-01-02]', '["infinity",infinity]', NULL,
  NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, '92233720368547758.07', 'x:1,2,3 y', '''a'' & ( ''b'' | ''c'' )', '16/B374D848', NULL, '00:00:00.000001-00:00:01',
  NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (4, '::', '2001:db8::/32', NULL, NULL, '(1e-4,1e-5)', NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, '["-1.5e-10",1e20)', NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, 0, NULL, '!!a', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (5, '1:0:0:1::1', '::ffff:0.0.0.0/96', NULL, NULL, '(123456789012345680,-1e-300)', NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'a <-> ( b <-> c )', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (6, 'fe80::/10', '128.0.0.0/1', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, '( a | b ) & !( c <2> d )', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
-- Random values: IPv6 with runs of zero words, points across the float
-- range, ranges and multiranges, from many rows so batches are crossed.
INSERT INTO rare (id, ip, net, pt, ci, nr, tzr, tr, dr, i8r, mo, x8, tt, tv, aip, amo, b8, vb, pa)
SELECT g,
  array_to_string(array(SELECT CASE WHEN random() < 0.5 AND g > 0 THEN '0' ELSE to_hex((random() * 65535)::int) END FROM generate_series(1, 8)), ':')::inet,
  set_masklen(('10.' || g % 256 || '.' || g / 256 % 256 || '.0')::inet, 24)::cidr,
  point((random() - 0.5) * 10 ^ (random() * 40 - 20), (random() - 0.5) * 10 ^ (random() * 600 - 300)),
  circle(point(g, -g), random() * 1e6),
  numrange(round((random() * 1e6)::numeric, (g % 5)), NULL),
  tstzrange(timestamptz '2000-01-01 00:00+00' + g * interval '17 minutes 1.000001 seconds', NULL, '[]'),
  tsrange(NULL, timestamp '1999-12-31' - g * interval '97 days 3 hours'),
  daterange(date '2020-01-01' - g * 400, date '2020-01-01' + g),
  int8range(g, g * g),
  (g::int8 * 1234567)::numeric::money,
  (g::numeric * 1e15)::text::xid8,
  (time '00:00' + g * interval '1 second 1 microsecond')::timetz,
  to_tsvector('simple', 'word' || g || ' other ' || g % 7),
  ARRAY[('10.0.' || g % 256 || '.1')::inet, NULL],
  ARRAY[(g * 3)::money, NULL],
  (g % 256)::bit(8),
  (g::bit(20))::varbit,
  path(polygon(box(point(g, g), point(-g, g / 3.0))))
FROM generate_series(10, 5009) g;
UPDATE rare SET ip = NULL, pt = NULL, nr = NULL, tt = NULL WHERE id >= 10 AND id % 7 = 0;
-- Arrays of an enum and of domains: the server sends their own element OID.
ALTER TABLE rare ADD COLUMN aen rare_mood[], ADD COLUMN adom rare_amount2[], ADD COLUMN anet rare_net[];
UPDATE rare SET aen = '{sad,"happy, really",NULL}', adom = '{1.5,NULL,0}', anet = '{::1,10.0.0.0/8}' WHERE id = 1;
UPDATE rare SET aen = '{}', adom = '{}', anet = '{}' WHERE id = 2;
UPDATE rare SET aen = ARRAY['ok'::rare_mood], adom = ARRAY[(id / 4.0)::rare_amount2] WHERE id >= 10 AND id % 3 = 0;
