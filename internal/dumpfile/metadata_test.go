package dumpfile

import (
	"strings"
	"testing"
	"time"
)

func TestParseMetadata(t *testing.T) {
	started := time.Date(2026, 11, 29, 8, 47, 5, 0, time.UTC)
	finished := time.Date(2026, 11, 29, 8, 47, 6, 0, time.UTC)
	for _, tc := range []struct {
		name, in string
		want     Metadata
	}{
		{"0.10 MariaDB", "Started dump at: 2026-11-29 08:47:05\nSHOW MASTER STATUS:\n\tLog: binlog.000003\n\tPos: 1234\n\tGTID:0-1-5\n\nFinished dump at: 2026-11-29 08:47:06\n",
			Metadata{"binlog.000003", 1234, "0-1-5", started, finished}},
		{"0.10 with replica status after", "Started dump at: 2026-11-29 08:47:05\nSHOW MASTER STATUS:\n\tLog: mysql-bin.000001\n\tPos: 100\n\tGTID:(null)\n\n" +
			"SHOW SLAVE STATUS:\n\tHost: replica.example\n\tLog: mysql-bin.1000000\n\tPos: 2000000\n\tGTID:(null)\n\nFinished dump at: 2026-11-29 08:47:06\n",
			Metadata{"mysql-bin.000001", 100, "", started, finished}},
		{"0.10 with replica status before", "Started dump at: 2026-11-29 08:47:05\nSHOW SLAVE STATUS:\n\tHost: r\n\tLog: other.000009\n\tPos: 9\n\n" +
			"SHOW MASTER STATUS:\n\tLog: binlog.000002\n\tPos: 4\n\tGTID:\n\nFinished dump at: 2026-11-29 08:47:06\n",
			Metadata{"binlog.000002", 4, "", started, finished}},
		{"0.10 no blank line, no GTID", "Started dump at: 2026-11-29 08:47:05\nSHOW MASTER STATUS:\n\tLog: binlog.000001\n\tPos: 50\nFinished dump at: 2026-11-29 08:47:06\n",
			Metadata{"binlog.000001", 50, "", started, finished}},
		{"0.10 MySQL multi-line GTID set", "Started dump at: 2026-11-29 08:47:05\r\nSHOW MASTER STATUS:\r\n\tLog: binlog.000007\r\n\tPos: 77\r\n\tGTID:3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5,\r\n" +
			"4E11FA47-71CA-11E1-9E33-C80AA9429562:1-3\r\n\r\nFinished dump at: 2026-11-29 08:47:06\r\n",
			Metadata{"binlog.000007", 77, "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5,4E11FA47-71CA-11E1-9E33-C80AA9429562:1-3", started, finished}},
		// mydumper 0.15/0.16 without --source-data (format of write_snapshot_info).
		{"new [source]", "# Started dump at: 2026-11-29 08:47:05\n[config]\nquote_character = BACKTICK\n\n[myloader_session_variables]\n" +
			"SQL_MODE='NO_AUTO_VALUE_ON_ZERO,STRICT_TRANS_TABLES' /*!40101\n\n[source]\n# Channel_Name = '' # It can be use to setup replication FOR CHANNEL\n" +
			"File = binlog.000003\nPosition = 1234\nExecuted_Gtid_Set = 0-1-5\n\n[`shop`.`orders`]\nreal_table_name=orders\nrows = 30000\n" +
			"[replication]\n# relay_master_log_file = 'relay.000001'\n# exec_master_log_pos = 99\nSOURCE_LOG_FILE = \"other.000001\"\nSOURCE_LOG_POS = 99\n" +
			"# Finished dump at: 2026-11-29 08:47:06\n",
			Metadata{"binlog.000003", 1234, "0-1-5", started, finished}},
		{"new [master]", "# Started dump at: 2026-11-29 08:47:05\n[master]\nFile = binlog.000004\nPosition = 4\nExecuted_Gtid_Set = \n# Finished dump at: 2026-11-29 08:47:06\n",
			Metadata{"binlog.000004", 4, "", started, finished}},
		// mydumper with --source-data: quoted values, SOURCE_LOG_* keys.
		{"new --source-data", "# Started dump at: 2026-11-29 08:47:05\n[source]\n# Channel_Name = '' # It can be use to setup replication FOR CHANNEL\n" +
			"#SOURCE_HOST = \"10.0.8.190\"\n#SOURCE_PORT = \n#SOURCE_USER = \"\"\n#SOURCE_PASSWORD = \"\"\n#SOURCE_SSL = {0|1}\n" +
			"executed_gtid_set = \"00008039-0000-0000-0000-000000008039:1-16476\"\nSOURCE_LOG_FILE = \"binlog.000002\"\nSOURCE_LOG_POS = 218820510\n" +
			"#SOURCE_AUTO_POSITION = {0|1}\nmyloader_exec_reset_replica = 0\n# Finished dump at: 2026-11-29 08:47:06\n",
			Metadata{"binlog.000002", 218820510, "00008039-0000-0000-0000-000000008039:1-16476", started, finished}},
		{"new auto-position: commented SOURCE_LOG_*", "# Started dump at: 2026-11-29 08:47:05\n[source]\nSOURCE_SSL = 1\n" +
			"executed_gtid_set = \"0-1-9\"\nSOURCE_AUTO_POSITION = 1\n#SOURCE_LOG_FILE = \"binlog.000002\"\n# SOURCE_LOG_POS = 218\n# Finished dump at: 2026-11-29 08:47:06\n",
			Metadata{"binlog.000002", 218, "0-1-9", started, finished}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMetadata(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseMetadataErrors(t *testing.T) {
	for name, tc := range map[string]struct{ in, msg string }{
		"no master status (binlog off)": {"Started dump at: 2026-11-29 08:47:05\nFinished dump at: 2026-11-29 08:47:06\n", "no binlog file and position"},
		"replica status only":           {"Started dump at: 2026-11-29 08:47:05\nSHOW SLAVE STATUS:\n\tLog: b.000001\n\tPos: 4\n\nFinished dump at: 2026-11-29 08:47:06\n", "no binlog file and position"},
		"new, no [source]":              {"# Started dump at: 2026-11-29 08:47:05\n[config]\nFile = x\n# Finished dump at: 2026-11-29 08:47:06\n", "no binlog file and position"},
		"new, position missing":         {"# Started dump at: 2026-11-29 08:47:05\n[source]\nFile = binlog.000001\n# Finished dump at: 2026-11-29 08:47:06\n", "no binlog file and position"},
		"bad position":                  {"Started dump at: 2026-11-29 08:47:05\nSHOW MASTER STATUS:\n\tLog: b.000001\n\tPos: x12\n\nFinished dump at: 2026-11-29 08:47:06\n", `position "x12"`},
		"unfinished dump":               {"Started dump at: 2026-11-29 08:47:05\nSHOW MASTER STATUS:\n\tLog: b.000001\n\tPos: 4\n", "did not complete"},
		"bad time":                      {"Started dump at: yesterday\n", "line 1: bad time"},
		"empty":                         {"", "no binlog file and position"},
	} {
		if _, err := ParseMetadata(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want it to contain %q", name, err, tc.msg)
		}
	}
}
