// Package embedded runs a Temporal server inside the process (SQLite
// persistence, optional web UI) for `dbtrail dev` and the end-to-end tests.
// The client-side helpers (Dial, StartWorkflow, schedules) are package
// temporalclient.
//
// Only this package links the Temporal server (with temporal/e2e, the
// end-to-end tests that start it).
package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiserveroptions "github.com/temporalio/ui-server/v2/server/server_options"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Defaults of ServerConfig.
const (
	DefaultFrontendAddr = "127.0.0.1:7233"
	DefaultUIAddr       = "127.0.0.1:8233"
	// NamespaceRetention is how long closed workflows stay in history, for
	// a namespace the embedded server creates.
	NamespaceRetention = 7 * 24 * time.Hour
	// DBFile is the SQLite file's name inside ServerConfig.DataDir.
	DBFile = "temporal.db"
)

const (
	clusterName = "active"
	// clusterID is fixed so that every start of one data folder agrees.
	clusterID = "5b0e2a8e-7c1f-4d3a-9f6e-2d8c4b1a7e90"
)

// ServerConfig configures the embedded Temporal server.
type ServerConfig struct {
	// DataDir holds the SQLite database <DataDir>/temporal.db, so workflow
	// history and schedules survive a restart. Created if missing. Required.
	DataDir string
	// FrontendAddr is where clients and workers connect (gRPC), host:port
	// with an IP or localhost. Default 127.0.0.1:7233; port 0 picks one.
	// An address beyond loopback is refused without TLS.
	FrontendAddr string
	// UIAddr is where the web UI listens (its assets are embedded: no
	// network needed); "" runs no UI. DefaultUIAddr is the usual value.
	// Port 0 picks one. An address beyond loopback is refused without TLS;
	// with TLS the UI is served there over HTTPS and requires a client
	// certificate signed by TLS.ClientCAFile's CA, like the frontend.
	UIAddr string
	// TLS, when set, serves the frontend over TLS and requires client
	// certificates (mTLS). nil: plaintext, on loopback only.
	TLS *FrontendTLS
	// Namespace is registered (retention NamespaceRetention) if missing.
	// Default "default".
	Namespace string
	// Logger receives the server's warnings and errors (its info chatter is
	// dropped). Default slog.Default().
	Logger *slog.Logger
}

// Server is a running embedded Temporal server. Its history, matching and
// worker services listen on free loopback ports; the frontend and the UI
// where ServerConfig says.
type Server struct {
	server   temporal.Server
	ui       *uiserver.Server
	frontend string
	uiURL    string
	ns       string
	tls      *FrontendTLS
	uiProxy  *http.Server // the UI's mTLS listener beyond loopback, or nil
	unlock   func()
	logMin   *slog.LevelVar
	sqlCfg   *config.SQL
	stopOnce sync.Once
}

// StartServer creates or upgrades the SQLite schema in cfg.DataDir
// (idempotent), registers the namespace if missing, and starts the frontend,
// history, matching and worker services and, if cfg.UIAddr is set, the
// web UI.
// It returns once the frontend answers for the namespace, or with an error
// (nothing left running) when it did not by ctx's end. Only one server may
// use a DataDir at a time; a second is refused.
func StartServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("temporal server: DataDir is required")
	}
	if cfg.FrontendAddr == "" {
		cfg.FrontendAddr = DefaultFrontendAddr
	}
	if cfg.Namespace == "" {
		cfg.Namespace = temporalclient.DefaultNamespace
	}
	log := orDefault(cfg.Logger)
	if err := cfg.Check(); err != nil {
		return nil, fmt.Errorf("temporal server: %w", err)
	}
	if err := os.MkdirAll(cfg.DataDir, filemode.Dir()); err != nil {
		return nil, fmt.Errorf("temporal server: %w", err)
	}
	unlock, err := lockDir(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("temporal server: %w", err)
	}
	s, err := start(ctx, cfg, log)
	if err != nil {
		unlock()
		return nil, fmt.Errorf("temporal server: %w", err)
	}
	s.unlock = unlock
	return s, nil
}

