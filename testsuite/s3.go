package testsuite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// VersityGWVersion is the versitygw release scripts/install-deps.sh installs
// and the S3 harness runs.
const VersityGWVersion = "v1.8.0"

// S3Region is the region every harness S3 server signs with.
const S3Region = "us-east-1"

// S3Options configures StartS3Server.
type S3Options struct {
	// Dir is the parent folder of a new server folder; "" means
	// os.TempDir().
	Dir string
	// Port is the TCP port on 127.0.0.1; 0 picks a free one (and retries
	// with another if it is taken before versitygw binds it).
	Port int
	// Bucket is the bucket created at start; "" means "dbtrail".
	Bucket string
	// ObjectLock creates the bucket with Object Lock (which turns
	// versioning on); the gateway then runs with --versioning-dir.
	ObjectLock bool
	// RetentionDays, with ObjectLock, sets the bucket's default retention
	// (GOVERNANCE mode) to that many days: every new object version is
	// retained, so deleting it is refused. 0 leaves objects deletable.
	RetentionDays int
}

// S3Server is one versitygw gateway with a posix backend, started by
// StartS3Server. Its exported fields are set at start and must not be
// changed. Methods are safe for concurrent use.
type S3Server struct {
	Endpoint  string // http://127.0.0.1:<port>
	Port      int
	Bucket    string
	Region    string // S3Region
	AccessKey string // root access key, random
	SecretKey string // root secret key, random
	// Dir holds data/ (the buckets), versions/ (with ObjectLock),
	// credentials (a shared credentials file, 0600) and gateway.log.
	Dir string

	opts S3Options
	bin  string
	keep bool // Stop keeps Dir (StartPersistentS3)

	mu      sync.Mutex
	proc    *process // nil when not running
	stopped bool
}

// StartS3Server starts versitygw (VersityGWVersion) on 127.0.0.1 with a
// posix backend in a new folder, root credentials passed in its environment
// (ROOT_ACCESS_KEY, ROOT_SECRET_KEY; never in argv), waits until it
// answers, and creates opts.Bucket. On failure nothing is left running and
// the folder is removed; the error carries the gateway log's tail. The
// binary is looked up with FindVersityGW; Install is not run. ctx bounds
// the start only: call Stop.
func StartS3Server(ctx context.Context, opts S3Options) (*S3Server, error) {
	bin, err := FindVersityGW(ctx)
	if err != nil {
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	if opts.Bucket == "" {
		opts.Bucket = "dbtrail"
	}
	if opts.Dir != "" {
		if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("start versitygw: %w", err)
		}
	}
	dir, err := os.MkdirTemp(opts.Dir, "versitygw-")
	if err != nil {
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	s := &S3Server{Bucket: opts.Bucket, Region: S3Region, Dir: dir, opts: opts, bin: bin}
	fail := func(err error) (*S3Server, error) {
		if s.proc != nil {
			_ = s.proc.kill()
		}
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	for _, d := range []string{s.dataDir(), s.versionsDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fail(err)
		}
	}
	if err := s.makeKeys(); err != nil {
		return fail(err)
	}
	for attempt := 1; ; attempt++ {
		s.Port = opts.Port
		if s.Port == 0 {
			if s.Port, err = freePort(); err != nil {
				return fail(err)
			}
		}
		s.Endpoint = "http://127.0.0.1:" + strconv.Itoa(s.Port)
		err = s.launch(ctx)
		if err == nil {
			break
		}
		if opts.Port != 0 || attempt == 3 || !errors.Is(err, errPortInUse) {
			return fail(err)
		}
		slog.Debug("testsuite: port taken, retrying", "port", s.Port)
	}
	if err := s.CreateBucket(ctx, opts.Bucket, opts.ObjectLock, opts.RetentionDays); err != nil {
		return fail(err)
	}
	return s, nil
}

func (s *S3Server) dataDir() string     { return filepath.Join(s.Dir, "data") }
func (s *S3Server) versionsDir() string { return filepath.Join(s.Dir, "versions") }

// Log returns the path of the gateway's log (its stdout and stderr).
func (s *S3Server) Log() string { return filepath.Join(s.Dir, "gateway.log") }

// CredentialsFile returns the path of a shared credentials file (mode 0600)
// whose default profile holds the root keys.
func (s *S3Server) CredentialsFile() string { return filepath.Join(s.Dir, "credentials") }

// URL returns the dbtrail store URL of prefix in the bucket:
// s3://<bucket>/<prefix>?endpoint=...&path-style=true&region=...&credentials-file=...
func (s *S3Server) URL(prefix string) string {
	return s.BucketURL(s.Bucket, prefix)
}

// BucketURL is URL for another bucket of the server.
func (s *S3Server) BucketURL(bucket, prefix string) string {
	q := url.Values{}
	q.Set("endpoint", s.Endpoint)
	q.Set("path-style", "true")
	q.Set("region", s.Region)
	q.Set("credentials-file", s.CredentialsFile())
	return "s3://" + bucket + "/" + strings.Trim(prefix, "/") + "?" + q.Encode()
}

// Client returns an S3 client of the server with the root keys.
func (s *S3Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region:       s.Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
	})
}

