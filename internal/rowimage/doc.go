// Package rowimage is dbtrail's one lossless mapping of MySQL/MariaDB column
// values to canonical JSON text. It is pure: no I/O, no clock, no host time
// zone.
//
// A row image is a JSON object whose keys are the column names in table order
// and whose values are in the canonical form below. Two producers exist and
// must agree byte for byte on the same stored value:
//
//   - AppendValue / Image: a value as go-mysql's replication.RowsEvent decodes
//     it, with BinlogSyncerConfig ParseTime=false, UseDecimal=false,
//     TimestampStringLocation=time.UTC and RenderJSONAsMySQLText=true.
//   - AppendSQLValue / SQLImage: a value read by `SELECT` through database/sql
//     and go-sql-driver/mysql with parseTime=false, on a connection whose
//     charset is utf8mb4 and whose session time_zone is '+00:00' (TIMESTAMP is
//     printed in the session zone). FLOAT columns should be selected as
//     CAST(col AS DOUBLE): MariaDB/MySQL print FLOAT with only ~6 significant
//     digits, which does not always identify the stored float32.
//
// Canonical value per column type:
//
//	NULL                                   null
//	tinyint..bigint (any sign), year       JSON number, exact decimal digits (never via float64)
//	decimal                                "-12.3400": string with exactly Scale fraction digits
//	float / double                         number: shortest text that round-trips the
//	                                       float32 / float64 (strconv 'g', -1); NaN/Inf is an error
//	date, datetime, timestamp, time        MySQL's text with exactly FSP fraction digits:
//	                                       "2026-11-29", "2026-11-29 08:00:00.123456",
//	                                       "0000-00-00 00:00:00", "-838:59:59.000000";
//	                                       timestamps in UTC
//	char..longtext, enum, set              string (UTF-8). Binlog data in utf8/utf8mb3/
//	                                       utf8mb4/ascii must be valid UTF-8; latin1 is
//	                                       converted with MySQL's latin1 table (cp1252 + 5
//	                                       C1 controls); charset binary is binary; any
//	                                       other charset is an error, never a guess.
//	                                       ENUM: label, index 0 is "". SET: labels joined
//	                                       by "," in declaration order.
//	json                                   string holding the document text as SELECT
//	                                       prints it: MariaDB's JSON (LONGTEXT) byte for
//	                                       byte; MySQL's binary JSON re-printed in MySQL's
//	                                       form ({"a": 1, "b": [1, 2]}); empty is "null"
//	binary..longblob, bit, geometry        string, standard base64 with padding. BINARY(n) is
//	                                       right-padded with 0x00 to n bytes, BIT(n) is the
//	                                       ceil(n/8) big-endian bytes SELECT returns.
//	uuid, inet6, inet4 (MariaDB)           string in MariaDB's SELECT text form
//
// A JSON string is written with a fixed escaper so that equal values give equal
// bytes: '"' and '\\' are escaped, control characters below 0x20 use \b \f \n
// \r \t or \u00xx (lower-case hex), everything else (including U+2028/U+2029
// and all valid UTF-8) is written as is.
//
// Errors never turn a value into NULL: a value that cannot be mapped
// losslessly is an error (*ValueError) naming the column, its type and the
// reason.
package rowimage
