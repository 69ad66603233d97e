package sqlport

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/internal/views"
)

// DefaultAddr is where the port listens by default: loopback.
const DefaultAddr = "127.0.0.1:3307"

// ServerVersion is the version the port announces (and @@version
// answers): a MySQL 8.0 client dialect, marked as dbtrail's.
const ServerVersion = "8.0.36-dbtrail"

// Config is what a port serves and its bounds.
type Config struct {
	// Addr is the listen address (DefaultAddr when empty): a loopback
	// address, or any other with TLS (every connection must then use it).
	Addr string
	// TLSCert and TLSKey are the port's certificate and key (PEM files,
	// both or neither; api.LoadTLS): clients may ask for TLS.
	TLSCert, TLSKey string
	// RequireTLS refuses every connection that does not switch to TLS
	// (error 3159); it is implied by a listen address not loopback.
	RequireTLS bool
	// TokenFile is the API's token file (api.LoadTokens): each token's
	// name is a user, its secret the user's password.
	TokenFile string
	// Session is every connection's views session (SourceDir,
	// MemoryLimit, Threads, Sandbox); its Tail is set by the port.
	Session views.SessionOptions
	// Tail, when set, answers at the live tail and at SET @@dbtrail_at
	// moments; nil reads the current snapshot alone (and refuses
	// SET @@dbtrail_at).
	Tail *tail.Reader
	// Timeout bounds each statement (DefaultTimeout when 0); MaxRows the
	// rows of an answer (DefaultMaxRows when 0): more is an error.
	Timeout time.Duration
	MaxRows int
	// MaxBytes bounds an answer's rows as sent (api.DefaultQueryMaxBytes
	// when 0): more is an error. Slots bounds the statements DuckDB answers
	// at once, shared with the API in dev (api.DefaultMaxQueries of the
	// port's own when nil).
	MaxBytes int64
	Slots    *api.QuerySlots
	// CacheDir is where the tables staged at a moment are kept, shared by
	// every connection (a new folder under the system's temp folder when
	// empty, removed when Serve ends); CacheBytes bounds them
	// (DefaultCacheBytes when 0).
	CacheDir   string
	CacheBytes int64
	Log        *slog.Logger
}

// Bounds of a statement through the port.
const (
	DefaultTimeout = 60 * time.Second
	DefaultMaxRows = 100_000
)

// Server is a listening port.
type Server struct {
	cfg    Config
	cache  *stageCache
	ln     net.Listener
	srv    *server.Server
	auth   server.AuthenticationHandler
	conns  conns
	served atomic.Bool
	wg     sync.WaitGroup
}

// Listen checks cfg, reads the token file and the TLS files and listens
// on cfg.Addr (a loopback address, or any other with TLS).
func Listen(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxRows == 0 {
		cfg.MaxRows = DefaultMaxRows
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if err := defaultLimits(&cfg); err != nil {
		return nil, err
	}
	if cfg.Session.Tail != nil {
		return nil, fmt.Errorf("sql port: the session's tail is the port's (Config.Tail)")
	}
	tc, requireTLS, err := transport(cfg)
	if err != nil {
		return nil, fmt.Errorf("sql port: %w", err)
	}
	method, key, err := authMethod(tc)
	if err != nil {
		return nil, fmt.Errorf("sql port: %w", err)
	}
	auth, err := credentials(cfg.TokenFile, requireTLS, method)
	if err != nil {
		return nil, fmt.Errorf("sql port: %w", err)
	}
	cache, err := openCache(&cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		cache.close()
		return nil, fmt.Errorf("sql port: listen on %s: %w", cfg.Addr, err)
	}
	srv := server.NewServer(ServerVersion, mysql.DEFAULT_COLLATION_ID, method, key, tc)
	return &Server{cfg: cfg, cache: cache, ln: ln, srv: srv, auth: auth}, nil
}

// Addr is the address the port listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve accepts connections until ctx ends (then it closes the listener
// and waits for the connections to end) and serves each in its own
// goroutine.
func (s *Server) Serve(ctx context.Context) error {
	s.served.Store(true)
	stop := context.AfterFunc(ctx, func() { s.ln.Close() })
	defer stop()
	defer s.cache.close()
	defer s.wg.Wait()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("sql port: accept: %w", err)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(ctx, c)
		}()
	}
}

// Close stops listening; a port that never served also removes its staged
// tables' folder (Serve removes it when it ends).
func (s *Server) Close() error {
	err := s.ln.Close()
	if !s.served.Load() {
		err = errors.Join(err, s.cache.close())
	}
	return err
}

// serveConn authenticates c and answers its commands until it quits or
// ctx ends.
func (s *Server) serveConn(ctx context.Context, c net.Conn) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	h := &handler{cfg: &s.cfg, ctx: ctx, cache: s.cache, conns: &s.conns, closeConn: cancel}
	defer h.close()
	conn, err := s.srv.NewCustomizedConn(c, s.auth, h)
	if err != nil {
		s.cfg.Log.Info("sql port: connection refused", "remote", c.RemoteAddr().String(), "err", err)
		c.Close()
		return
	}
	h.user, h.id = conn.GetUser(), conn.ConnectionID()
	h.results = resultsCollation(uint16(conn.Charset()))
	s.conns.add(h.id, h)
	defer s.conns.remove(h.id)
	s.cfg.Log.Debug("sql port: connected", "remote", c.RemoteAddr().String(), "user", h.user)
	for !conn.Closed() {
		if err := conn.HandleCommand(); err != nil {
			if !conn.Closed() {
				s.cfg.Log.Debug("sql port: connection ended", "user", h.user, "err", err)
				conn.Close()
			}
			return
		}
	}
}

// credentials are the users of the token file path: each token's name
// with its secret as the password (authentication plugin method). The file is
// read and checked by api.LoadTokens first (mode 0600, its syntax).
func credentials(path string, requireTLS bool, method string) (server.AuthenticationHandler, error) {
	if path == "" {
		return nil, fmt.Errorf("a token file is required: its tokens' names are the users, their secrets the passwords")
	}
	toks, err := api.LoadTokens(path)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	auth := server.NewInMemoryAuthenticationHandler(method)
	i := 0
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// LoadTokens accepted every line: "ro|rw SECRET [NAME]", in the
		// order of toks, whose Name is the user.
		f := strings.Fields(line)
		if i >= len(toks) {
			return nil, fmt.Errorf("token file %s changed while it was read", path)
		}
		if err := auth.AddUser(toks[i].Name, f[1]); err != nil {
			return nil, fmt.Errorf("token file %s: user %s: %w", path, toks[i].Name, err)
		}
		i++
	}
	unknown := make([]byte, 32)
	if _, err := rand.Read(unknown); err != nil {
		return nil, fmt.Errorf("sql port: %w", err)
	}
	return users{auth, hex.EncodeToString(unknown), requireTLS, method}, nil
}

// users is the token file's users; an unknown user is given a password no
// one knows, so it is refused as a wrong password is (error 1045), and
// which users exist does not show.
type users struct {
	*server.InMemoryAuthenticationHandler
	unknown    string
	requireTLS bool   // refuse a connection without TLS (tls.go)
	method     string // the users' authentication plugin (authMethod)
}

// GetCredential is the user's credential, or the unknown one.
func (u users) GetCredential(name string) (server.Credential, bool, error) {
	c, found, err := u.InMemoryAuthenticationHandler.GetCredential(name)
	if err != nil || found {
		return c, found, err
	}
	return server.Credential{Passwords: []string{u.unknown}, AuthPluginName: u.method}, true, nil
}