// CreateBucket creates a bucket, with Object Lock (and so versioning) when
// objectLock is set, and then a default GOVERNANCE retention of
// retentionDays days when that is above 0.
func (s *S3Server) CreateBucket(ctx context.Context, bucket string, objectLock bool, retentionDays int) error {
	c := s.Client()
	in := &s3.CreateBucketInput{Bucket: aws.String(bucket)}
	if objectLock {
		if !s.opts.ObjectLock {
			return fmt.Errorf("create bucket %s: Object Lock needs a server started with S3Options.ObjectLock", bucket)
		}
		in.ObjectLockEnabledForBucket = aws.Bool(true)
	}
	if _, err := c.CreateBucket(ctx, in); err != nil {
		return fmt.Errorf("create bucket %s: %w", bucket, err)
	}
	if objectLock && retentionDays > 0 {
		_, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{
			Bucket: aws.String(bucket),
			ObjectLockConfiguration: &types.ObjectLockConfiguration{
				ObjectLockEnabled: types.ObjectLockEnabledEnabled,
				Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{
					Mode: types.ObjectLockRetentionModeGovernance,
					Days: aws.Int32(int32(retentionDays)),
				}},
			},
		})
		if err != nil {
			return fmt.Errorf("set default retention of bucket %s: %w", bucket, err)
		}
	}
	return nil
}

// args returns versitygw's command line: global options, then the posix
// backend and its folder. The root keys go in the environment.
func (s *S3Server) args() []string {
	args := []string{
		"--port", "127.0.0.1:" + strconv.Itoa(s.Port),
		"--region", s.Region,
		"--quiet",
		"posix",
	}
	if s.opts.ObjectLock {
		args = append(args, "--versioning-dir", s.versionsDir())
	}
	return append(args, s.dataDir())
}

// env is the gateway's environment: this process's, without variables
// that would configure the gateway, plus the root keys.
func (s *S3Server) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "VGW_") || strings.HasPrefix(kv, "ROOT_ACCESS_KEY") || strings.HasPrefix(kv, "ROOT_SECRET") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "ROOT_ACCESS_KEY="+s.AccessKey, "ROOT_SECRET_KEY="+s.SecretKey)
}

