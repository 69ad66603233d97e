package api

import (
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// The cross-site rules (OWASP's for JSON APIs), checked before anything
// else so that a web page the user visits can neither start a job nor read
// an answer, with or without tokens:
//
//   - the Host header names this server: its listen address, for a
//     loopback listener also localhost, 127.0.0.1 and [::1] at its port,
//     for an every-address listener a local IP address at its port, or a
//     configured name (Config.Hosts, a reverse proxy's): anything else is
//     421 wrong_host (DNS rebinding sends the attacker's name);
//   - an Origin header, when present, is the server's own
//     (scheme://host:port it is reached at, or a configured name): else
//     403 cross_site; no Origin (a CLI client) is fine;
//   - Sec-Fetch-Site: cross-site is 403 cross_site;
//   - every POST carries Content-Type: application/json (requireJSON), a
//     type no cross-site form or no-cors fetch can send: else 415.

// hosts is what the Host header may name.
type hosts struct {
	// listen is the listen address's host (lowercase, no brackets); ""
	// for every address.
	listen string
	port   string
	// loopback: listen is a loopback address or localhost.
	loopback bool
	// names are the configured names, lowercase: "name" (any port) or
	// "name:port".
	names []string
	// scheme is http or https, the scheme of the server's own origin.
	scheme string
	// local reports whether ip is an address of this machine (every-address
	// listeners).
	local func(net.IP) bool
}

// newHosts returns the hosts of a server listening on addr (host:port, the
// listener's own address) with the configured names.
func newHosts(addr string, names []string, tls bool) (hosts, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || port == "0" {
		return hosts{}, fmt.Errorf("api: Config.Addr %q: want the listener's host:port", addr)
	}
	h := hosts{listen: normHost(host), port: port, scheme: "http", local: isLocalIP}
	if tls {
		h.scheme = "https"
	}
	if ip := net.ParseIP(h.listen); ip != nil && ip.IsUnspecified() {
		h.listen = ""
	}
	h.loopback, _ = IsLoopback(addr)
	for _, n := range names {
		name := normHost(n)
		nh, np, err := net.SplitHostPort(name)
		if err != nil {
			nh, np = name, ""
		}
		if nh == "" || strings.ContainsAny(nh, "/@?#[] ") || (np != "" && strings.Trim(np, "0123456789") != "") {
			return hosts{}, fmt.Errorf("api host %q: want NAME or NAME:PORT", n)
		}
		h.names = append(h.names, name)
	}
	return h, nil
}

// normHost is a host (or host:port) lowercase, without an IPv6 literal's
// brackets when it has no port and without a trailing dot.
func normHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	return strings.TrimSuffix(h, ".")
}

// split is hostport's host and port; a missing port is defPort.
func split(hostport, defPort string) (host, port string) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, defPort
	}
	return normHost(host), port
}

// named reports whether host:port is a configured name.
func (h hosts) named(host, port string) bool {
	return slices.ContainsFunc(h.names, func(n string) bool {
		return n == host || n == net.JoinHostPort(host, port)
	})
}

// allowed reports whether host:port names this server: a configured name,
// or the listen port on the listen host, a loopback name of a loopback
// listener, or a local address of an every-address listener.
func (h hosts) allowed(host, port string) bool {
	if h.named(host, port) {
		return true
	}
	if port != h.port || host == "" {
		return false
	}
	ip := net.ParseIP(host)
	switch {
	case host == h.listen:
		return true
	case ip != nil && ip.Equal(net.ParseIP(h.listen)):
		return true
	case h.loopback && (host == "localhost" || (ip != nil && (ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback)))):
		return true
	case h.listen == "" && (host == "localhost" || (ip != nil && h.local(ip))):
		return true
	}
	return false
}

// isLocalIP reports whether ip is a loopback address or one of this
// machine's interface addresses.
func isLocalIP(ip net.IP) bool {
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	return slices.ContainsFunc(addrs, func(a net.Addr) bool {
		n, ok := a.(*net.IPNet)
		return ok && n.IP.Equal(ip)
	})
}

// defaultPort is the port of a URL of scheme without one.
func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// checkHost refuses a Host header that does not name this server.
func (h hosts) checkHost(r *http.Request) *Error {
	host, port := split(r.Host, defaultPort(h.scheme))
	if h.allowed(host, port) {
		return nil
	}
	return &Error{Status: http.StatusMisdirectedRequest, Code: CodeWrongHost,
		Message: fmt.Sprintf("Host %q is not an address this server answers to (it listens on %s); behind a proxy or under another name, start it with --api-host NAME",
			clip(r.Host), net.JoinHostPort(orAll(h.listen), h.port))}
}

// checkOrigin refuses a cross-site request: an Origin that is not the
// server's own, or Sec-Fetch-Site: cross-site.
func (h hosts) checkOrigin(r *http.Request) *Error {
	if site := r.Header.Get("Sec-Fetch-Site"); strings.EqualFold(site, "cross-site") {
		return &Error{Status: http.StatusForbidden, Code: CodeCrossSite,
			Message: "a cross-site request (Sec-Fetch-Site: cross-site) is refused: this API answers its own origin and clients without one"}
	}
	origin, ok := r.Header["Origin"]
	if !ok {
		return nil
	}
	o := strings.Join(origin, ",")
	if u, err := url.Parse(o); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		u.User == nil && (u.Path == "" || u.Path == "/") && u.RawQuery == "" {
		host, port := split(u.Host, defaultPort(u.Scheme))
		if h.named(host, port) || (u.Scheme == h.scheme && h.allowed(host, port)) {
			return nil
		}
	}
	return &Error{Status: http.StatusForbidden, Code: CodeCrossSite,
		Message: fmt.Sprintf("Origin %q is not this server's own: cross-site requests are refused (a client without an Origin header, or --api-host NAME for a proxy's name)", clip(o))}
}

// guard answers a request that breaks a cross-site rule (Host, Origin,
// Sec-Fetch-Site) with its refusal, logged, and passes the others to next.
func (s *server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := s.hosts.checkHost(r)
		if e == nil {
			e = s.hosts.checkOrigin(r)
		}
		if e == nil {
			next.ServeHTTP(w, r)
			return
		}
		s.log.Warn("request refused", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", e.Status),
			slog.String("code", e.Code), slog.String("host", clip(r.Host)), slog.String("origin", clip(r.Header.Get("Origin"))),
			slog.String("remote", r.RemoteAddr))
		writeError(w, r, s.log, e)
	})
}

// requireJSON refuses a request whose Content-Type is not application/json
// (parameters such as charset allowed), an absent one included: a body-less
// POST needs it too, so that no cross-site form can send it.
func requireJSON(r *http.Request) *Error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return &Error{Status: http.StatusUnsupportedMediaType, Code: CodeMediaType,
			Message: fmt.Sprintf("%s %s needs Content-Type: application/json (also without a body)", r.Method, r.URL.Path)}
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return &Error{Status: http.StatusUnsupportedMediaType, Code: CodeMediaType,
			Message: fmt.Sprintf("Content-Type %q: send application/json", clip(ct))}
	}
	return nil
}

// clip bounds a header value quoted in a message or a log line.
func clip(s string) string {
	const most = 100
	if len(s) > most {
		return s[:most] + "…"
	}
	return s
}

// orAll is host, or "*" for every address.
func orAll(host string) string {
	if host == "" {
		return "*"
	}
	return host
}
