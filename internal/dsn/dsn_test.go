package dsn

import (
	"strings"
	"testing"
)

func TestParseRefusesDangerousOptions(t *testing.T) {
	for _, bad := range []string{
		"x@tcp(127.0.0.1:1)/?allowAllFiles=true",
		"x@tcp(127.0.0.1:1)/?allowCleartextPasswords=true",
		"x@tcp(127.0.0.1:1)/db?parseTime=true&allowOldPasswords=1",
		"x@tcp(127.0.0.1:1)/?tls=true&allowFallbackToPlaintext=true",
		"x:secret@tcp(127.0.0.1:1)/?AllowAllFiles=true",
	} {
		_, err := Parse("--source-dsn", bad)
		if err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("Parse(%q) = %v; want refused", bad, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Parse(%q): the error holds the password: %v", bad, err)
		}
	}
	for _, ok := range []string{"u:p@tcp(127.0.0.1:3306)/db?parseTime=true", "u@tcp(h:1)/", "u@unix(/run/mysqld.sock)/x?time_zone=%27SYSTEM%27"} {
		if _, err := Parse("--index-dsn", ok); err != nil {
			t.Errorf("Parse(%q): %v", ok, err)
		}
	}
}

func TestParseTargetAllowList(t *testing.T) {
	for _, ok := range []string{"u@tcp(h:1)/", "u@tcp(h:1)/?tls=true&timeout=5s&charset=utf8mb4", "u@tcp(h:1)/?readTimeout=1m&writeTimeout=1m&collation=utf8mb4_bin"} {
		if _, err := ParseTarget("target", ok); err != nil {
			t.Errorf("ParseTarget(%q): %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"u@tcp(h:1)/?sql_log_bin=0":          "not allowed",
		"u@tcp(h:1)/?multiStatements=true":   "not allowed",
		"u@tcp(h:1)/?allowAllFiles=true":     "refused",
		"u:pw@tcp(h:1)/":                     "password file",
		"u@tcp(h:1)/?interpolateParams=true": "not allowed",
	} {
		if _, err := ParseTarget("target", bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTarget(%q) = %v; want %q", bad, err, want)
		}
	}
}