// launch starts versitygw and waits until it answers HTTP. The caller holds
// s.mu or owns s exclusively. On failure the process is killed and the
// error holds the log's tail.
func (s *S3Server) launch(ctx context.Context) error {
	logFile, err := os.OpenFile(s.Log(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	logOffset, _ := logFile.Seek(0, io.SeekEnd)
	cmd := exec.Command(s.bin, s.args()...) // not CommandContext: ctx bounds the start only
	cmd.Env = s.env()
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	err = cmd.Start()
	_ = logFile.Close()
	if err != nil {
		return fmt.Errorf("run %s: %w", s.bin, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := s.waitReady(ctx, p); err != nil {
		_ = p.kill()
		logTail := fileTail(s.Log(), logOffset)
		err = fmt.Errorf("versitygw on port %d: %w; log %s tail:\n%s", s.Port, err, s.Log(), logTail)
		if strings.Contains(logTail, "address already in use") {
			err = fmt.Errorf("%w (%w)", err, errPortInUse)
		}
		return err
	}
	s.proc = p
	return nil
}

// waitReady polls until the gateway answers any HTTP request (an anonymous
// request gets 403), the process exits, readyTimeout passes or ctx is done.
func (s *S3Server) waitReady(ctx context.Context, p *process) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	var last error
	for {
		if p.exited() {
			return fmt.Errorf("versitygw exited during start: %v", p.err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Endpoint+"/", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w (last error: %v)", ctx.Err(), last)
		case <-p.done:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop shuts the gateway down (SIGTERM, then SIGKILL after stopTimeout),
// waits for it, and removes its folder unless DBTRAIL_KEEP_DATADIR=1. It
// also works after Kill, and a second call does nothing.
func (s *S3Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	s.stopped = true
	var errs []error
	if s.proc != nil {
		if err := s.proc.stop(stopTimeout); err != nil {
			errs = append(errs, fmt.Errorf("stop versitygw on port %d: %w", s.Port, err))
		}
		s.proc = nil
	}
	if s.keep {
		return errors.Join(errs...)
	}
	if keepDataDirs() {
		slog.Info("testsuite: versitygw folder kept (DBTRAIL_KEEP_DATADIR=1)", "dir", s.Dir)
	} else if err := os.RemoveAll(s.Dir); err != nil {
		errs = append(errs, fmt.Errorf("remove folder of versitygw on port %d: %w", s.Port, err))
	}
	return errors.Join(errs...)
}

// Kill sends SIGKILL to the gateway, as a crash would, and waits for it.
// Requests in flight fail (connection reset) and new ones are refused until
// Restart. The folder stays.
func (s *S3Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return fmt.Errorf("kill versitygw on port %d: not running", s.Port)
	}
	err := s.proc.kill()
	s.proc = nil
	if err != nil {
		return fmt.Errorf("kill versitygw on port %d: %w", s.Port, err)
	}
	return nil
}

// Restart starts the gateway again on the same folder, port and keys, after
// a graceful stop if it is still running (Kill first to simulate a crash).
// Buckets and objects are kept. It fails after Stop.
func (s *S3Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return fmt.Errorf("restart versitygw on port %d: server stopped", s.Port)
	}
	if s.proc != nil {
		if err := s.proc.stop(stopTimeout); err != nil {
			return fmt.Errorf("restart versitygw on port %d: %w", s.Port, err)
		}
		s.proc = nil
	}
	if err := s.launch(ctx); err != nil {
		return fmt.Errorf("restart versitygw: %w", err)
	}
	return nil
}

// FindVersityGW returns the path of the versitygw binary: in $GOBIN, then in
// $(go env GOBIN) or the bin folder of $(go env GOPATH) (where
// scripts/install-deps.sh puts it), then on PATH.
func FindVersityGW(ctx context.Context) (string, error) {
	var dirs []string
	if gobin := os.Getenv("GOBIN"); gobin != "" {
		dirs = append(dirs, gobin)
	}
	if out, err := exec.CommandContext(ctx, "go", "env", "GOBIN", "GOPATH").Output(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) == 2 {
			if gobin := strings.TrimSpace(lines[0]); gobin != "" {
				dirs = append(dirs, gobin)
			}
			if gopath := strings.TrimSpace(lines[1]); gopath != "" {
				dirs = append(dirs, filepath.Join(filepath.SplitList(gopath)[0], "bin"))
			}
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	return "", errors.New("versitygw not found in GOBIN, GOPATH/bin or on PATH (run scripts/install-deps.sh)")
}

// fileTail returns the last lines a file got after offset.
func fileTail(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size()-offset > 16<<10 {
		offset = fi.Size() - 16<<10
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return "(log: " + err.Error() + ")"
	}
	b, _ := io.ReadAll(f)
	return tail(b, 30)
}