func start(ctx context.Context, cfg ServerConfig, log *slog.Logger) (*Server, error) {
	feIP, fePort, err := hostPort(cfg.FrontendAddr, "frontend")
	if err != nil {
		return nil, err
	}
	frontend := joinHostPort(feIP, fePort)
	sqlCfg := sqliteConfig(filepath.Join(cfg.DataDir, DBFile))
	if err := ensureSchema(sqlCfg); err != nil {
		return nil, err
	}
	nsCfg, err := sqliteschema.NewNamespaceConfig(clusterName, cfg.Namespace, false, nil)
	if err != nil {
		return nil, fmt.Errorf("namespace %q: %w", cfg.Namespace, err)
	}
	nsCfg.Detail.Config.Retention = durationpb.New(NamespaceRetention)
	if err := sqliteschema.CreateNamespaces(sqlCfg, nsCfg); err != nil {
		return nil, fmt.Errorf("register namespace %q: %w", cfg.Namespace, err)
	}

	conf, hosts, err := serverConfig(feIP, fePort, sqlCfg)
	if err != nil {
		return nil, err
	}
	if cfg.TLS != nil {
		cfg.TLS.apply(conf)
	}
	slogger := newServerLogger(log)
	authorizer, err := authorization.GetAuthorizerFromConfig(&conf.Global.Authorization)
	if err != nil {
		return nil, fmt.Errorf("authorizer: %w", err)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&conf.Global.Authorization, slogger)
	if err != nil {
		return nil, fmt.Errorf("claim mapper: %w", err)
	}
	dyn := dynamicconfig.StaticClient{
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key():                 8096,
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// The history queues' poll limits are per shard, sized for clusters
		// of hundreds of shards; this server has one. At the default 20 polls
		// a second, once a workflow had spent the limiter's burst every task
		// it scheduled waited for the transfer queue's next poll: ~40 ms per
		// workflow and activity task, a step of a refresh started within a
		// second or two of the previous one cost 90 ms instead of 10.
		dynamicconfig.TransferProcessorMaxPollRPS.Key():   queuePollRPS,
		dynamicconfig.TimerProcessorMaxPollRPS.Key():      queuePollRPS,
		dynamicconfig.VisibilityProcessorMaxPollRPS.Key(): queuePollRPS,
	}
	srv, err := temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(slogger),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(dyn),
	)
	if err != nil {
		return nil, fmt.Errorf("build server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	s := &Server{server: srv, frontend: frontend, ns: cfg.Namespace, tls: cfg.TLS, unlock: func() {}, logMin: slogger.min, sqlCfg: sqlCfg}
	if cfg.UIAddr != "" {
		if err := s.startUI(ctx, cfg.UIAddr, log); err != nil {
			s.Stop()
			return nil, err
		}
	}
	if err := waitReady(ctx, s.Connection()); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// queuePollRPS is the most polls a second of each of the one history
// shard's task queues (transfer, timer, visibility); a poll happens when
// the shard has new tasks, so an idle server polls no more than before.
const queuePollRPS = 1000

// sqliteConfig is the persistence config of the SQLite file at path: WAL
// journal (readers never wait for the writer), a busy timeout instead of
// "database is locked" errors, and SQLite's default synchronous=FULL: a
// committed workflow step survives a power cut. Pragma keys are bare (journal_mode).
func sqliteConfig(path string) *config.SQL {
	return &config.SQL{
		PluginName:   sqliteplugin.PluginName,
		DatabaseName: path,
		ConnectAttributes: map[string]string{
			"mode":         "rwc",
			"journal_mode": "wal",
			"busy_timeout": "10000",
		},
	}
}

// serverConfig builds the server config: one history shard, the frontend on
// feIP:fePort, every other service (and the frontend's HTTP API) on a free
// loopback port.
func serverConfig(feIP string, fePort int, sqlCfg *config.SQL) (*config.Config, map[primitives.ServiceName]static.Hosts, error) {
	var conf config.Config
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = loopback
	conf.Persistence.DefaultStore = "sqlite"
	conf.Persistence.VisibilityStore = "sqlite"
	conf.Persistence.NumHistoryShards = 1
	conf.Persistence.DataStores = map[string]config.DataStore{"sqlite": {SQL: sqlCfg}}
	httpPort, err := freePort(loopback)
	if err != nil {
		return nil, nil, err
	}
	services := map[string]config.Service{}
	hosts := map[primitives.ServiceName]static.Hosts{}
	for _, name := range []primitives.ServiceName{primitives.FrontendService, primitives.HistoryService, primitives.MatchingService, primitives.WorkerService} {
		var svc config.Service
		if name == primitives.FrontendService {
			svc.RPC.BindOnIP, svc.RPC.GRPCPort, svc.RPC.HTTPPort = feIP, fePort, httpPort
		} else {
			p, err := freePort(loopback)
			if err != nil {
				return nil, nil, err
			}
			svc.RPC.BindOnIP, svc.RPC.GRPCPort = loopback, p
		}
		services[string(name)] = svc
		hosts[name] = static.SingleLocalHost(joinHostPort(loopback, svc.RPC.GRPCPort))
	}
	conf.Services = services
	conf.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             joinHostPort(loopback, fePort),
				HTTPAddress:            joinHostPort(loopback, httpPort),
				ClusterID:              clusterID,
			},
		},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	conf.PublicClient.HostPort = joinHostPort(loopback, fePort)
	return &conf, hosts, nil
}

