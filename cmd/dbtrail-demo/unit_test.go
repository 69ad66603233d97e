package main

import (
	"io"
	"strings"
	"testing"
)

func TestParseFlags(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil || c.dir != ".dbtrail/demo" || c.tps != 5 || c.duration != 0 ||
		c.sourcePort != 33061 || c.indexPort != 33062 || c.metricsAddr != "127.0.0.1:9464" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	for _, bad := range [][]string{
		{"--tps", "0"}, {"--tps", "100000"}, {"--duration", "-1s"},
		{"--source-port", "4000", "--index-port", "4000"}, {"--index-port", "70000"},
		{"--metrics-addr", "0.0.0.0:9464"}, {"--metrics-addr", "9464"}, {"extra"},
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

func TestChildEnvironDropsInheritedSettings(t *testing.T) {
	env := filterEnviron([]string{"PATH=/bin", "DBTRAIL_SOURCE=other", "DBTRAIL_INDEX_PASSWORD_FILE=/x", "DBTRAIL_LOG_LEVEL=debug"})
	if got := strings.Join(env, " "); got != "PATH=/bin DBTRAIL_LOG_LEVEL=debug" {
		t.Fatalf("got %q", got)
	}
}
