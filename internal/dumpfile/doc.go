// Package dumpfile reads the output folder of mydumper: the metadata file
// (binlog coordinates of the dump), the list of tables with their schema and
// data files, the CREATE TABLE text of a schema file, and the rows of a data
// file. It is pure: input comes through io.Reader and fs.FS, nothing is
// written, and nothing is converted. Turning literals into typed column
// values is the caller's job (see internal/rowimage).
//
// The data reader is a statement parser over the byte stream, not a line
// reader: one INSERT may span any number of lines and rows may be split
// across lines anywhere between tokens (mydumper 0.10 writes
// "VALUES\n(r1),\n(r2);", newer versions "VALUES(r1)\n,(r2);"). Every row of
// every INSERT is returned or the read fails with a *SyntaxError naming the
// file and line: a truncated file, an unknown statement or a malformed
// literal is never skipped.
//
// What mydumper 0.10.0 writes, measured against MariaDB 10.11 (the session
// uses SET NAMES binary and time_zone '+00:00'):
//
//   - data files start with "/*!40101 SET NAMES binary*/;",
//     "/*!40014 SET FOREIGN_KEY_CHECKS=0*/;" and
//     "/*!40103 SET TIME_ZONE='+00:00' */;", then "INSERT INTO `t` VALUES"
//     ("INSERT INTO `t` (`a`,`b`) VALUES" with --complete-insert, "INSERT
//     IGNORE" with --insert-ignore) and one row per line, a new statement
//     every --statement-size bytes;
//   - integers, DECIMAL, FLOAT, DOUBLE and YEAR are unquoted numbers in the
//     server's text form: DECIMAL with all scale digits, YEAR 0 as "0000",
//     DOUBLE as "1.7976931348623157e308", FLOAT with about 6 significant
//     digits ("1.23457" for a stored 1.2345678: not always the stored
//     float32);
//   - everything else is double-quoted, escaped with mysql_real_escape_string
//     (\0 \' \" \\ \n \r \Z) and otherwise raw: BINARY/VARBINARY/BLOB bytes
//     (BINARY(n) zero-padded), BIT as its ceil(n/8) big-endian bytes, text in
//     the column's own charset (latin1 'é' is the byte 0xE9), dates and
//     times in MySQL text form with FSP digits and zero dates kept
//     ("0000-00-00 00:00:00.000000"), TIMESTAMP in UTC, JSON, ENUM and SET
//     labels, UUID, INET6 and INET4 in their text form;
//   - a view has a placeholder "<db>.<v>-schema.sql" (CREATE TABLE ...
//     ENGINE=MyISAM) beside "<db>.<v>-schema-view.sql"; an empty table has a
//     schema file and no data file, or an empty one with --build-empty-files;
//     --rows splits tables with a usable key into "<db>.<t>.00000.sql", ...
package dumpfile
