package exporttest

// allTypesDDL has a column of every MariaDB type dbtrail maps (after
// CREATE TABLE <schema>.).
const allTypesDDL = `alltypes (
  id INT NOT NULL PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED,
  mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
  dec1 DECIMAL(65,30), dec2 DECIMAL(10,4) UNSIGNED, dec3 DECIMAL(5,0),
  f FLOAT, d DOUBLE, b1 BIT(1), b12 BIT(12), b64 BIT(64),
  dt DATE, dtm DATETIME, dtm6 DATETIME(6), ts TIMESTAMP(6) NULL DEFAULT NULL, ts0 TIMESTAMP NULL DEFAULT NULL,
  tm TIME, tm6 TIME(6), y YEAR,
  c CHAR(10), vc VARCHAR(255), bn BINARY(8), vb VARBINARY(16),
  tt TINYTEXT, tx TEXT, mt MEDIUMTEXT, lt LONGTEXT,
  tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB,
  e ENUM('a','b','c'), s SET('x','y','z'), j JSON,
  u UUID, ip6 INET6, ip4 INET4, g GEOMETRY NULL,
  lat VARCHAR(20) CHARACTER SET latin1, dz DOUBLE, vbin VARCHAR(10) CHARACTER SET binary
) DEFAULT CHARSET=utf8mb4`

// allTypesRows are edge values: all empty/minimum (the first row, so that a
// dump's first row holds every empty value), all NULL, maximum, and
// awkward ones (escapes, zero dates, ENUM error value, latin1 bytes that are
// C1 controls, denormal and negative-zero doubles).
var allTypesRows = []string{
	`(1, -128,0,-32768,0,-8388608,0,-2147483648,0,-9223372036854775808,0,
	  '-99999999999999999999999999999999999.999999999999999999999999999999','0.0000','-99999',
	  -3.40282e38,-1.7976931348623157e308, b'0', b'0', b'0',
	  '0000-00-00','0000-00-00 00:00:00','0000-00-00 00:00:00.000000','1970-01-01 00:00:01.000000','1970-01-01 00:00:01',
	  '-838:59:59','-838:59:59.000000',1901,
	  '','',X'',X'', '','','','', X'',X'',X'',X'',
	  '','','{}', '00000000-0000-0000-0000-000000000000','::','0.0.0.0', ST_GeomFromText('POINT(0 0)'), '', 0, X'')`,
	`(2, NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL, NULL,NULL,NULL, NULL,NULL,NULL,NULL,NULL,
	  NULL,NULL,NULL,NULL,NULL, NULL,NULL,NULL, NULL,NULL,NULL,NULL, NULL,NULL,NULL,NULL, NULL,NULL,NULL,NULL,
	  NULL,NULL,NULL, NULL,NULL,NULL,NULL, NULL,NULL,NULL)`,
	`(3, 127,255,32767,65535,8388607,16777215,2147483647,4294967295,9223372036854775807,18446744073709551615,
	  '99999999999999999999999999999999999.999999999999999999999999999999','999999.9999','99999',
	  3.40282e38,1.7976931348623157e308, b'1', b'111111111111', X'FFFFFFFFFFFFFFFF',
	  '9999-12-31','9999-12-31 23:59:59','9999-12-31 23:59:59.999999','2038-01-19 03:14:07.999999','2038-01-19 03:14:07',
	  '838:59:59','838:59:59.999999',2155,
	  'abcdefghij', CONCAT('max ', REPEAT('z', 200)), X'6162000000000000', X'00FF00FF00000000000000000000FF00',
	  REPEAT('t',255), REPEAT('x',1000), REPEAT('m',70000), REPEAT('L',100000),
	  X'00', X'0000FF', REPEAT(X'AB', 70000), REPEAT(X'00', 1000),
	  'c','x,y,z','{"n": 18446744073709551615, "big": 12345678901234567890123, "f": 1.5, "s": "é😀"}',
	  'ffffffff-ffff-ffff-ffff-ffffffffffff','ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff','255.255.255.255',
	  ST_GeomFromText('LINESTRING(0 0, 1 1, 2 5)'), 'ÿþ', 1.7976931348623157e308, X'FF00FE')`,
	`(4, -1,1,-1,1,-1,1,-1,1,-1,1,
	  '-0.000000000000000000000000000010','12.3400','-1',
	  1.17549435e-38, 2.2250738585072014e-308, b'0', b'100000000001', X'8000000000000001',
	  '2026-11-29','2026-11-29 08:15:00','2026-11-29 08:15:00.000001','2026-11-29 08:15:00.123456','2026-11-29 08:15:00',
	  '-00:00:01','-12:34:56.789012',2026,
	  'a b ', 'tab\there "quote" \\back\\slash \'single\' 😀 𝄞', X'0102', X'',
	  'emoji 😀🎉', 'line1\nline2\r\n\0nul', 'ü', '',
	  X'0A0D00', X'5C27', X'', X'FF',
	  'b','y','[1, 2.50, null, true, "x"]',
	  '123e4567-e89b-12d3-a456-426614174000','::ffff:1.2.3.4','10.0.0.1',
	  ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 10,0 0))'), 'café', 4.9406564584124654e-324, 'a\0b')`,
	`(5, 0,0,0,0,0,0,0,0,0,0,
	  '0.000000000000000000000000000000','0.0001','0',
	  1.401298464324817e-45, 0.1, b'1', b'000000000001', X'0000000000000000',
	  '2026-02-00','2026-00-00 00:00:00','2026-11-29 23:59:59.500000','0000-00-00 00:00:00.000000','0000-00-00 00:00:00',
	  '00:00:00','-00:00:00.000001',0,
	  'x', CONCAT('nul', CHAR(0), 'ctrlz', CHAR(26), 'bs\\', 'q\'', 'dq"', CHAR(13), CHAR(10), CHAR(9), CHAR(1), '€'), X'00', X'00',
	  '\\', '\'', '"', CONCAT(CHAR(26), CHAR(0)),
	  X'1A', X'5C5C', X'2727', X'0D0A',
	  'zz','','{"k": "a\\"b\\\\c\\u0000\\n", "e": "\\u00e9"}',
	  '00000000-0000-0000-0000-000000000001','::1','127.0.0.1',
	  ST_GeomFromText('POINT(-1.5 2.25)'), CONVERT(X'818D8F909D80FF' USING latin1), -0e0, '')`,
}

// AllTypesTable returns the CREATE TABLE statement of the every-type table
// (named alltypes, in the current database) and its edge-value rows as the
// tuples of one INSERT … VALUES, for other packages' round-trip tests.
func AllTypesTable() (create string, rows []string) {
	return "CREATE TABLE " + allTypesDDL, append([]string(nil), allTypesRows...)
}
