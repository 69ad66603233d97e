package storage

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Options are what Open takes besides the URL.
type Options struct {
	Logger *slog.Logger
	// HTTPClient replaces the S3 SDK's HTTP client.
	HTTPClient *http.Client
}

// Open returns the Store a URL names, checked to be usable:
//
//	/srv/dbtrail, ./backups               a local folder (created if missing)
//	file:///srv/dbtrail                   the same as a URL
//	s3://bucket/prefix?endpoint=http://127.0.0.1:7070&path-style=true&region=us-east-1
//
// The s3 query parameters, all optional: endpoint (the service's base URL;
// default AWS), path-style (true or false; default false), region (default
// from the SDK's environment, else us-east-1), credentials-file (a shared
// credentials file, the only source of keys when given), profile (its
// section, or the shared config profile), part-size (multipart part size in
// bytes, at least 5 MiB). Keys and secrets are never accepted in the URL,
// which ends up in process lists and logs: a URL with a user or password,
// or with a parameter that looks like a key, is refused.
func Open(ctx context.Context, rawURL string, opts Options) (Store, error) {
	if !strings.Contains(rawURL, "://") {
		return NewLocal(rawURL)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", redact(err))
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("open store: file URL with host %q: want file:///path", u.Host)
		}
		if u.RawQuery != "" || u.User != nil {
			return nil, fmt.Errorf("open store: a file URL takes no user or parameters")
		}
		if u.Path == "" {
			return nil, fmt.Errorf("open store: file URL without a path")
		}
		return NewLocal(u.Path)
	case "s3":
		cfg, err := ParseS3URL(rawURL)
		if err != nil {
			return nil, err
		}
		cfg.Logger = opts.Logger
		cfg.HTTPClient = opts.HTTPClient
		return NewS3(ctx, cfg)
	}
	return nil, fmt.Errorf("open store: unknown scheme %q: want a path, file:// or s3://", u.Scheme)
}

// ParseS3URL parses an s3:// URL (see Open) into an S3Config.
func ParseS3URL(rawURL string) (S3Config, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return S3Config{}, fmt.Errorf("parse s3 url: %w", redact(err))
	}
	if u.Scheme != "s3" {
		return S3Config{}, fmt.Errorf("parse s3 url: scheme %q is not s3", u.Scheme)
	}
	if u.User != nil {
		return S3Config{}, fmt.Errorf("parse s3 url: credentials never go in the URL; use the environment or credentials-file=")
	}
	cfg := S3Config{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}
	if cfg.Bucket == "" {
		return S3Config{}, fmt.Errorf("parse s3 url: no bucket: want s3://bucket/prefix")
	}
	if cfg.Prefix != "" {
		if err := CheckName(cfg.Prefix); err != nil {
			return S3Config{}, fmt.Errorf("parse s3 url: bad prefix: %w", err)
		}
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return S3Config{}, fmt.Errorf("parse s3 url: %w", err)
	}
	for k, vs := range q {
		if len(vs) != 1 {
			return S3Config{}, fmt.Errorf("parse s3 url: parameter %s given %d times", k, len(vs))
		}
		v := vs[0]
		switch k {
		case "endpoint":
			e, err := url.Parse(v)
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" || e.User != nil {
				return S3Config{}, fmt.Errorf("parse s3 url: endpoint %q: want http(s)://host[:port]", v)
			}
			cfg.Endpoint = strings.TrimRight(v, "/")
		case "path-style":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return S3Config{}, fmt.Errorf("parse s3 url: path-style=%q: want true or false", v)
			}
			cfg.PathStyle = b
		case "region":
			cfg.Region = v
		case "credentials-file":
			cfg.CredentialsFile = v
		case "profile":
			cfg.Profile = v
		case "part-size":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < minPartSize {
				return S3Config{}, fmt.Errorf("parse s3 url: part-size=%q: want bytes, at least %d", v, minPartSize)
			}
			cfg.PartSize = n
		default:
			if secretLike(k) {
				return S3Config{}, fmt.Errorf("parse s3 url: parameter %s: credentials never go in the URL; use the environment or credentials-file=", k)
			}
			return S3Config{}, fmt.Errorf("parse s3 url: unknown parameter %s", k)
		}
	}
	return cfg, nil
}

// secretLike reports whether a parameter name looks like a key or secret.
func secretLike(k string) bool {
	k = strings.ToLower(k)
	for _, w := range []string{"key", "secret", "password", "token", "credential"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// redact keeps a URL parse error from echoing the URL, which may hold a
// secret by mistake.
func redact(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}
