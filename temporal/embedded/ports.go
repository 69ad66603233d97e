package embedded

import (
	"fmt"
	"net"
	"runtime"
	"strconv"
)

// loopback is where the embedded server's internal services listen.
const loopback = "127.0.0.1"

// hostPort splits addr ("host:port") into an IP and a port. "localhost" and
// an empty host mean 127.0.0.1; port 0 picks a free port. The server binds
// to IPs only, so other host names are refused.
func hostPort(addr, what string) (ip string, port int, err error) {
	host, port, err := parseAddr(addr, what)
	if err != nil {
		return "", 0, err
	}
	if port == 0 {
		if port, err = freePort(host); err != nil {
			return "", 0, fmt.Errorf("%s address %q: %w", what, addr, err)
		}
	} else if err := checkFree(host, port); err != nil {
		return "", 0, fmt.Errorf("%s address %s is taken (another dbtrail dev or Temporal server running?): %w", what, addr, err)
	}
	return host, port, nil
}

// parseAddr splits addr ("host:port") into an IP and a port without
// binding anything. "localhost" and an empty host mean 127.0.0.1; other
// host names are refused.
func parseAddr(addr, what string) (ip string, port int, err error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%s address %q: %w", what, addr, err)
	}
	if host == "" || host == "localhost" {
		host = loopback
	}
	if net.ParseIP(host) == nil {
		return "", 0, fmt.Errorf("%s address %q: host must be an IP address or localhost", what, addr)
	}
	port, err = strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%s address %q: bad port", what, addr)
	}
	return host, port, nil
}

// joinHostPort is net.JoinHostPort for an int port.
func joinHostPort(ip string, port int) string { return net.JoinHostPort(ip, strconv.Itoa(port)) }

// freePort returns a port on host that nothing listens on. On Linux it
// leaves the port in TIME_WAIT so the kernel does not hand the same
// ephemeral port to another bind(:0) before the server takes it (the
// technique of the Temporal CLI's dev server).
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", joinHostPort(host, 0))
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		return port, nil
	}
	c, err := net.Dial("tcp", joinHostPort(host, port))
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer c.Close()
	s, err := l.Accept()
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	s.Close() // closed from the server side: TIME_WAIT holds the port for us
	return port, nil
}

// checkFree fails when something already listens on host:port.
func checkFree(host string, port int) error {
	l, err := net.Listen("tcp", joinHostPort(host, port))
	if err != nil {
		return err
	}
	return l.Close()
}

// isLoopback reports whether ip is a loopback address.
func isLoopback(ip string) bool {
	p := net.ParseIP(ip)
	return p != nil && p.IsLoopback()
}
