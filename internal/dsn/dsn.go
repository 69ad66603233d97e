// Package dsn is the one rule for the go-sql-driver DSNs dbtrail connects
// with, whoever gave them: the source, the index, a restore target and its
// replicas. A DSN may not turn on an option that lets the server it names
// read the worker's files (allowAllFiles: LOAD DATA LOCAL INFILE of any
// path) or receive a password in clear or in the pre-4.1 hash
// (allowCleartextPasswords, allowOldPasswords, allowFallbackToPlaintext).
// A restore target's DSN is held to an allow-list besides (ParseTarget):
// it names a server, how to reach it and the connection's character set,
// nothing that changes the session.
package dsn

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// refused are the options no DSN may turn on, with why.
var refused = map[string]string{
	"allowallfiles":            "it lets the server read any file of this machine (LOAD DATA LOCAL INFILE)",
	"allowcleartextpasswords":  "it sends the password in clear",
	"allowoldpasswords":        "it sends the password with the insecure pre-4.1 hash",
	"allowfallbacktoplaintext": "it lets the connection fall back from TLS to plain text",
}

// TargetOptions are the only options a restore target's (or replica's)
// DSN may carry: TLS, timeouts and the character set.
var TargetOptions = []string{"tls", "timeout", "readTimeout", "writeTimeout", "charset", "collation", "maxAllowedPacket"}

// Parse parses text (what names it in errors, e.g. "--source-dsn") and
// refuses an option that endangers the worker (see the package doc). The
// error never holds the password.
func Parse(what, text string) (*mysql.Config, error) {
	cfg, err := mysql.ParseDSN(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	opts, err := options(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	for _, k := range opts {
		if why, bad := refused[strings.ToLower(k)]; bad {
			return nil, fmt.Errorf("%s: option %s is refused: %s", what, k, why)
		}
	}
	if cfg.AllowAllFiles || cfg.AllowCleartextPasswords || cfg.AllowOldPasswords || cfg.AllowFallbackToPlaintext {
		return nil, fmt.Errorf("%s: an option that endangers this machine's files or the password is on", what)
	}
	return cfg, nil
}

// ParseTarget is Parse for a restore target or replica: besides, only
// TargetOptions are allowed (no session variable, no driver switch) and
// the DSN carries no password (it comes from a password file).
func ParseTarget(what, text string) (*mysql.Config, error) {
	cfg, err := Parse(what, text)
	if err != nil {
		return nil, err
	}
	if cfg.Passwd != "" {
		return nil, fmt.Errorf("%s carries a password: give it in a password file", what)
	}
	opts, _ := options(text)
	for _, k := range opts {
		if !slices.Contains(TargetOptions, k) {
			return nil, fmt.Errorf("%s: option %q is not allowed for a restore target (allowed: %s)", what, k, strings.Join(TargetOptions, ", "))
		}
	}
	return cfg, nil
}

// options are the names of the options text's query part sets, found as
// go-sql-driver finds them: after the last '/', from the first '?'.
func options(text string) ([]string, error) {
	slash := strings.LastIndexByte(text, '/')
	if slash < 0 {
		return nil, nil
	}
	_, query, ok := strings.Cut(text[slash+1:], "?")
	if !ok || query == "" {
		return nil, nil
	}
	var out []string
	for _, kv := range strings.Split(query, "&") {
		k, _, _ := strings.Cut(kv, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			return nil, fmt.Errorf("option %q: %w", k, err)
		}
		out = append(out, name)
	}
	return out, nil
}
