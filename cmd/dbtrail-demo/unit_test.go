package main

import (
	"io"
	"strings"
	"testing"
)

func TestParseFlags(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil || c.dir != ".dbtrail/demo" || c.tps != 5 || c.duration != 0 ||
		c.sourcePort != 33061 || c.indexPort != 33062 || c.metricsAddr != "127.0.0.1:9464" ||
		c.frontendAddr != "127.0.0.1:7233" || c.uiAddr != "127.0.0.1:8233" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	for _, bad := range [][]string{
		{"--tps", "0"}, {"--tps", "100000"}, {"--duration", "-1s"},
		{"--source-port", "4000", "--index-port", "4000"}, {"--index-port", "70000"},
		{"--metrics-addr", "0.0.0.0:9464"}, {"--metrics-addr", "9464"}, {"extra"},
		{"--frontend-addr", "0.0.0.0:7233"}, {"--ui-addr", "example.com:8233"}, {"--ui-addr", "127.0.0.1:0"},
		{"--ui-addr", "127.0.0.1:9464"}, {"--frontend-addr", "127.0.0.1:8233"},
	} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := parseFlags([]string{"--source-port", "0", "--index-port", "0", "--metrics-addr", "[::1]:1"}, io.Discard); err != nil {
		t.Errorf("free ports and IPv6 loopback refused: %v", err)
	}
}

func TestPrefixWriter(t *testing.T) {
	var b strings.Builder
	p := &prefixWriter{prefix: "[x] ", w: &b}
	_, _ = p.Write([]byte("one\ntw"))
	_, _ = p.Write([]byte("o\nthree"))
	p.flush()
	if got, want := b.String(), "[x] one\n[x] two\n[x] three\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestPrefixWriterProgress(t *testing.T) {
	var b strings.Builder
	p := &prefixWriter{prefix: "[x] ", w: &b, progress: true}
	_, _ = p.Write([]byte("started\n\r[#.] 1/2   \r[#.] 1/2   "))
	_, _ = p.Write([]byte("\r[##] 2/2 \n\ndone"))
	p.flush()
	if got, want := b.String(), "[x] started\n[x] [#.] 1/2\n[x] [##] 2/2\n[x] done\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestChildName(t *testing.T) {
	for args, want := range map[string]string{
		"dev --data-dir x":                "dbtrail dev",
		"backup full --temporal-addr a:1": "dbtrail backup full",
		"status":                          "dbtrail status",
	} {
		if got := childName(strings.Fields(args)); got != want {
			t.Errorf("childName(%q) = %q, want %q", args, got, want)
		}
	}
}

func TestChildEnvironDropsInheritedSettings(t *testing.T) {
	env := filterEnviron([]string{"PATH=/bin", "DBTRAIL_SOURCE=other", "DBTRAIL_INDEX_PASSWORD_FILE=/x", "DBTRAIL_LOG_LEVEL=debug"})
	if got := strings.Join(env, " "); got != "PATH=/bin DBTRAIL_LOG_LEVEL=debug" {
		t.Fatalf("got %q", got)
	}
}