// startUI starts the web UI on addr and waits until it answers. The UI
// server's Start blocks and exits the process when it cannot listen, so the
// address is checked first. With TLS the UI dials the frontend with
// TLS.Client's certificate; an addr beyond loopback (allowed only with
// TLS, ServerConfig.check) is then served by an mTLS proxy (uiProxy) and
// the UI itself listens on a free loopback port.
func (s *Server) startUI(ctx context.Context, addr string, log *slog.Logger) error {
	ip, port, err := hostPort(addr, "UI")
	if err != nil {
		return err
	}
	uiIP, uiPort := ip, port
	if !isLoopback(ip) { // the mTLS proxy listens on addr, the UI behind it
		uiIP = loopback
		if uiPort, err = freePort(loopback); err != nil {
			return err
		}
	}
	cfg := &uiconfig.Config{
		Host:                uiIP,
		Port:                uiPort,
		TemporalGRPCAddress: s.frontend,
		EnableUI:            true,
		DefaultNamespace:    s.ns,
		CORS:                uiconfig.CORS{CookieInsecure: true},
		HideLogs:            true,
		DisableNewsFetch:    true,
	}
	if s.tls != nil {
		cfg.TLS = uiconfig.TLS{CaFile: s.tls.Client.CAFile, CertFile: s.tls.Client.CertFile, KeyFile: s.tls.Client.KeyFile,
			ServerName: s.tls.Client.ServerName, EnableHostVerification: true}
	}
	s.ui = uiserver.NewServer(uiserveroptions.WithConfigProvider(cfg))
	go func() {
		if err := s.ui.Start(); err != nil {
			log.Error("Temporal UI stopped", "error", err)
		}
	}()
	local := "http://" + joinHostPort(uiIP, uiPort)
	s.uiURL = local
	if !isLoopback(ip) {
		if s.uiProxy, err = serveMTLS(joinHostPort(ip, port), local, s.tls, log); err != nil {
			return err
		}
		s.uiURL = "https://" + joinHostPort(ip, port)
	}
	return poll(ctx, "Temporal UI at "+local, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, local+"/healthz", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %s", resp.Status)
		}
		return nil
	})
}

// FrontendAddr is the host:port clients and workers dial.
func (s *Server) FrontendAddr() string { return s.frontend }

// Connection is how a client dials the server: its frontend address and
// namespace and, with ServerConfig.TLS, the client certificate of
// TLS.Client.
func (s *Server) Connection() temporalclient.Connection {
	c := temporalclient.Connection{Addr: s.frontend, Namespace: s.ns}
	if s.tls != nil {
		c.TLS = s.tls.Client
	}
	return c
}

// Namespace is the namespace the server registered.
func (s *Server) Namespace() string { return s.ns }

// UIURL is the web UI's base URL, e.g. http://127.0.0.1:8233, or "" when
// the UI is off.
func (s *Server) UIURL() string { return s.uiURL }

// Stop stops the UI and the server, checkpoints the SQLite WAL and
// releases the data folder. Safe to call more than once. The server's own
// messages are dropped from here on: while its services lose each other
// during shutdown they log warnings and "context canceled" errors that
// mean nothing.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.logMin.Set(slog.LevelError + 4) // silence: see Stop's doc
		if s.uiProxy != nil {
			_ = s.uiProxy.Close()
		}
		if s.ui != nil {
			s.ui.Stop()
		}
		_ = s.server.Stop()
		checkpoint(s.sqlCfg)
		s.unlock()
	})
}

// waitReady waits until the frontend answers conn's namespace.
func waitReady(ctx context.Context, conn temporalclient.Connection) error {
	c, err := conn.Dial(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		return fmt.Errorf("connect to the embedded frontend: %w", err)
	}
	defer c.Close()
	return poll(ctx, "namespace "+conn.Namespace, func(ctx context.Context) error {
		_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: conn.Namespace})
		return err
	})
}

// poll calls try every 100 ms until it succeeds or ctx ends.
func poll(ctx context.Context, what string, try func(context.Context) error) error {
	for {
		attempt, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := try(attempt)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last error: %v)", what, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
